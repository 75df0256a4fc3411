package conformance

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// storeCase is a command sequence run on a fresh store and a flushed real
// Redis; every reply must be the same, and so must the keys left.
type storeCase struct {
	name string
	cmds [][]string
	// fmt17 marks cases whose fractional scores print as Redis 7.0's %.17g
	// does; Redis 7.2 and later print the shortest form ("0.1").
	fmt17 bool
}

var storeCases = []storeCase{
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
	{name: "zadd", cmds: [][]string{
		{"ZADD", "z", "1", "a"},
		{"ZADD", "z", "2", "b", "1", "a", "3", "c"},
		{"ZADD", "z", "1", "a", "2", "a"},
		{"ZSCORE", "z", "a"},
		{"ZCARD", "z"},
		{"ZADD", "z", "1"},
		{"ZADD", "z"},
		{"ZADD", "z", "1", "a", "2"},
		{"ZADD", "z", "x", "a"},
		{"ZADD", "z", "1", "a", "b", "2"},
		{"ZADD", "z", "nan", "a"},
		{"ZADD", "z", " 1", "a"},
		{"ZADD", "z", "1 ", "a"},
		{"ZADD", "z", "", "a"},
		{"ZADD", "z", "1e400", "a"},
		{"ZADD", "z", "-1e400", "a"},
		{"ZADD", "z", "1e-400", "a"},
		{"ZADD", "z", "1_0", "a"},
		{"ZADD", "z", "1e", "a"},
		{"ZADD", "z", "0x", "a"},
		{"ZADD", "z", "0x10", "h"},
		{"ZADD", "z", "0x1.8p1", "h2"},
		{"ZADD", "z", ".5", "d"},
		{"ZADD", "z", "5.", "e"},
		{"ZADD", "z", "+5", "f"},
		{"ZADD", "z", "-0", "g"},
		{"ZADD", "z", "1E2", "g2"},
		{"ZADD", "z", "inf", "i", "-inf", "j", "+INF", "k", "-Infinity", "l"},
		{"ZADD", "z", "5e-324", "m"},
		{"ZRANGE", "z", "0", "-1", "WITHSCORES"},
		{"ZSCORE", "z", "g"},
		{"ZSCORE", "z", "i"},
		{"ZSCORE", "z", "j"},
		{"ZSCORE", "z", "nope"},
		{"ZSCORE", "nokey", "a"},
		{"ZCARD", "z"},
		{"ZCARD", "nokey"},
		{"TYPE", "z"},
		{"PTTL", "z"},
	}},
	{name: "score formatting", cmds: [][]string{
		{"ZADD", "z", "1700006400000", "a", "9007199254740991", "b", "1.5", "c",
			"-1700006400000", "d", "-2.25", "e", "1e20", "f", "100000000000000000", "g",
			"3.0", "h", "-9007199254740991", "i", "4503599627370496", "j", "0.5", "k"},
		{"ZRANGE", "z", "0", "-1", "WITHSCORES"},
		{"ZSCORE", "z", "a"},
		{"ZSCORE", "z", "b"},
		{"ZSCORE", "z", "c"},
		{"ZRANGEBYSCORE", "z", "1700006400000", "+inf", "WITHSCORES"},
	}},
	{name: "score formatting %.17g", fmt17: true, cmds: [][]string{
		{"ZADD", "z", "0.1", "a", "1e-5", "b", "123456789012345678", "c", "1.7000064000001e12", "d"},
		{"ZRANGE", "z", "0", "-1", "WITHSCORES"},
		{"ZSCORE", "z", "a"},
	}},
	{name: "equal scores", cmds: [][]string{
		{"ZADD", "z", "1", "x", "1", "aa", "1", "B", "1", "", "1", "a\xff", "1", "a", "0", "zz", "2", "A"},
		{"ZRANGE", "z", "0", "-1"},
		{"ZRANGE", "z", "0", "-1", "WITHSCORES"},
		{"ZRANGEBYSCORE", "z", "1", "1"},
		{"ZRANGEBYSCORE", "z", "1", "1", "LIMIT", "2", "3"},
		{"ZADD", "z", "1", "zz"},
		{"ZRANGE", "z", "-3", "-1"},
	}},
	{name: "zrange", cmds: [][]string{
		{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"},
		{"ZRANGE", "z", "0", "-1"},
		{"ZRANGE", "z", "1", "2"},
		{"ZRANGE", "z", "-2", "-1"},
		{"ZRANGE", "z", "-100", "100"},
		{"ZRANGE", "z", "2", "1"},
		{"ZRANGE", "z", "5", "10"},
		{"ZRANGE", "z", "-1", "-1"},
		{"ZRANGE", "z", "0", "-5"},
		{"ZRANGE", "z", "-5", "0"},
		{"ZRANGE", "z", "0", "0", "WITHSCORES"},
		{"ZRANGE", "z", "0", "1", "withscores", "WithScores"},
		{"ZRANGE", "z", "a", "1"},
		{"ZRANGE", "z", "01", "2"},
		{"ZRANGE", "z", "0", "1", "foo"},
		{"ZRANGE", "z", "a", "b", "foo"},
		{"ZRANGE", "z", "0", "1", "LIMIT", "0", "1"},
		{"ZRANGE", "z", "0", "1", "LIMIT", "0", "-1"},
		{"ZRANGE", "z", "0", "1", "LIMIT", "0"},
		{"ZRANGE", "z", "0", "1", "LIMIT", "x", "1"},
		{"ZRANGE", "z", "0"},
		{"ZRANGE", "nokey", "0", "-1"},
		{"ZRANGE", "nokey", "0", "-1", "WITHSCORES"},
	}},
	{name: "zrangebyscore", cmds: [][]string{
		{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"},
		{"ZRANGEBYSCORE", "z", "-inf", "+inf"},
		{"ZRANGEBYSCORE", "z", "-inf", "inf", "WITHSCORES"},
		{"ZRANGEBYSCORE", "z", "(1", "(3"},
		{"ZRANGEBYSCORE", "z", "(1", "3"},
		{"ZRANGEBYSCORE", "z", "1", "(3"},
		{"ZRANGEBYSCORE", "z", "(2", "(2"},
		{"ZRANGEBYSCORE", "z", "2", "(2"},
		{"ZRANGEBYSCORE", "z", "2", "2"},
		{"ZRANGEBYSCORE", "z", "3", "1"},
		{"ZRANGEBYSCORE", "z", "-inf", "(2", "WITHSCORES"},
		{"ZRANGEBYSCORE", "z", "(4", "+inf"},
		{"ZRANGEBYSCORE", "z", "(-inf", "(+inf"},
		{"ZRANGEBYSCORE", "z", "1.5", "3.5"},
		{"ZRANGEBYSCORE", "z", "(", "(3"},
		{"ZRANGEBYSCORE", "z", "", "2"},
		{"ZRANGEBYSCORE", "z", " ", "2"},
		{"ZRANGEBYSCORE", "z", "( ", "2"},
		{"ZRANGEBYSCORE", "z", " 1", "2"},
		{"ZRANGEBYSCORE", "z", "\t1", "2"},
		{"ZRANGEBYSCORE", "z", "1 ", "2"},
		{"ZRANGEBYSCORE", "z", "( 1", "3"},
		{"ZRANGEBYSCORE", "z", "((1", "3"},
		{"ZRANGEBYSCORE", "z", "0x1", "0x2"},
		{"ZRANGEBYSCORE", "z", "-1e400", "1e400"},
		{"ZRANGEBYSCORE", "z", "1e-400", "1"},
		{"ZRANGEBYSCORE", "z", "nan", "1"},
		{"ZRANGEBYSCORE", "z", "1", "NaN"},
		{"ZRANGEBYSCORE", "z", "a", "b"},
		{"ZRANGEBYSCORE", "z", "-", "2"},
		{"ZRANGEBYSCORE", "z", "1", "5", "LIMIT", "1", "2"},
		{"ZRANGEBYSCORE", "z", "1", "5", "LIMIT", "-1", "1"},
		{"ZRANGEBYSCORE", "z", "1", "5", "LIMIT", "1", "-1"},
		{"ZRANGEBYSCORE", "z", "1", "5", "LIMIT", "1", "0"},
		{"ZRANGEBYSCORE", "z", "1", "5", "LIMIT", "5", "1"},
		{"ZRANGEBYSCORE", "z", "(1", "5", "LIMIT", "3", "5"},
		{"ZRANGEBYSCORE", "z", "1", "5", "WITHSCORES", "LIMIT", "0", "2"},
		{"ZRANGEBYSCORE", "z", "1", "5", "LIMIT", "0", "1", "LIMIT", "1", "1"},
		{"ZRANGEBYSCORE", "z", "1", "5", "LIMIT", "0"},
		{"ZRANGEBYSCORE", "z", "1", "5", "LIMIT", "a", "1"},
		{"ZRANGEBYSCORE", "z", "1", "5", "foo"},
		{"ZRANGEBYSCORE", "z", "a", "b", "foo"},
		{"ZRANGEBYSCORE", "z", "1", "5", "REV"},
		{"ZRANGEBYSCORE", "z", "1"},
		{"ZRANGEBYSCORE", "nokey", "0", "1"},
	}},
	{name: "zrevrangebyscore", cmds: [][]string{
		{"ZADD", "z", "1", "a", "2", "b", "2", "c", "3", "d", "1700006400000", "1700006400000:0:1"},
		{"ZREVRANGEBYSCORE", "z", "+inf", "-inf"},
		{"ZREVRANGEBYSCORE", "z", "+inf", "-inf", "WITHSCORES"},
		{"ZREVRANGEBYSCORE", "z", "+inf", "-inf", "LIMIT", "0", "1"},
		{"ZREVRANGEBYSCORE", "z", "+inf", "(2", "LIMIT", "0", "1"},
		{"ZREVRANGEBYSCORE", "z", "2", "2"},
		{"ZREVRANGEBYSCORE", "z", "(3", "(1", "LIMIT", "1", "-1"},
		{"ZREVRANGEBYSCORE", "z", "1", "3"},
		{"ZREVRANGEBYSCORE", "z", "x", "1"},
		{"ZREVRANGEBYSCORE", "nope", "+inf", "-inf"},
		{"ZREVRANGEBYSCORE", "z", "+inf"},
	}},
	{name: "infinite scores", cmds: [][]string{
		{"ZADD", "z", "inf", "a", "-inf", "b", "0", "c"},
		{"ZRANGEBYSCORE", "z", "-inf", "inf", "WITHSCORES"},
		{"ZRANGEBYSCORE", "z", "(-inf", "(inf"},
		{"ZRANGEBYSCORE", "z", "inf", "inf"},
		{"ZCOUNT", "z", "-inf", "-inf"},
		{"ZCOUNT", "z", "(-inf", "+inf"},
		{"ZSCORE", "z", "a"},
		{"ZSCORE", "z", "b"},
		{"ZREMRANGEBYSCORE", "z", "inf", "inf"},
		{"ZRANGE", "z", "0", "-1", "WITHSCORES"},
	}},
	{name: "zcount and zremrangebyscore", cmds: [][]string{
		{"ZADD", "z", "1", "a", "2", "b", "3", "c"},
		{"ZCOUNT", "z", "(1", "3"},
		{"ZCOUNT", "z", "-inf", "+inf"},
		{"ZCOUNT", "z", "3", "1"},
		{"ZCOUNT", "z", "(2", "(3"},
		{"ZCOUNT", "z", "a", "1"},
		{"ZCOUNT", "z", "1"},
		{"ZCOUNT", "nokey", "0", "1"},
		{"ZREMRANGEBYSCORE", "z", "(1", "2"},
		{"ZRANGE", "z", "0", "-1", "WITHSCORES"},
		{"ZREMRANGEBYSCORE", "z", "5", "6"},
		{"ZREMRANGEBYSCORE", "z", "x", "1"},
		{"ZREMRANGEBYSCORE", "z", "1"},
		{"ZREMRANGEBYSCORE", "nokey", "0", "1"},
		{"ZREMRANGEBYSCORE", "z", "-inf", "(3"},
		{"ZREMRANGEBYSCORE", "z", "-inf", "+inf"},
		{"EXISTS", "z"},
		{"TYPE", "z"},
		{"ZCARD", "z"},
		{"ZRANGE", "z", "0", "-1"},
		{"ZSCORE", "z", "c"},
	}},
	{name: "zrem and zremrangebyrank", cmds: [][]string{
		{"ZADD", "z", "1", "a", "2", "b", "2", "c", "3", "d", "4", "e"},
		{"PEXPIRE", "z", "100000"},
		{"ZREM", "z", "b", "nope"},
		{"ZREM", "z", "nope"},
		{"ZREM", "z"},
		{"ZREMRANGEBYRANK", "z", "0", "-4"},
		{"ZRANGE", "z", "0", "-1", "WITHSCORES"},
		{"ZREMRANGEBYRANK", "z", "0", "-10"},
		{"ZREMRANGEBYRANK", "z", "5", "9"},
		{"ZREMRANGEBYRANK", "z", "-1", "-1"},
		{"ZRANGE", "z", "0", "-1"},
		{"PTTL", "z"},
		{"ZREMRANGEBYRANK", "z", "a", "1"},
		{"ZREMRANGEBYRANK", "z", "0"},
		{"ZREMRANGEBYRANK", "nokey", "0", "-1"},
		{"ZREM", "nokey", "a"},
		{"ZREM", "z", "d"},
		{"EXISTS", "z"},
		{"SET", "s", "x"},
		{"ZREM", "s", "a"},
		{"ZREMRANGEBYRANK", "s", "0", "1"},
	}},
	{name: "zset TTL kept", cmds: [][]string{
		{"ZADD", "z", "1", "a", "2", "b"},
		{"PEXPIRE", "z", "100000"},
		{"ZADD", "z", "3", "c", "5", "a"},
		{"ZREMRANGEBYSCORE", "z", "2", "2"},
		{"PTTL", "z"},
		{"ZREMRANGEBYSCORE", "z", "-inf", "+inf"},
		{"PTTL", "z"},
		{"ZADD", "z", "1", "a"},
		{"PTTL", "z"},
		{"TYPE", "z"},
	}},
	{name: "lists", cmds: [][]string{
		{"RPUSH", "l", "a", "b", "c"},
		{"RPUSH", "l", "d"},
		{"LLEN", "l"},
		{"LRANGE", "l", "0", "-1"},
		{"LRANGE", "l", "1", "2"},
		{"LRANGE", "l", "-2", "-1"},
		{"LRANGE", "l", "-100", "100"},
		{"LRANGE", "l", "2", "1"},
		{"LRANGE", "l", "5", "10"},
		{"LRANGE", "l", "0", "0"},
		{"LRANGE", "l", "0", "-5"},
		{"LRANGE", "l", "a", "1"},
		{"LRANGE", "l", "+1", "2"},
		{"LRANGE", "nokey", "0", "-1"},
		{"LLEN", "nokey"},
		{"TYPE", "l"},
		{"PTTL", "l"},
		{"LTRIM", "l", "1", "-1"},
		{"LRANGE", "l", "0", "-1"},
		{"LTRIM", "l", "-2", "100"},
		{"LRANGE", "l", "0", "-1"},
		{"LTRIM", "nokey", "0", "1"},
		{"EXISTS", "nokey"},
		{"LTRIM", "l", "a", "1"},
		{"LTRIM", "l", "1", "0"},
		{"EXISTS", "l"},
		{"TYPE", "l"},
		{"LLEN", "l"},
		{"RPUSH", "l", "", "x", "x"},
		{"LRANGE", "l", "0", "-1"},
		{"LTRIM", "l", "-1", "-1"},
		{"LRANGE", "l", "0", "-1"},
		{"LTRIM", "l", "5", "10"},
		{"EXISTS", "l"},
	}},
	{name: "list TTL kept", cmds: [][]string{
		{"RPUSH", "l", "a", "b"},
		{"PEXPIRE", "l", "100000"},
		{"RPUSH", "l", "c"},
		{"LTRIM", "l", "0", "1"},
		{"PTTL", "l"},
		{"LTRIM", "l", "-100", "-50"},
		{"PTTL", "l"},
		{"RPUSH", "l", "z"},
		{"PTTL", "l"},
	}},
	{name: "wrong type", cmds: [][]string{
		{"SET", "s", "x"},
		{"HSET", "h", "f", "v"},
		{"ZADD", "z", "1", "a"},
		{"RPUSH", "l", "a"},
		{"HSET", "s", "f", "1"},
		{"HMGET", "z", "f"},
		{"ZREM", "h", "f"},
		{"ZREMRANGEBYRANK", "l", "0", "1"},
		{"ZADD", "s", "1", "m"},
		{"ZADD", "s", "a", "m"},
		{"ZADD", "h", "1", "m"},
		{"ZADD", "l", "1", "m"},
		{"ZRANGE", "s", "0", "1"},
		{"ZRANGE", "s", "a", "b"},
		{"ZRANGE", "l", "0", "1", "WITHSCORES"},
		{"ZRANGEBYSCORE", "s", "0", "1"},
		{"ZRANGEBYSCORE", "s", "a", "b"},
		{"ZREMRANGEBYSCORE", "h", "0", "1"},
		{"ZREMRANGEBYSCORE", "h", "a", "1"},
		{"ZCARD", "s"},
		{"ZCOUNT", "l", "0", "1"},
		{"ZSCORE", "h", "f"},
		{"RPUSH", "z", "x"},
		{"RPUSH", "s", "x"},
		{"LRANGE", "z", "0", "-1"},
		{"LRANGE", "h", "a", "1"},
		{"LLEN", "s"},
		{"LTRIM", "z", "0", "1"},
		{"LTRIM", "z", "x", "1"},
		{"GET", "z"},
		{"GET", "l"},
		{"HGET", "z", "f"},
		{"HMGET", "l", "f"},
		{"HSET", "l", "f", "v"},
		{"HMGET", "z", "a"},
		{"HGETALL", "l"},
		{"ZRANGE", "z", "0", "-1", "WITHSCORES"},
		{"LRANGE", "l", "0", "-1"},
	}},
	{name: "arity", cmds: [][]string{
		{"ZSCORE", "z"},
		{"ZSCORE", "z", "a", "b"},
		{"ZCARD"},
		{"ZCARD", "z", "x"},
		{"ZCOUNT", "z", "1"},
		{"ZCOUNT", "z", "1", "2", "3"},
		{"ZREMRANGEBYSCORE", "z", "1"},
		{"ZRANGEBYSCORE", "z"},
		{"ZRANGE", "z"},
		{"ZADD", "z", "1"},
		{"RPUSH", "l"},
		{"LRANGE", "l", "0"},
		{"LRANGE", "l", "0", "1", "2"},
		{"LLEN"},
		{"LLEN", "l", "x"},
		{"LTRIM", "l", "0"},
		{"ZREM", "z"},
		{"ZREMRANGEBYRANK", "z", "0"},
	}},
	{name: "keyspace", cmds: [][]string{
		{"SET", "s", "x"},
		{"HSET", "h", "f", "1"},
		{"ZADD", "z", "1", "a"},
		{"RPUSH", "l", "a"},
		{"TYPE", "s"},
		{"TYPE", "h"},
		{"TYPE", "z"},
		{"TYPE", "l"},
		{"TYPE", "nokey"},
		{"EXISTS", "s", "h", "z", "l", "nokey", "z"},
		{"PEXPIRE", "z", "100000"},
		{"PEXPIRE", "l", "100000"},
		{"PEXPIRE", "nokey", "100000"},
		{"PTTL", "z"},
		{"PTTL", "l"},
		{"PTTL", "h"},
		{"PTTL", "nokey"},
		{"PEXPIRE", "z", "0"},
		{"EXISTS", "z"},
		{"PEXPIRE", "l", "-5"},
		{"EXISTS", "l"},
		{"PEXPIRE", "h", "+5"},
		{"PEXPIRE", "h", "1.5"},
		{"PEXPIRE", "h", " 5"},
		{"SET", "k", "v", "PX", "abc"},
		{"SET", "k", "v", "PX", "+5"},
		{"SET", "k", "v", "PX", "0"},
		{"SET", "k", "v", "PX", "-1"},
		{"SET", "k", "v", "PX", "100000"},
		{"PTTL", "k"},
		{"RPUSH", "l", "b"},
		{"ZADD", "z", "2", "b"},
		{"DEL", "s", "h", "nokey", "z", "l"},
		{"EXISTS", "s", "h", "z", "l"},
	}},
}

// storeReply normalises a reply into nil, int64, string, []any or
// storeErr, whichever side it came from.
type storeErr string

func normReply(r any, err error) any {
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return storeErr(err.Error())
	}
	switch r := r.(type) {
	case nil, int64, string:
		return r
	case status:
		return string(r) // go-redis reads a status reply as a string
	case []any:
		out := make([]any, len(r))
		for i, x := range r {
			out[i] = normReply(x, nil)
		}
		return out
	}
	return fmt.Sprintf("unexpected reply %T %v", r, r)
}

func TestStoreMatchesRedis(t *testing.T) {
	opt, err := redis.ParseURL(redistest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	opt.Protocol = 2 // the replies a Lua script sees are RESP2's
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	ctx := context.Background()
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	version := ""
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			version = v
		}
	}
	t.Logf("redis-server %s", version)
	for _, tc := range storeCases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fmt17 && !redis70(version) {
				t.Skipf("redis-server %s does not print scores with %%.17g as Redis 7.0 does", version)
			}
			if err := rdb.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			s := newStore()
			for _, cmd := range tc.cmds {
				args := make([]any, len(cmd))
				for i, a := range cmd {
					args[i] = a
				}
				want := normReply(rdb.Do(ctx, args...).Result())
				got := normReply(s.do(cmd[0], cmd[1:]))
				if strings.EqualFold(cmd[0], "HGETALL") {
					// Redis gives a small hash's fields in insertion order,
					// the store sorted; neither order is promised.
					want, got = sortPairs(want), sortPairs(got)
				}
				if strings.EqualFold(cmd[0], "PTTL") && sameTTL(got, want) {
					continue
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%q: store differs from Redis (-redis +store):\n%s", cmd, diff)
				}
			}
			// The keys left, emptied ones deleted, must be the same too.
			keys, err := rdb.Keys(ctx, "*").Result()
			if err != nil {
				t.Fatal(err)
			}
			mine := []string{}
			for k := range s.keys {
				mine = append(mine, k)
			}
			sort.Strings(keys)
			sort.Strings(mine)
			if diff := cmp.Diff(keys, mine); diff != "" {
				t.Errorf("keys left differ (-redis +store):\n%s", diff)
			}
		})
	}
}

