package redisimpl_test

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/internal/oracle"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/lua"
	"github.com/limitspec/limitspec/redisimpl"
	"github.com/redis/go-redis/v9"
)

// gcraParams are the limiter of the event tests: 5 at once, then 10 per
// second.
var gcraParams = goimpl.GCRAParams{Burst: 5, Rate: 10, PeriodMs: 1000}

// t0 is the first time of a trace.
const t0 = 1_700_000_000_000

// trace replays n requests on three keys, 37 ms apart, costs 0 to 3 with
// every seventh forced, starting at step from, on lim and on the oracle,
// and fails at the first result that differs. Costs high enough that the
// burst runs out make both admissions and denials.
func trace(t *testing.T, ctx context.Context, lim *redisimpl.Limiter, model oracle.Model, from, n int) (allowed, denied int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		key := fmt.Sprintf("user%d", i%3)
		now, cost, force := int64(t0+37*i), int64(i%4), i%7 == 6
		got, err := lim.Limit(ctx, limitspec.Request{Key: key, Cost: cost, Now: time.UnixMilli(now), Force: force})
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		decide := model.Decide
		if force {
			decide = model.Force
		}
		want, err := decide(key, now, cost, "")
		if err != nil {
			t.Fatal(err)
		}
		if o := oracle.Result(got.Result); o != want {
			t.Fatalf("step %d (%s, now %d, cost %d, force %v): redisimpl %+v, oracle %+v", i, key, now, cost, force, o, want)
		}
		if got.Allowed {
			allowed++
		} else {
			denied++
		}
	}
	return allowed, denied
}

func newModel(t *testing.T) oracle.Model {
	m, err := oracle.New("gcra", map[string]int64{"burst": gcraParams.Burst, "rate": gcraParams.Rate, "period_ms": gcraParams.PeriodMs})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// errorCount is how often s answered an error of code since it started
// (INFO errorstats).
func errorCount(t *testing.T, rdb *redis.Client, code string) int {
	info, err := rdb.Info(context.Background(), "errorstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`errorstat_` + code + `:count=(\d+)`).FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestNoScriptAfterFlush: SCRIPT FLUSH mid-traffic; the next call is
// answered NOSCRIPT, sends the script, and every decision stays the
// oracle's.
func TestNoScriptAfterFlush(t *testing.T) {
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	defer rdb.Close()
	ctx := context.Background()
	lim, err := redisimpl.NewGCRA(rdb, gcraParams)
	if err != nil {
		t.Fatal(err)
	}
	model := newModel(t)
	trace(t, ctx, lim, model, 0, 60)
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	before := errorCount(t, rdb, "NOSCRIPT")
	allowed, denied := trace(t, ctx, lim, model, 60, 60)
	if got := errorCount(t, rdb, "NOSCRIPT") - before; got < 1 {
		t.Errorf("no NOSCRIPT answered after SCRIPT FLUSH (%d): the reload path did not run", got)
	}
	if allowed == 0 || denied == 0 {
		t.Errorf("after the flush: %d allowed, %d denied; want both", allowed, denied)
	}
}

// TestNoScriptAfterRestart: the server crashes (SIGKILL) and restarts
// with its data (an append-only file, fsync'd at every write) but no
// script cache; decisions go on as the oracle's.
func TestNoScriptAfterRestart(t *testing.T) {
	srv := redistest.StartServer(t, "--appendonly", "yes", "--appendfsync", "always")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	defer rdb.Close()
	ctx := context.Background()
	lim, err := redisimpl.NewGCRA(rdb, gcraParams)
	if err != nil {
		t.Fatal(err)
	}
	model := newModel(t)
	trace(t, ctx, lim, model, 0, 60)
	s, _ := lua.Lookup("gcra")
	if exists, err := rdb.ScriptExists(ctx, s.SHA1).Result(); err != nil || !exists[0] {
		t.Fatalf("before the restart: SCRIPT EXISTS %v, %v; want true", exists, err)
	}
	srv.Restart()
	if exists, err := rdb.ScriptExists(ctx, s.SHA1).Result(); err != nil || exists[0] {
		t.Fatalf("after the restart: SCRIPT EXISTS %v, %v; want false", exists, err)
	}
	trace(t, ctx, lim, model, 60, 60)
	if n := errorCount(t, rdb, "NOSCRIPT"); n < 1 {
		t.Errorf("no NOSCRIPT answered after the restart: the reload path did not run")
	}
}

// replicaPair starts a master and a replica of it, and waits until the
// replica has synced.
func replicaPair(t *testing.T) (master, replica *redistest.Server) {
	master = redistest.StartServer(t)
	replica = redistest.StartServer(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port()))
	rc := redis.NewClient(&redis.Options{Addr: replica.Addr()})
	defer rc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		info, _ := rc.Info(context.Background(), "replication").Result()
		if regexp.MustCompile(`master_link_status:up`).MatchString(info) {
			return master, replica
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the replica did not sync within 10 s")
	return nil, nil
}

// switchable is a client whose connections go to the address in addr,
// as a Sentinel client's go to the current master.
func switchable(addr *atomic.Value) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr.Load().(string), ContextTimeoutEnabled: true,
		Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr.Load().(string))
		}})
}

