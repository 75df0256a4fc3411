package main

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/kit"
	"github.com/redis/go-redis/v9"
)

// TestWithoutChecks checks the assignments that replace a script's check
// of the common call, by ARGV's order as kit.Scripts documents it:
// now_ms, cost, force, the inputs (strings), then the parameters.
func TestWithoutChecks(t *testing.T) {
	for _, c := range []struct {
		lim  limitspec.Limit
		want []string
	}{
		{gcraLimit, []string{"now = ARGV[1] + 0", "cost = ARGV[2] + 0", "force = ARGV[3] == '1'",
			"burst = ARGV[4] + 0", "rate = ARGV[5] + 0", "period_ms = ARGV[6] + 0", "checked = true"}},
		{limitspec.MetaWindow{Limit: 3, Window: time.Hour}, []string{"now = ARGV[1] + 0", "cost = ARGV[2] + 0", "force = ARGV[3] == '1'",
			"meta = ARGV[4]", "limit = ARGV[5] + 0", "window_ms = ARGV[6] + 0", "checked = true"}},
	} {
		s, _ := kit.LookupScripts(c.lim.Algorithm())
		src, err := withoutChecks(s)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(src, "\n")
		at := slices.Index(lines, "local checked = false")
		if at < 0 || !slices.Equal(lines[at+1:at+1+len(c.want)], c.want) || slices.Contains(lines, "repeat") {
			t.Errorf("%s: after local checked = false:\n%s\nwant\n%s", s.ID.Name, strings.Join(lines[at+1:at+1+len(c.want)], "\n"), strings.Join(c.want, "\n"))
		}
	}
	if _, err := withoutChecks(&kit.Scripts{Decide: kit.Script{Source: "return 1"}}); err == nil {
		t.Error("a script with no check block: no error")
	}
}

// TestPartsScripts checks, on a throwaway redis-server (skipped without
// one), the scripts the parts figure counts beside the real ones, for
// every algorithm and peer of the figure with a limit of 3 (so that
// requests are denied too): the script without its checks replies as
// the real one on the same calls, and the replay of a call's commands
// runs the same commands as the real script did on that call.
func TestPartsScripts(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	srv, err := startServer("redis-server")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	rdb := redis.NewClient(&redis.Options{Addr: srv.addr})
	defer rdb.Close()
	ctx := context.Background()
	o := instrOptions{Keys: 2, Decisions: 4, Depth: 2}
	for _, lim := range []limitspec.Limit{
		limitspec.GCRA{Burst: 3, Rate: 1, Period: time.Hour},
		limitspec.FixedWindow{Limit: 3, Window: time.Hour},
		limitspec.SlidingLog{Limit: 3, Window: time.Hour},
	} {
		real, err := limitspecDecider(lim, false, byEvalSHA)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := kit.LookupScripts(lim.Algorithm())
		unchecked, err := withoutChecks(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameReplies(ctx, rdb, real, real.running("without its checks", unchecked), o); err != nil {
			t.Error(err)
		}
	}
	subjects, err := partsSubjects()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subjects {
		checkReplay(ctx, t, rdb, srv.addr, s)
	}
}

// checkReplay checks that s's replay of the commands of a call on an
// existing key runs them again, as MONITOR shows (the arguments of the
// call read from its ARGV, as replayLua writes them).
func checkReplay(ctx context.Context, t *testing.T, rdb *redis.Client, addr string, s partsSubject) {
	t.Helper()
	now := fixedClock(0)
	var seen [2]monitoredCall
	for i := range seen {
		d := s.real
		if i == 1 {
			d = s.real.running("its commands", replayLua(seen[0], s.timed)+s.reply)
		}
		if err := freshLua(ctx, rdb); err != nil {
			t.Fatal(err)
		}
		if err := d.load(ctx, rdb); err != nil {
			t.Fatal(err)
		}
		if err := drive(ctx, rdb, d, decisions{IDs: []string{"user:1"}, To: 1, Clients: 1, Depth: 1, Clock: fixedClock}); err != nil {
			t.Fatal(err)
		}
		var err error
		if seen[i], err = monitor(ctx, addr, rdb, d, "user:1", now.Add(time.Millisecond)); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
	}
	if len(seen[0].Ran) == 0 || replayLua(seen[0], s.timed) != replayLua(seen[1], s.timed) {
		t.Errorf("%s: the script ran %q, its replay %q", s.real.Name, seen[0].Ran, seen[1].Ran)
	}
}
