package standin

// hashCases are command sequences of the hash commands, run on a
// store and on a real Redis by TestMatchesRedis.
var hashCases = []redisCase{
	{name: "hash TTL kept", cmds: [][]string{
		{"HSET", "h", "a", "1", "b", "2"},
		{"PEXPIRE", "h", "100000"},
		{"HSET", "h", "a", "3"},
		{"HSET", "h", "c", "3"},
		{"PTTL", "h"},
		{"HGETALL", "h"},
		{"DEL", "h"},
		{"HSET", "h", "a", "1"},
		{"PTTL", "h"},
	}},
}
