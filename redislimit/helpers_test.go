package redislimit_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/oracle"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// The Redis limiter is a limiter of the contract, with its Reset and
// Check.
var (
	_ limitspec.Limiter  = (*redislimit.Limiter)(nil)
	_ limitspec.Resetter = (*redislimit.Limiter)(nil)
	_ limitspec.Checker  = (*redislimit.Limiter)(nil)
)

// t0 is the first time of a trace, in ms since the epoch.
const t0 = 1_700_000_000_000

// at is t0 + ms as a time.
func at(ms int64) time.Time { return time.UnixMilli(t0 + ms) }

// burst is the limit of the event tests: 5 at once, then 10 per second.
var burst = limitspec.GCRA{Burst: 5, Rate: 10, Period: time.Second}

// burstKey is burst's key for the key u: it names the rate and period.
const burstKey = "{u}:gc:10:1000"

// newClient starts a redis-server of its own, with args, and returns it
// and a client of it whose context deadlines bound its calls.
func newClient(t *testing.T, args ...string) (*redistest.Server, *redis.Client) {
	t.Helper()
	srv := redistest.StartServer(t, args...)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	return srv, rdb
}

// newLimiter is redislimit.New, failing the test on an error.
func newLimiter(t testing.TB, rdb redis.UniversalClient, opts redislimit.Options) *redislimit.Limiter {
	t.Helper()
	lim, err := redislimit.New(t.Context(), rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	return lim
}

// model is the oracle of a limit's algorithm with the limit's
// parameters, given as the spec names them.
func model(t *testing.T, algorithm string, params map[string]int64) oracle.Model {
	t.Helper()
	m, err := oracle.New(algorithm, params)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// burstModel is the oracle of burst.
func burstModel(t *testing.T) oracle.Model {
	return model(t, "gcra", map[string]int64{"burst": 5, "rate": 10, "period_ms": 1000})
}

// asOracle is a limit's result in the oracle's terms: waits in ms, -1 for
// never (and for an admission's retry_after_ms, as the contract has it).
func asOracle(r limitspec.LimitResult) oracle.Result {
	retry := r.RetryAfter.Milliseconds()
	if r.Allowed || r.RetryAfter == limitspec.Never {
		retry = -1
	}
	return oracle.Result{Allowed: r.Allowed, Limit: r.Quota, Remaining: r.Remaining, RetryAfterMs: retry,
		ResetAfterMs: r.ResetAfter.Milliseconds(), DelayMs: r.Delay.Milliseconds(), Tier: int64(r.Tier)}
}

// checkOne fails unless res is one limit's decision, as want, named name,
// with the request's own fields its limit's.
func checkOne(t *testing.T, what string, res limitspec.Result, name string, want oracle.Result) {
	t.Helper()
	if len(res.Limits) != 1 || res.Binding != 0 {
		t.Fatalf("%s: %d limits, binding %d; want 1, 0", what, len(res.Limits), res.Binding)
	}
	lr := res.Limits[0]
	if got := asOracle(lr); got != want || lr.Name != name {
		t.Errorf("%s: %s %+v; want %s %+v", what, lr.Name, got, name, want)
	}
	if res.Allowed != lr.Allowed || res.RetryAfter != lr.RetryAfter || res.Delay != lr.Delay || res.Side != limitspec.Primary {
		t.Errorf("%s: the result (%v, %v, %v, %v) is not its limit's", what, res.Allowed, res.RetryAfter, res.Delay, res.Side)
	}
}

// step is request i of a trace: three keys in turn, 37 ms apart, costs 0
// to 3, every seventh forced. Costs high enough that the burst runs out
// make both admissions and denials.
func step(i int) (key string, now, cost int64, force bool) {
	return fmt.Sprintf("user%d", i%3), t0 + 37*int64(i), int64(i % 4), i%7 == 6
}

// decider decides requests: a Limiter, or the handles viaBound binds.
type decider interface {
	Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error)
}

// trace replays steps from to from+n-1 of the trace on lim (by burst) and
// on m, failing at the first decision that differs. It stops at the first
// error, returning its step and the error (and m does not decide that
// step); stopped is -1 when none failed.
func trace(t *testing.T, lim decider, m oracle.Model, from, n int) (allowed, denied, stopped int, err error) {
	t.Helper()
	for i := from; i < from+n; i++ {
		key, now, cost, force := step(i)
		got, err := lim.Limit(t.Context(), limitspec.Request{Key: key, Limit: burst, Cost: cost, Peek: cost == 0, Now: time.UnixMilli(now), Force: force})
		if err != nil {
			return allowed, denied, i, err
		}
		decide := m.Decide
		if force {
			decide = m.Force
		}
		want, err := decide(key, now, cost, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkOne(t, fmt.Sprintf("step %d (%s, now %d, cost %d, force %v)", i, key, now, cost, force), got, "gcra", want)
		if t.Failed() {
			t.FailNow()
		}
		if got.Allowed {
			allowed++
		} else {
			denied++
		}
	}
	return allowed, denied, -1, nil
}

// mustTrace is trace, failing the test on an error, and unless the steps
// both admitted and denied.
func mustTrace(t *testing.T, lim decider, m oracle.Model, from, n int) {
	t.Helper()
	allowed, denied, stopped, err := trace(t, lim, m, from, n)
	if err != nil {
		t.Fatalf("step %d: %v", stopped, err)
	}
	if allowed == 0 || denied == 0 {
		t.Fatalf("steps %d to %d: %d allowed, %d denied; want both", from, from+n-1, allowed, denied)
	}
}

// errorCount is how many errors of code the server of rdb has answered
// since it started (INFO errorstats).
func errorCount(t *testing.T, rdb *redis.Client, code string) int {
	t.Helper()
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

// replicaPair starts a master and a replica of it, and waits until the
// replica has synced (at once: the master does not wait 5 s for more
// replicas before a diskless sync).
func replicaPair(t *testing.T) (master, replica *redistest.Server) {
	t.Helper()
	master = redistest.StartServer(t, "--repl-diskless-sync-delay", "0")
	replica = redistest.StartServer(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port()))
	rc := plainClient(t, replica.Addr())
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

// plainClient is a client of addr for the test's own commands, closed
// when the test ends.
func plainClient(t *testing.T, addr string) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// switchable is a client whose connections go to the address in addr,
// as a Sentinel client's go to the current master.
func switchable(t *testing.T, addr *atomic.Value) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: addr.Load().(string), ContextTimeoutEnabled: true,
		Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr.Load().(string))
		}})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// failover waits until the replica holds the master's writes, kills the
