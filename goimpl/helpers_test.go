package goimpl

import (
	"context"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/internal/oracle"
	"github.com/limitspec/limitspec/kit"
)

// t0 is a time in ms, 2023-11-14.
const t0 = 1_700_000_000_000

// at is the time ms milliseconds after the epoch.
func at(ms int64) time.Time { return time.UnixMilli(ms) }

// ms is a duration of ms milliseconds.
func ms(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// newLimiter returns a limiter made by New with opts, failing the test if
// New refuses them, and closed when the test ends.
func newLimiter(tb testing.TB, opts Options) *Limiter {
	tb.Helper()
	l, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	return l
}

// decide decides req on l, failing the test on an error.
func decide(tb testing.TB, l *Limiter, req limitspec.Request) limitspec.Result {
	tb.Helper()
	res, err := l.Limit(context.Background(), req)
	if err != nil {
		tb.Fatalf("%+v: %v", req, err)
	}
	return res
}

// only returns the one limit's result of a limit's decision, failing the
// test unless there is exactly one.
func only(tb testing.TB, res limitspec.Result) limitspec.LimitResult {
	tb.Helper()
	if len(res.Limits) != 1 {
		tb.Fatalf("a limit's decision has %d limit results, want 1: %+v", len(res.Limits), res)
	}
	return res.Limits[0]
}

// limitOf returns the typed limit of the named algorithm with params
// named and measured as the spec names and measures them (ms), as the
// oracle takes them. It does not check them.
func limitOf(alg string, p map[string]int64) limitspec.Limit {
	switch alg {
	case "fixed_window":
		return limitspec.FixedWindow{Limit: p["limit"], Window: ms(p["window_ms"])}
	case "sliding_window":
		return limitspec.SlidingWindow{Limit: p["limit"], Window: ms(p["window_ms"])}
	case "sliding_log":
		return limitspec.SlidingLog{Limit: p["limit"], Window: ms(p["window_ms"])}
	case "meta_window":
		return limitspec.MetaWindow{Limit: p["limit"], Window: ms(p["window_ms"])}
	case "token_bucket":
		return limitspec.TokenBucket{Capacity: p["capacity"], RefillTokens: p["refill_tokens"], Refill: ms(p["refill_ms"])}
	case "gcra":
		return limitspec.GCRA{Burst: p["burst"], Rate: p["rate"], Period: ms(p["period_ms"])}
	case "leaky_bucket":
		return limitspec.LeakyBucket{Capacity: p["capacity"], Rate: p["rate"], Period: ms(p["period_ms"])}
	case "concurrency":
		return limitspec.Concurrency{Limit: p["limit"]}
	case "bucket_window":
		return limitspec.BucketWindow{Limit: p["limit"], Window: ms(p["window_ms"]), Bucket: ms(p["bucket_ms"]),
			Limit2: p["limit_2"], Window2: ms(p["window_ms_2"]), Limit3: p["limit_3"], Window3: ms(p["window_ms_3"])}
	}
	panic("limitOf: unknown algorithm " + alg)
}

// algorithms names every algorithm of the catalogue.
var algorithms = []string{"bucket_window", "fixed_window", "gcra", "leaky_bucket", "meta_window", "sliding_log", "sliding_window", "token_bucket"}

// smallParams are parameters under which a few requests reach the limit.
var smallParams = map[string]map[string]int64{
	"fixed_window":   {"limit": 3, "window_ms": 1000},
	"token_bucket":   {"capacity": 3, "refill_tokens": 1, "refill_ms": 1000},
	"gcra":           {"burst": 3, "rate": 1, "period_ms": 1000},
	"leaky_bucket":   {"capacity": 3, "rate": 1, "period_ms": 1000},
	"sliding_window": {"limit": 3, "window_ms": 1000},
	"sliding_log":    {"limit": 3, "window_ms": 1000},
	"bucket_window":  {"limit": 3, "window_ms": 1000, "bucket_ms": 100},
	"meta_window":    {"limit": 3, "window_ms": 1000},
}

// largeParams are parameters under which many requests are admitted.
var largeParams = map[string]map[string]int64{
	"fixed_window":   {"limit": 1000000, "window_ms": 1000},
	"token_bucket":   {"capacity": 1000000, "refill_tokens": 7, "refill_ms": 1000},
	"gcra":           {"burst": 1000000, "rate": 7, "period_ms": 1000},
	"leaky_bucket":   {"capacity": 1000000, "rate": 7, "period_ms": 1000},
	"sliding_window": {"limit": 1000000, "window_ms": 1000},
	"sliding_log":    {"limit": 1000, "window_ms": 1000},
	"bucket_window":  {"limit": 1000, "window_ms": 1000, "bucket_ms": 100, "limit_2": 5000, "window_ms_2": 10000},
	"meta_window":    {"limit": 1000, "window_ms": 1000},
}

// fromOracle is the limit result the contract makes of the oracle's
// result (limitspec.LimitResult; the Name and Limit left out): waits as
// durations, retry_after_ms 0 when admitted and Never when a denial
// replies -1.
func fromOracle(r oracle.Result) limitspec.LimitResult {
	lr := limitspec.LimitResult{Allowed: r.Allowed, Quota: r.Limit, Remaining: r.Remaining,
		ResetAfter: ms(r.ResetAfterMs), Delay: ms(r.DelayMs), Tier: int(r.Tier)}
	switch {
	case r.Allowed:
	case r.RetryAfterMs < 0:
		lr.RetryAfter = limitspec.Never
	default:
		lr.RetryAfter = ms(r.RetryAfterMs)
	}
	return lr
}

// bare is r without its Name, Unit and Limit, to compare with
// fromOracle's.
func bare(r limitspec.LimitResult) limitspec.LimitResult {
	r.Name, r.Unit, r.Limit = "", "", nil
	return r
}

// mustOracle returns the oracle's model of alg with params.
func mustOracle(tb testing.TB, alg string, params map[string]int64) oracle.Model {
	tb.Helper()
	m, err := oracle.New(alg, params)
	if err != nil {
		tb.Fatalf("oracle %s %v: %v", alg, params, err)
	}
	return m
}

// storeProbe is what the tests reach of a table's store (kit.Store,
// whatever its key and state types).
type storeProbe interface {
	Len() int
	StopSweeper()
	// touch makes a call at nowMs in every shard (on a key none holds),
	// which tells the sweeper the caller's time.
	touch(nowMs int64)
	// expires returns when the state of a prepared call expires, 0 when
	// the store has none, looking it up as a call at nowMs does.
	expires(c *kit.Call, nowMs int64) int64
}

// probe is the storeProbe of a *kit.Store[K, S], with key, the table's
// key of a prepared call.
type probe[K comparable, S any, P interface {
	*S
	kit.Expirer
}] struct {
	*kit.Store[K, S]
	key func(*kit.Call) kit.Key[K]
}

// touch: see storeProbe.
func (p probe[K, S, P]) touch(nowMs int64) {
	for i := range kit.Shards {
		var none kit.Key[K]
		sh := p.Shard(i)
		sh.Lock()
		sh.Get(none, p.Hash(none), nowMs)
		sh.Unlock()
	}
}

// expires: see storeProbe.
func (p probe[K, S, P]) expires(c *kit.Call, nowMs int64) int64 {
	k := p.key(c)
	h := p.Hash(k)
	sh := p.Shard(p.Index(h))
	sh.Lock()
	defer sh.Unlock()
	if e := sh.Get(k, h, nowMs); e != nil {
		return P(&e.State).Expires()
	}
	return 0
}

// tableOf returns l's table of lim's algorithm, made if need be.
func tableOf(tb testing.TB, l *Limiter, lim limitspec.Limit) *table {
	tb.Helper()
	t, err := l.table(lim)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// probeOf returns the store of l's table of lim's algorithm.
func probeOf(tb testing.TB, l *Limiter, lim limitspec.Limit) storeProbe {
	tb.Helper()
	switch t := tableOf(tb, l, lim).Table.(type) {
	case *bucketWindowTable:
		return probe[[4]int64, bucketWindowState, *bucketWindowState]{t.states, t.callKey}
	case *fixedWindowTable:
		return probe[[1]int64, fixedWindowState, *fixedWindowState]{t.states, t.callKey}
	case *gcraTable:
		return probe[[2]int64, gcraState, *gcraState]{t.states, t.callKey}
	case *leakyBucketTable:
		return probe[[2]int64, leakyBucketState, *leakyBucketState]{t.states, t.callKey}
	case *metaWindowTable:
		return probe[[1]int64, metaWindowState, *metaWindowState]{t.states, t.callKey}
	case *slidingLogTable:
		return probe[[1]int64, slidingLogState, *slidingLogState]{t.states, t.callKey}
	case *slidingWindowTable:
		return probe[[1]int64, slidingWindowState, *slidingWindowState]{t.states, t.callKey}
	case *tokenBucketTable:
		return probe[[2]int64, tokenBucketState, *tokenBucketState]{t.states, t.callKey}
	default:
		tb.Fatalf("no store known for %T", t)
		return nil
	}
}

// stateCall returns the call of key under lim, prepared as l's table
// prepares it, which names its state.
func stateCall(tb testing.TB, l *Limiter, lim limitspec.Limit, key string) *kit.Call {
	tb.Helper()
	t := tableOf(tb, l, lim)
	c := kit.Call{Args: kit.Args{Inputs: make([]string, len(t.alg.Inputs))}}
	if err := t.Prepare(&c, lim, "", key); err != nil {
		tb.Fatal(err)
	}
	return &c
}

// asksNothing reports whether a request of cost and costs asks for
// nothing: in Go, a Peek (a Cost left 0 is 1: docs/semantics.md,
// "Amounts in Go").
func asksNothing(cost int64, costs map[string]int64) bool {
	return limiters.AsksNothing(limitspec.Request{Cost: cost, Costs: costs})
}

// goCost is the Cost a Go limiter counts of a request of op ("decide",
// or a hold's) that gives cost and costs: 1 for a Cost left 0 beside
// other amounts, on an op that takes an amount.
func goCost(op string, cost int64, costs map[string]int64) int64 {
	if cost == 0 && !asksNothing(cost, costs) && op != "release" && op != "renew" {
		return 1
	}
	return cost
}
