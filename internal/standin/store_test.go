package standin

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func run(t *testing.T, s *Store, cmds ...[]string) {
	t.Helper()
	for _, cmd := range cmds {
		if _, err := s.Do(cmd[0], cmd[1:]); err != nil {
			t.Fatal(cmd, err)
		}
	}
}

func TestKeys(t *testing.T) {
	s := New()
	run(t, s,
		[]string{"SET", "s", "x y"},
		[]string{"HSET", "h", "g", "2", "f", "1"},
		[]string{"ZADD", "z", "2", "b", "1", "a", "1.5", "c w", "1700006400000", "d"},
		[]string{"RPUSH", "l", "a b", "c", ""},
		[]string{"PEXPIRE", "l", "5000"},
	)
	want := []Key{
		{Name: "h", TTL: -1, Content: "hash[f 1 g 2]"},
		{Name: "l", TTL: 5000, Content: `list ["a b" "c" ""]`},
		{Name: "s", TTL: -1, Content: "string x y"},
		{Name: "z", TTL: -1, Content: `zset ["a" "1" "c w" "1.5" "b" "2" "d" "1700006400000"]`},
	}
	if diff := cmp.Diff(want, s.Keys()); diff != "" {
		t.Errorf("Keys (-want +got):\n%s", diff)
	}
}

// TestWork counts commands, their arguments with the name, and the
// elements of the arrays returned; a command refused for its arguments
// counts, an unknown one does not.
func TestWork(t *testing.T) {
	s := New()
	s.Do("RPUSH", []string{"l", "a", "b", "c"})
	s.Do("LRANGE", []string{"l", "0", "-1"})
	s.Do("LRANGE", []string{"l", "x", "-1"})
	s.Do("NOSUCH", []string{"l"})
	want := Work{Commands: 3, Args: 5 + 4 + 4, Returned: 3}
	if got := s.Work(); got != want {
		t.Errorf("Work = %+v, want %+v", got, want)
	}
}

// TestTime: TIME is the wall clock, seconds and microseconds as decimal
// strings (the Redis reference, TIME).
func TestTime(t *testing.T) {
	before := time.Now().UnixMicro()
	r, err := New().Do("time", nil)
	after := time.Now().UnixMicro()
	parts, ok := r.([]any)
	if err != nil || !ok || len(parts) != 2 {
		t.Fatalf("TIME = %#v, %v", r, err)
	}
	sec, err1 := strconv.ParseInt(parts[0].(string), 10, 64)
	us, err2 := strconv.ParseInt(parts[1].(string), 10, 64)
	if err1 != nil || err2 != nil || us < 0 || us >= 1e6 {
		t.Fatalf("TIME = %q", parts)
	}
	if at := sec*1e6 + us; at < before || at > after {
		t.Errorf("TIME = %d µs, not within [%d, %d]", at, before, after)
	}
}

// TestUnsupported: what the stand-in does not implement is refused,
// never answered otherwise than Redis would.
func TestUnsupported(t *testing.T) {
	for _, cmd := range [][]string{
		{"ZADD", "z", "NX", "1", "a"},
		{"ZADD", "z", "incr", "1", "a"},
		{"ZRANGE", "z", "0", "1", "REV"},
		{"ZRANGE", "z", "(1", "5", "BYSCORE", "LIMIT", "0", "1"},
		{"ZRANGE", "z", "0", "1", "bylex"},
		{"SET", "k", "v", "EX", "10"},
		{"SET", "k", "v", "NX"},
		{"SET", "k", "v", "PX", "10", "KEEPTTL"},
		{"PEXPIRE", "k", "10", "NX"},
	} {
		_, err := New().Do(cmd[0], cmd[1:])
		if err == nil || !strings.HasPrefix(err.Error(), "ERR the stand-in does not support "+strings.ToUpper(cmd[0])+" ") {
			t.Errorf("%q: error %v, want the stand-in's refusal", cmd, err)
		}
	}
	if _, err := New().Do("INCR", []string{"k"}); err == nil || err.Error() != "ERR unknown command 'INCR'" {
		t.Errorf("INCR: error %v, want unknown command", err)
	}
}
