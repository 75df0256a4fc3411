package standin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// redisCase is a command sequence run on a fresh store and a flushed real
// Redis; every reply must be the same, and so must the keys left. The
// expected replies are the real server's.
type redisCase struct {
	name string
	cmds [][]string
	// fmt17 marks cases whose fractional scores print as Redis 7.0's %.17g
	// does; Redis 7.2 and later print the shortest form ("0.1").
	fmt17 bool
}

// TestMatchesRedis runs every case of every command family on the store
// and on a real redis-server, through RESP2 as a Lua script sees replies.
func TestMatchesRedis(t *testing.T) {
	opt, err := redis.ParseURL(redistest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	opt.Protocol = 2 // the replies a Lua script sees are RESP2's
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	version := serverVersion(t, rdb)
	t.Logf("redis-server %s", version)
	for _, tc := range slices.Concat(keyCases, hashCases, sortedSetCases, listCases, errorCases) {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fmt17 && !redis70(version) {
				t.Skipf("redis-server %s does not print scores with %%.17g as Redis 7.0 does", version)
			}
			if err := rdb.FlushDB(t.Context()).Err(); err != nil {
				t.Fatal(err)
			}
			s := New()
			for _, cmd := range tc.cmds {
				compare(t, cmd, rdb.Do(t.Context(), anys(cmd)...), s)
			}
			// The keys left, emptied ones deleted, must be the same too.
			keys, err := rdb.Keys(t.Context(), "*").Result()
			if err != nil {
				t.Fatal(err)
			}
			mine := []string{}
			for _, k := range s.Keys() {
				mine = append(mine, k.Name)
			}
			sort.Strings(keys)
			if diff := cmp.Diff(keys, mine); diff != "" {
				t.Errorf("keys left differ (-redis +store):\n%s", diff)
			}
		})
	}
}

// compare runs cmd on the store and reports a reply other than Redis's.
func compare(t *testing.T, cmd []string, real *redis.Cmd, s *Store) {
	t.Helper()
	want := normReply(real.Result())
	got := normReply(s.Do(cmd[0], cmd[1:]))
	if strings.EqualFold(cmd[0], "HGETALL") {
		// Redis gives a small hash's fields in insertion order, the store
		// sorted; neither order is promised.
		want, got = sortPairs(want), sortPairs(got)
	}
	if strings.EqualFold(cmd[0], "PTTL") && sameTTL(got, want) {
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%q: store differs from Redis (-redis +store):\n%s", cmd, diff)
	}
}

func anys(cmd []string) []any {
	out := make([]any, len(cmd))
	for i, a := range cmd {
		out[i] = a
	}
	return out
}

func serverVersion(t *testing.T, rdb *redis.Client) string {
	info, err := rdb.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v
		}
	}
	return ""
}

// storeErr is an error reply, from either side.
type storeErr string

// normReply normalises a reply into nil, int64, string, []any or
// storeErr, whichever side it came from.
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
	case Status:
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
