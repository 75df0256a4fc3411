package redislimit_test

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/kit"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// scriptEvent is an event after which the server serving a client no
// longer knows the scripts it ran: setup returns the limiter's client,
// the event, and a client of the server that serves after it.
type scriptEvent struct {
	name  string
	setup func(t *testing.T) (rdb *redis.Client, event func() *redis.Client)
}

var scriptEvents = []scriptEvent{
	{"SCRIPT FLUSH", func(t *testing.T) (*redis.Client, func() *redis.Client) {
		_, rdb := newClient(t)
		return rdb, func() *redis.Client {
			if err := rdb.ScriptFlush(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
			return rdb
		}
	}},
	// A crash (SIGKILL) and a restart with the data (an append-only
	// file, fsync'd at every write) but no script cache.
	{"SIGKILL and restart", func(t *testing.T) (*redis.Client, func() *redis.Client) {
		srv, rdb := newClient(t, "--appendonly", "yes", "--appendfsync", "always")
		return rdb, func() *redis.Client {
			srv.Restart()
			return rdb
		}
	}},
	// The master dies and its replica, which never ran a script (Redis
	// replicates a script's writes, not the script), is promoted.
	{"failover to a replica", func(t *testing.T) (*redis.Client, func() *redis.Client) {
		master, replica := replicaPair(t)
		var addr atomic.Value
		addr.Store(master.Addr())
		rdb := switchable(t, &addr)
		return rdb, func() *redis.Client {
			failover(t, rdb, &addr, master, replica)
			return plainClient(t, replica.Addr())
		}
	}},
}

// TestNoScript: after each event the server answers the next EVALSHA
// with NOSCRIPT. With the EVAL fallback refused (a client hook), the
// first step after the event fails, writing nothing; with it, the same
// step and the rest are decided as the oracle decides them, from the
// state kept through the event. Each event is run through Limiter.Limit
// and through a bound handle.
func TestNoScript(t *testing.T) {
	gcra, _ := kit.LookupScripts(burst.Algorithm())
	for _, ev := range scriptEvents {
		for _, way := range ways {
			t.Run(ev.name+"/"+way.name, func(t *testing.T) {
				t.Parallel()
				noScript(t, ev, way.via, gcra)
			})
		}
	}
}

// noScript is TestNoScript of the event ev, deciding by via's decider.
func noScript(t *testing.T, ev scriptEvent, via func(*redislimit.Limiter) decider, gcra *kit.Scripts) {
	rdb, event := ev.setup(t)
	sw := &evalSwitch{}
	rdb.AddHook(sw)
	lim, m := via(newLimiter(t, rdb, redislimit.Options{})), burstModel(t)
	mustTrace(t, lim, m, 0, 60)
	known := func(c *redis.Client) []bool {
		return c.ScriptExists(context.Background(), gcra.Decide.SHA1).Val()
	}
	if got := known(rdb); len(got) != 1 || !got[0] {
		t.Fatalf("before the event, SCRIPT EXISTS gcra: %v; want it", got)
	}
	serving := event()
	if got := known(serving); len(got) != 1 || got[0] {
		t.Fatalf("after the event, SCRIPT EXISTS gcra: %v; want not (the test would not exercise NOSCRIPT)", got)
	}
	noscript := errorCount(t, serving, "NOSCRIPT")
	sw.refuse.Store(true)
	_, _, stopped, err := trace(t, lim, m, 60, 60)
	if stopped != 60 || !errors.Is(err, errEvalRefused) || !errors.Is(err, limitspec.ErrUnavailable) {
		t.Fatalf("without the EVAL fallback: step %d failed with %v; want step 60 to fail with the refused EVAL", stopped, err)
	}
	if n := errorCount(t, serving, "NOSCRIPT") - noscript; n != 1 {
		t.Fatalf("the refused step was answered NOSCRIPT %d times; want 1", n)
	}
	sw.refuse.Store(false)
	mustTrace(t, lim, m, 60, 60) // step 60 again: the refused call wrote nothing
	if n := errorCount(t, serving, "NOSCRIPT") - noscript; n < 2 {
		t.Errorf("with the fallback, no further NOSCRIPT was answered (%d in all): the reload path did not run", n)
	}
}

// commandCalls is how often the server of rdb has run the command cmd
// (INFO commandstats).
func commandCalls(t *testing.T, rdb *redis.Client, cmd string) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`cmdstat_` + regexp.QuoteMeta(cmd) + `:calls=(\d+)`).FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestFunctionsAcrossEvents: with Options.Functions, New loads the library,
// calls run by FCALL (never EVALSHA), the library is loaded again after
// FUNCTION FLUSH, it is replicated, and decisions stay the oracle's
// through a failover to the replica.
func TestFunctionsAcrossEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	master, replica := replicaPair(t)
	var addr atomic.Value
	addr.Store(master.Addr())
	rdb := switchable(t, &addr)
	lim, m := newLimiter(t, rdb, redislimit.Options{Functions: true}), burstModel(t)
	if err := redislimit.LibrariesLoaded(ctx, rdb); err != nil {
		t.Fatalf("after New: %v", err)
	}
	fcalls := commandCalls(t, rdb, "fcall")
	mustTrace(t, lim, m, 0, 40)
	if n, e := commandCalls(t, rdb, "fcall")-fcalls, commandCalls(t, rdb, "evalsha")+commandCalls(t, rdb, "eval"); n != 40 || e != 0 {
		t.Errorf("40 decisions ran %d FCALLs and %d EVALSHA or EVAL; want 40 and 0", n, e)
	}
	if err := rdb.FunctionFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := redislimit.LibrariesLoaded(ctx, rdb); err == nil {
		t.Fatal("LibrariesLoaded after FUNCTION FLUSH: nil; want the missing library")
	}
	mustTrace(t, lim, m, 40, 40)
	if err := redislimit.LibrariesLoaded(ctx, rdb); err != nil {
		t.Fatalf("after FUNCTION FLUSH and a call: %v", err)
	}
	if n, err := rdb.Wait(ctx, 1, 5000).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d replicas, %v", n, err)
	}
	if err := redislimit.LibrariesLoaded(ctx, plainClient(t, replica.Addr())); err != nil {
		t.Fatalf("the replica does not hold the library the master reloaded: %v", err)
	}
	failover(t, rdb, &addr, master, replica)
	mustTrace(t, lim, m, 80, 40)
}
