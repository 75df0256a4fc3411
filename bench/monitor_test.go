package main

import (
	"slices"
	"testing"
)

// TestParseMonitorLine reads MONITOR's lines as Redis writes them
// (sdscatrepr's quoting), a script's command and a client's.
func TestParseMonitorLine(t *testing.T) {
	for _, c := range []struct {
		line       string
		fromScript bool
		args       []string
	}{
		{`+1700000000.000001 [0 lua] "GET" "{user:1}:gc:1000000:60000"`, true, []string{"GET", "{user:1}:gc:1000000:60000"}},
		{`+1700000000.000002 [0 127.0.0.1:5000] "evalsha" "ab" "1" "k" "" "1"`, false, []string{"evalsha", "ab", "1", "k", "", "1"}},
		{`+1700000000.000003 [12 lua] "SET" "a\"b\\c" "\n\r\t\a\b" "\x00\xff"`, true, []string{"SET", `a"b\c`, "\n\r\t\a\b", "\x00\xff"}},
		{`+1700000000.000004 [0 unix:/tmp/redis.sock] "TIME"`, false, []string{"TIME"}},
	} {
		fromScript, args, err := parseMonitorLine(c.line)
		if err != nil || fromScript != c.fromScript || !slices.Equal(args, c.args) {
			t.Errorf("parseMonitorLine(%q) = %v, %q, %v; want %v, %q", c.line, fromScript, args, err, c.fromScript, c.args)
		}
	}
	for _, bad := range []string{
		`+OK`,
		`+1700000000.000001 [0 lua] GET`,
		`+1700000000.000001 [0 lua] "GET`,
		`+1700000000.000001 [0 lua] "\q"`,
		`+1700000000.000001 [0 lua] "\xzz"`,
		`-ERR no`,
	} {
		if _, args, err := parseMonitorLine(bad); err == nil {
			t.Errorf("parseMonitorLine(%q) = %q, want an error", bad, args)
		}
	}
}

// TestLuaString writes Lua literals: printable ASCII as it is, a quote,
// a backslash and other bytes by their decimal code (Lua 5.1's \ddd).
func TestLuaString(t *testing.T) {
	for in, want := range map[string]string{
		"":                `''`,
		"1700000000000:5": `'1700000000000:5'`,
		`it's \ "x"`:      `'it\039s \092 "x"'`,
		"a\nb\x00\xff":    `'a\010b\000\255'`,
	} {
		if got := luaString(in); got != want {
			t.Errorf("luaString(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestReplayLua writes a script's commands back as Lua: the call's keys
// and arguments by reference, values derived from now_ms (when ARGV[1]
// is now_ms) from ARGV[1], any other value as a constant.
func TestReplayLua(t *testing.T) {
	m := monitoredCall{
		Call: []string{"evalsha", "ab", "2", "{u}:sl", "{u}:sl:sum", "1700000008000", "1", "0", "100000", "60000"},
		Ran: [][]string{
			{"ZCARD", "{u}:sl"},
			{"ZCOUNT", "{u}:sl", "-inf", "1699999948000"},
			{"ZADD", "{u}:sl", "1700000008000", "1700000008000:000000:1:5"},
			{"PSETEX", "{u}:sl:sum", "120000", "5:1700000008000"},
			{"PEXPIRE", "{u}:sl", "60000"},
		},
	}
	timed := `redis.call('ZCARD', KEYS[1])
redis.call('ZCOUNT', KEYS[1], '-inf', '1699999948000')
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1] .. ':000000:1:5')
redis.call('PSETEX', KEYS[2], '120000', '5:1700000008000')
redis.call('PEXPIRE', KEYS[1], ARGV[5])
`
	if got := replayLua(m, true); got != timed {
		t.Errorf("replayLua, timed:\n%s\nwant\n%s", got, timed)
	}
	untimed := `redis.call('ZCARD', KEYS[1])
redis.call('ZCOUNT', KEYS[1], '-inf', '1699999948000')
redis.call('ZADD', KEYS[1], ARGV[1], '1700000008000:000000:1:5')
redis.call('PSETEX', KEYS[2], '120000', '5:1700000008000')
redis.call('PEXPIRE', KEYS[1], ARGV[5])
`
	if got := replayLua(m, false); got != untimed {
		t.Errorf("replayLua, not timed:\n%s\nwant\n%s", got, untimed)
	}
}