// failover waits until the replica holds the master's writes, kills the
// master and promotes the replica, to which the client's connections
// then go.
func failover(t *testing.T, rdb *redis.Client, addr *atomic.Value, master, replica *redistest.Server) {
	ctx := context.Background()
	if n, err := rdb.Wait(ctx, 1, 5000).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d replicas, %v", n, err)
	}
	master.Kill()
	rc := redis.NewClient(&redis.Options{Addr: replica.Addr()})
	defer rc.Close()
	if err := rc.SlaveOf(ctx, "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	addr.Store(replica.Addr())
}

// TestNoScriptAfterFailover: the master dies and its replica, which
// never ran a script (Redis replicates a script's writes, not the script),
// is promoted; decisions go on from the replicated state, as the oracle's.
func TestNoScriptAfterFailover(t *testing.T) {
	master, replica := replicaPair(t)
	var addr atomic.Value
	addr.Store(master.Addr())
	rdb := switchable(&addr)
	defer rdb.Close()
	ctx := context.Background()
	lim, err := redisimpl.NewGCRA(rdb, gcraParams)
	if err != nil {
		t.Fatal(err)
	}
	model := newModel(t)
	trace(t, ctx, lim, model, 0, 60)
	rc := redis.NewClient(&redis.Options{Addr: replica.Addr()})
	defer rc.Close()
	s, _ := lua.Lookup("gcra")
	if exists, err := rc.ScriptExists(ctx, s.SHA1, s.ForceSHA1).Result(); err != nil || exists[0] || exists[1] {
		t.Fatalf("the replica knows the scripts before the failover (%v, %v): the test would not exercise NOSCRIPT", exists, err)
	}
	failover(t, rdb, &addr, master, replica)
	allowed, denied := trace(t, ctx, lim, model, 60, 60)
	if n := errorCount(t, rc, "NOSCRIPT"); n < 1 {
		t.Errorf("the promoted replica answered no NOSCRIPT: the reload path did not run")
	}
	if allowed == 0 || denied == 0 {
		t.Errorf("after the failover: %d allowed, %d denied; want both", allowed, denied)
	}
}

// TestFunctionsAcrossEvents: with WithFunctions, the library is loaded
// at the first call, replicated to the replica, reloaded after FUNCTION
// FLUSH, and decisions stay the oracle's through a failover.
func TestFunctionsAcrossEvents(t *testing.T) {
	master, replica := replicaPair(t)
	var addr atomic.Value
	addr.Store(master.Addr())
	rdb := switchable(&addr)
	defer rdb.Close()
	ctx := context.Background()
	lim, err := redisimpl.NewGCRA(rdb, gcraParams, redisimpl.WithFunctions())
	if err != nil {
		t.Fatal(err)
	}
	model := newModel(t)
	trace(t, ctx, lim, model, 0, 40)
	if err := rdb.FunctionFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	trace(t, ctx, lim, model, 40, 40)
	if err := redisimpl.LibraryLoaded(ctx, rdb); err != nil {
		t.Fatalf("after FUNCTION FLUSH and a call: %v", err)
	}
	failover(t, rdb, &addr, master, replica)
	if err := redisimpl.LibraryLoaded(ctx, rdb); err != nil {
		t.Fatalf("the promoted replica lacks the library: %v", err)
	}
	trace(t, ctx, lim, model, 80, 40)
}
