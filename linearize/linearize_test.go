package linearize_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/internal/faultproxy"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/linearize"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// pool is the policy of the tests: 4 slots, 24 per second and a bucket
// of 8 refilled by 1 every 50 ms, all per tenant.
var pool = linearize.Spec{Name: "pool", Identity: "tenant", Limits: []linearize.LimitSpec{
	{Name: "slots", Algorithm: "concurrency", Params: map[string]int64{"limit": 4}},
	{Name: "window", Algorithm: "fixed_window", Params: map[string]int64{"limit": 24, "window_ms": 1000}},
	{Name: "bucket", Algorithm: "token_bucket", Params: map[string]int64{"capacity": 8, "refill_tokens": 1, "refill_ms": 50}},
}}

// values are the tenants of the tests: 8 partitions of the history.
var values = []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"}

// t0 is the first Now of a history, in ms since the epoch.
const t0 = 1_700_000_000_000

// deadline bounds each call.
const deadline = 200 * time.Millisecond

// workload is the tests' traffic: 32 clients, 4 per tenant, 75 calls
// each (about 300 per tenant) for at most 4 s.
var workload = linearize.Workload{Clients: 32, Values: values, Calls: 75, Duration: 4 * time.Second, Pause: 20 * time.Millisecond}

// TestLinearizableRedis: 32 clients on one redis-server behind a proxy
// that cuts the connection after every 25th EVALSHA's reply (the call ran,
// its reply is lost: a decision's outcome is unknown, an operation on a
// hold is sent again), batched as redislimit batches by default. The
// history is linearizable with respect to the oracle's model.
func TestLinearizableRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	proxy := faultproxy.Start(t, srv.Addr())
	var evals atomic.Int64
	proxy.CutAfterReply(func(name string, _ []string) bool {
		return strings.EqualFold(name, "evalsha") && evals.Add(1)%25 == 0
	})
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	w := workload
	w.Seed = uint64(time.Now().UnixNano())
	checkRun(t, rdb, w, nil)
}

// TestSequentialRedis: one client, calling one call at a time on one
// redis-server, no fault: the history is linearizable only if every
// outcome is the oracle's, so that a failure names the first call whose
// outcome differs (the explanation's first "then?").
func TestSequentialRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	w := linearize.Workload{Clients: 1, Values: []string{"solo"}, Calls: 400, Duration: 10 * time.Second, Seed: uint64(time.Now().UnixNano())}
	checkRun(t, rdb, w, nil)
}

// TestLinearizableGoimpl: the traffic of the Redis tests on the
// in-process limiter of package goimpl (the fallback's), whose calls on
// one key are serialized by its own locks. The history is linearizable
// with respect to the oracle's model.
func TestLinearizableGoimpl(t *testing.T) {
	t.Parallel()
	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lim.Close() })
	rec, err := linearize.NewRecorder(lim, pool, t0, deadline)
	if err != nil {
		t.Fatal(err)
	}
	w := workload
	w.Seed = uint64(time.Now().UnixNano())
	w.Run(t.Context(), rec)
	check(t, w.Seed, rec.Calls(), nil)
}

// checkRun runs w on a redislimit.Limiter on rdb, and during(ctx) beside
// it when not nil, then checks the history.
func checkRun(t *testing.T, rdb redis.UniversalClient, w linearize.Workload, during func(context.Context)) {
	t.Helper()
	sends := linearize.NewSends()
	rdb.AddHook(sends)
	lim, err := redislimit.New(t.Context(), rdb, redislimit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := linearize.NewRecorder(lim, pool, t0, deadline)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if during != nil {
			during(ctx)
		}
	}()
	w.Run(t.Context(), rec)
	cancel()
	<-done
	ran := time.Since(start)
	// Attempts sent by a batch after their caller gave up are counted
	// when they return: by the batch's deadline, the latest of its calls'.
	time.Sleep(2 * deadline)
	calls := rec.Calls()
	t.Logf("%d calls in %v", len(calls), ran.Round(time.Millisecond))
	check(t, w.Seed, calls, sends)
}

// check checks the history of calls, whose attempts sends counted (nil:
// one each), made by the traffic of seed.
func check(t *testing.T, seed uint64, calls []linearize.Call, sends *linearize.Sends) {
	t.Helper()
	var attempts linearize.Attempts
	if sends != nil {
		attempts = sends
	}
	ops := linearize.Operations(calls, attempts)
	st := linearize.Count(calls, ops)
	res, err := linearize.Check(pool, ops, time.Minute, t.ArtifactDir())
	t.Logf("seed %d: %d calls (%v, %d admitted), %d operations, %d of them lost attempts (%d maybe run late); checked in %v: %s",
		seed, st.Calls, st.ByClass, st.Allowed, st.Operations, st.Lost, st.Late, res.Took.Round(time.Millisecond), res.Verdict)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != "Ok" {
		t.Fatalf("the history (seed %d) is %s, not linearizable: see %s (go test -artifacts keeps it)\n%s", seed, res.Verdict, res.Visualization, res.Explanation)
	}
}