// master and promotes the replica, to which the client's connections
// then go.
func failover(t *testing.T, rdb *redis.Client, addr *atomic.Value, master, replica *redistest.Server) {
	t.Helper()
	ctx := context.Background()
	if n, err := rdb.Wait(ctx, 1, 5000).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d replicas, %v", n, err)
	}
	master.Kill()
	if err := plainClient(t, replica.Addr()).SlaveOf(ctx, "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	addr.Store(replica.Addr())
}

// evalSwitch is a go-redis hook that, while on, refuses every EVAL
// before it is sent, as if the client had no EVAL fallback: the limiter
// then fails wherever the server answers NOSCRIPT.
type evalSwitch struct{ refuse atomic.Bool }

var errEvalRefused = errors.New("EVAL refused by the test")

func (h *evalSwitch) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *evalSwitch) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.refuse.Load() && cmd.Name() == "eval" {
			cmd.SetErr(errEvalRefused)
			return errEvalRefused
		}
		return next(ctx, cmd)
	}
}

func (h *evalSwitch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// noPanic runs f, failing the test if it panics, and returns its error.
func noPanic(t *testing.T, what string, f func() error) (err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("%s panicked: %v", what, p)
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f()
}

// freeAddr is a loopback address where nothing listens.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// keys lists the keys of the server of rdb, sorted.
func keys(t *testing.T, rdb *redis.Client) []string {
	t.Helper()
	ks, err := rdb.Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ks)
	return ks
}

// checkPolicy fails unless res is the policy decision want, its limits
// named names.
func checkPolicy(t *testing.T, what string, res limitspec.Result, names []string, want oracle.PolicyResult) {
	t.Helper()
	if len(res.Limits) != len(names) || res.Binding != want.Index-1 || res.Side != limitspec.Primary {
		t.Fatalf("%s: %d limits, binding %d, side %v; want %d, %d, primary", what, len(res.Limits), res.Binding, res.Side, len(names), want.Index-1)
	}
	for i, lr := range res.Limits {
		if got := asOracle(lr); got != want.Limits[i] || lr.Name != names[i] {
			t.Errorf("%s: limit %d: %s %+v; want %s %+v", what, i, lr.Name, got, names[i], want.Limits[i])
		}
	}
	own := asOracle(limitspec.LimitResult{Allowed: res.Allowed, RetryAfter: res.RetryAfter, Delay: res.Delay,
		Quota: want.Limit, Remaining: want.Remaining, ResetAfter: time.Duration(want.ResetAfterMs) * time.Millisecond, Tier: int(want.Tier)})
	if own != want.Result {
		t.Errorf("%s: the policy's own result %+v; want %+v", what, own, want.Result)
	}
}

// field reads the field at index i (0: the first) of the packed state at
// key, the integers the scripts join by ":" ("ts:tat" for gcra).
func field(t *testing.T, rdb *redis.Client, key string, i int) (int64, error) {
	t.Helper()
	v, err := rdb.Get(t.Context(), key).Result()
	if err != nil {
		return 0, err
	}
	parts := strings.Split(v, ":")
	if i >= len(parts) {
		return 0, fmt.Errorf("%s holds %q: no field %d", key, v, i)
	}
	return strconv.ParseInt(parts[i], 10, 64)
}