// sortPairs sorts a flat field-value array by field.
func sortPairs(r any) any {
	flat, ok := r.([]any)
	if !ok || len(flat)%2 != 0 {
		return r
	}
	type pair struct{ f, v any }
	pairs := make([]pair, 0, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		pairs = append(pairs, pair{flat[i], flat[i+1]})
	}
	sort.Slice(pairs, func(i, j int) bool { return fmt.Sprint(pairs[i].f) < fmt.Sprint(pairs[j].f) })
	out := make([]any, 0, len(flat))
	for _, p := range pairs {
		out = append(out, p.f, p.v)
	}
	return out
}

// sameTTL accepts a real server's TTL that has ticked down by under a
// second from the frozen store's.
func sameTTL(store, real any) bool {
	s, ok1 := store.(int64)
	r, ok2 := real.(int64)
	return ok1 && ok2 && s > 0 && r <= s && r > s-1000
}

// redis70 tells whether version is a Redis 7.0 or older, which prints
// double replies with %.17g.
func redis70(version string) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return err1 == nil && err2 == nil && (major < 7 || major == 7 && minor < 2)
}

func TestStoreRender(t *testing.T) {
	s := newStore()
	for _, cmd := range [][]string{
		{"SET", "s", "x y"},
		{"HSET", "h", "g", "2", "f", "1"},
		{"ZADD", "z", "2", "b", "1", "a", "1.5", "c w", "1700006400000", "d"},
		{"RPUSH", "l", "a b", "c", ""},
		{"PEXPIRE", "l", "5000"},
	} {
		if _, err := s.do(cmd[0], cmd[1:]); err != nil {
			t.Fatal(cmd, err)
		}
	}
	got, err := (&LuaTarget{store: s}).Keys()
	if err != nil {
		t.Fatal(err)
	}
	want := []KeyTTL{
		{Key: "h", TTL: -1, Content: "hash[f 1 g 2]"},
		{Key: "l", TTL: 5000, Content: `list ["a b" "c" ""]`},
		{Key: "s", TTL: -1, Content: "string x y"},
		{Key: "z", TTL: -1, Content: `zset ["a" "1" "c w" "1.5" "b" "2" "d" "1700006400000"]`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Keys (-want +got):\n%s", diff)
	}
	if r := s.render("nokey"); r != "" {
		t.Errorf("render of an absent key = %q", r)
	}
}
