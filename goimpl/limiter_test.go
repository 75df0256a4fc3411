package goimpl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/oracle"
	"github.com/limitspec/limitspec/policyfile"
)

// TestTwoLimitsTwoKeys: one limiter decides a gcra and a fixed window
// limit, per call, for two keys: four states that share nothing. The
// oracle (one model per limit, each keeping its keys apart) gives every
// field; admitted is also worked by hand: a burst of 2, and 3 per second.
func TestTwoLimitsTwoKeys(t *testing.T) {
	gcraP := map[string]int64{"burst": 2, "rate": 1, "period_ms": 1000}
	fwP := map[string]int64{"limit": 3, "window_ms": 1000}
	limits := []limitspec.Limit{limitOf("gcra", gcraP), limitOf("fixed_window", fwP)}
	models := []oracle.Model{mustOracle(t, "gcra", gcraP), mustOracle(t, "fixed_window", fwP)}
	start := int64(t0/1000+1) * 1000 // a second's start
	steps := []struct {
		lim     int // 0: gcra, 1: fixed_window
		key     string
		dt      int64
		allowed bool
	}{
		{0, "alice", 0, true},
		{1, "bob", 0, true},
		{0, "alice", 1, true},
		{1, "alice", 2, true}, // alice's window is not her gcra's
		{0, "alice", 3, false},
		{0, "bob", 4, true}, // bob's gcra is not alice's
		{1, "bob", 5, true},
		{1, "bob", 6, true},
		{1, "bob", 7, false},
		{1, "alice", 8, true},
		{0, "bob", 9, true},
		{0, "bob", 10, false},
		{0, "alice", 1003, true}, // a second has drained one of alice's
		{1, "bob", 1000, true},   // a new window
	}
	l := newLimiter(t, Options{})
	for i, s := range steps {
		res := decide(t, l, limitspec.Request{Key: s.key, Limit: limits[s.lim], Cost: 1, Now: at(start + s.dt)})
		o, err := models[s.lim].Decide(s.key, start+s.dt, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, want := only(t, res), fromOracle(o)
		if bare(got) != want || res.Allowed != s.allowed || res.RetryAfter != want.RetryAfter {
			t.Errorf("step %d (%v for %s at +%d): %+v (allowed %v, retry %v)\n want %+v, allowed %v", i, limits[s.lim], s.key, s.dt, got, res.Allowed, res.RetryAfter, want, s.allowed)
		}
		if got.Name != limits[s.lim].Algorithm().Name || got.Limit != limits[s.lim] {
			t.Errorf("step %d: named %q, limit %v; want the algorithm's name and the limit decided", i, got.Name, got.Limit)
		}
	}
}

// oraclePool is two limits of each algorithm that differ in a parameter
// their state is measured in, so that no two of them share state.
var oraclePool = []struct {
	alg    string
	params map[string]int64
}{
	{"fixed_window", map[string]int64{"limit": 3, "window_ms": 1000}},
	{"fixed_window", map[string]int64{"limit": 5, "window_ms": 1500}},
	{"sliding_window", map[string]int64{"limit": 3, "window_ms": 1000}},
	{"sliding_window", map[string]int64{"limit": 4, "window_ms": 700}},
	{"sliding_log", map[string]int64{"limit": 3, "window_ms": 1000}},
	{"sliding_log", map[string]int64{"limit": 2, "window_ms": 1300}},
	{"meta_window", map[string]int64{"limit": 3, "window_ms": 1000}},
	{"meta_window", map[string]int64{"limit": 3, "window_ms": 900}},
	{"bucket_window", map[string]int64{"limit": 3, "window_ms": 1000, "bucket_ms": 100}},
	{"bucket_window", map[string]int64{"limit": 3, "window_ms": 600, "bucket_ms": 200, "limit_2": 5, "window_ms_2": 1200}},
	{"token_bucket", map[string]int64{"capacity": 3, "refill_tokens": 1, "refill_ms": 1000}},
	{"token_bucket", map[string]int64{"capacity": 4, "refill_tokens": 3, "refill_ms": 1000}},
	{"gcra", map[string]int64{"burst": 3, "rate": 1, "period_ms": 1000}},
	{"gcra", map[string]int64{"burst": 2, "rate": 2, "period_ms": 700}},
	{"leaky_bucket", map[string]int64{"capacity": 3, "rate": 1, "period_ms": 1000}},
	{"leaky_bucket", map[string]int64{"capacity": 4, "rate": 1, "period_ms": 300}},
}

// TestDecisionsMatchOracle: one limiter deciding every limit of
// oraclePool on three keys, at random, with forced calls, peeks, time
// going back (past the clock skew bound, too) and keys left to expire,
// decides as the oracle's models, one per limit.
func TestDecisionsMatchOracle(t *testing.T) {
	l := newLimiter(t, Options{NoSweeper: true})
	models := make([]oracle.Model, len(oraclePool))
	limits := make([]limitspec.Limit, len(oraclePool))
	for i, p := range oraclePool {
		models[i], limits[i] = mustOracle(t, p.alg, p.params), limitOf(p.alg, p.params)
	}
	rng := rand.New(rand.NewPCG(3, 5))
	now := int64(t0)
	denied := 0
	for step := range 30000 {
		switch r := rng.IntN(1000); {
		case r < 20:
			now += 65000 + rng.Int64N(200000) // every state expired
		case r < 40:
			now -= rng.Int64N(2000)
		case r < 45:
			now -= 61000 + rng.Int64N(60000) // behind the keys' clocks by more than the skew bound
		default:
			now += rng.Int64N(300)
		}
		i, key := rng.IntN(len(limits)), []string{"alice", "bob", "carol"}[rng.IntN(3)]
		cost, force, inputs := rng.Int64N(5), rng.IntN(10) == 0, map[string]string{"meta": "m" + strconv.Itoa(step)}
		res, err := l.Limit(context.Background(), limitspec.Request{Key: key, Limit: limits[i], Cost: cost, Peek: cost == 0, Now: at(now),
			Force: force, Inputs: inputs})
		call := models[i].Decide
		if force {
			call = models[i].Force
		}
		o, oerr := call(key, now, cost, inputs)
		if err != nil || oerr != nil {
			t.Fatalf("step %d: %v; oracle: %v", step, err, oerr)
		}
		if got, want := bare(only(t, res)), fromOracle(o); got != want || res.Allowed != want.Allowed ||
			res.RetryAfter != want.RetryAfter || res.Delay != want.Delay {
			t.Fatalf("step %d (%s %v, %s at %d, cost %d, forced %v):\n got  %+v (result %v %v %v)\n want %+v",
				step, oraclePool[i].alg, oraclePool[i].params, key, now, cost, force, got, res.Allowed, res.RetryAfter, res.Delay, want)
		}
		if !res.Allowed {
			denied++
		}
	}
	if denied < 3000 || denied > 27000 {
		t.Errorf("%d of 30000 requests denied: too few denials or admissions to compare", denied)
	}
}

// changeStep is one request of TestLimitChange and its outcome worked by
// hand: allowed, remaining, and the waits in ms (retry -1: Never; reset
// -1: not compared).
type changeStep struct {
	lim       limitspec.Limit
	dt, cost  int64
	force     bool
	allowed   bool
	remaining int64
	retry     int64
	reset     int64
}

// TestLimitChange: the same key under a limit whose amounts change
// between calls keeps its state, read clamped into the new amounts'
// domain (and not rewritten by the read), while a limit that differs in a
// parameter the state is measured in (a window, a rate, a period) starts
// from a fresh state and leaves the other's alone (docs/semantics.md,
// "Keys"). Every outcome is worked by hand in the comments.
func TestLimitChange(t *testing.T) {
	minute, sec := time.Minute, time.Second
	fw := func(limit int64, w time.Duration) limitspec.Limit {
		return limitspec.FixedWindow{Limit: limit, Window: w}
	}
	gcra := func(burst, rate int64, p time.Duration) limitspec.Limit {
		return limitspec.GCRA{Burst: burst, Rate: rate, Period: p}
	}
	tb := func(capacity, tokens int64) limitspec.Limit {
		return limitspec.TokenBucket{Capacity: capacity, RefillTokens: tokens, Refill: sec}
	}
	sl := func(limit int64) limitspec.Limit { return limitspec.SlidingLog{Limit: limit, Window: 10 * sec} }
	tests := []struct {
		name  string
		steps []changeStep
	}{
		{"fixed_window 10, 5, 20 in one window", []changeStep{
			{fw(10, minute), 0, 7, false, true, 3, 0, 60000},         // 7 of 10
			{fw(5, minute), 1000, 1, false, false, 0, 59000, 59000},  // 7 + 1 > 5: the 7 are kept
			{fw(20, minute), 2000, 10, false, true, 3, 0, 58000},     // 7 + 10 of 20
			{fw(20, minute), 2000, 4, false, false, 3, 58000, 58000}, // 17 + 4 > 20
			{fw(10, minute), 3000, 1, false, false, 0, 57000, 57000}, // 17 + 1 > 10
			{fw(10, 2*minute), 3000, 1, false, true, 9, 0, 117000},   // another window length: fresh
			{fw(5, minute), 60000, 1, false, true, 4, 0, 60000},      // the next minute: fresh
			{fw(10, 2*minute), 60000, 0, false, true, 9, 0, 60000},   // left alone by the minute's
		}},
		{"fixed_window: read clamped, not rewritten", []changeStep{
			{fw(10, minute), 0, 20, true, false, 0, -1, 60000},     // forced: 20 charged (2·limit)
			{fw(3, minute), 1, 0, false, false, 0, 59999, 59999},   // 20 read as 6 (2·3) > 3
			{fw(100, minute), 2, 0, false, true, 80, 0, 59998},     // still 20 of 100
			{fw(100, minute), 3, 80, false, true, 0, 0, 59997},     // 20 + 80 of 100
			{fw(100, minute), 4, 1, false, false, 0, 59996, 59996}, // full
		}},
		{"gcra: burst shared, rate and period not", []changeStep{
			{gcra(4, 1, sec), 0, 3, false, true, 1, 0, 3000},     // 3 s of work queued of 4
			{gcra(2, 1, sec), 0, 1, false, false, 0, 2000, 3000}, // 3 + 1 > 2: wait until 2 fit
			{gcra(8, 1, sec), 0, 1, false, true, 4, 0, 4000},     // 3 + 1 of 8
			{gcra(4, 2, sec), 0, 1, false, true, 3, 0, 500},      // rate 2: fresh, 500 ms a unit
			{gcra(4, 1, 2*sec), 0, 1, false, true, 3, 0, 2000},   // period 2 s: fresh
			{gcra(4, 1, sec), 0, 0, false, true, 0, 0, 4000},     // the 4 s of the first three
		}},
		{"token_bucket: capacity shared, refill not", []changeStep{
			{tb(10, 1), 0, 1, false, true, 9, 0, 1000}, // 1 taken: 9 of 10 left
			{tb(5, 1), 0, 0, false, true, 4, 0, 1000},  // the 1 taken, of 5
			{tb(10, 1), 0, 0, false, true, 9, 0, 1000}, // the read did not write
			{tb(5, 1), 0, 2, false, true, 2, 0, 3000},  // 3 taken of 5, written
			{tb(10, 1), 0, 0, false, true, 7, 0, 3000}, // 3 taken of 10: 3 s to full
			{tb(10, 2), 0, 0, false, true, 10, 0, 0},   // 2 a second: fresh, full
		}},
		{"sliding_log lowered: its entries count until they leave", []changeStep{
			{sl(5), 0, 1, false, true, 4, 0, 10000},
			{sl(5), 1, 1, false, true, 3, 0, 10000},
			{sl(5), 2, 1, false, true, 2, 0, 10000},
			{sl(5), 3, 1, false, true, 1, 0, 10000},
			{sl(2), 4, 1, false, false, 0, 9998, -1},    // 4 + 1 > 2 until 3 of them left: at +10002
			{sl(2), 10002, 1, false, true, 0, 0, 10000}, // the entry of +3 and this one
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runChangeSteps(t, tt.steps) })
	}
}

// runChangeSteps decides steps on one key of a new limiter, from the
// start of an hour (every window's start), failing the test on an
// outcome other than the step's.
func runChangeSteps(t *testing.T, steps []changeStep) {
	t.Helper()
	start := int64(t0/3600000+1) * 3600000
	l := newLimiter(t, Options{NoSweeper: true})
	for i, s := range steps {
		res := decide(t, l, limitspec.Request{Key: "k", Limit: s.lim, Cost: s.cost, Peek: s.cost == 0, Force: s.force, Now: at(start + s.dt)})
		got := only(t, res)
		retry := ms(s.retry)
		switch {
		case s.allowed:
			retry = 0
		case s.retry < 0:
			retry = limitspec.Never
		}
		if got.Allowed != s.allowed || got.Remaining != s.remaining || got.RetryAfter != retry ||
			s.reset >= 0 && got.ResetAfter != ms(s.reset) {
			t.Errorf("step %d (%+v cost %d at +%d): allowed %v, remaining %d, retry %v, reset %v; want %v, %d, %v, %v",
				i, s.lim, s.cost, s.dt, got.Allowed, got.Remaining, got.RetryAfter, got.ResetAfter, s.allowed, s.remaining, retry, ms(s.reset))
		}
	}
}

// TestReset: Reset deletes a key's state under a limit, and under every
// limit that shares it (one differing in amounts alone); not another
// key's, nor a limit's that differs in a rate.
func TestReset(t *testing.T) {
	ctx := context.Background()
	one := limitspec.GCRA{Burst: 1, Rate: 1, Period: time.Minute}
	amounts := limitspec.GCRA{Burst: 3, Rate: 1, Period: time.Minute} // shares one's state
	rate := limitspec.GCRA{Burst: 1, Rate: 2, Period: time.Minute}    // does not
	l := newLimiter(t, Options{Now: func() time.Time { return at(t0) }})
	for _, lim := range []limitspec.Limit{one, rate} {
		for _, key := range []string{"alice", "bob"} {
			if res, err := l.Allow(ctx, key, lim); err != nil || !res.Allowed {
				t.Fatalf("the first request of %s under %v: %+v, %v", key, lim, res, err)
			}
		}
	}
	if err := l.Reset(ctx, limitspec.Request{Key: "alice", Limit: amounts}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		key  string
		lim  limitspec.Limit
		want bool
	}{
		{"alice", one, true}, // reset
		{"bob", one, false},
		{"alice", rate, false},
	} {
		if res, err := l.Allow(ctx, tt.key, tt.lim); err != nil || res.Allowed != tt.want {
			t.Errorf("%s under %v after alice's reset: %+v, %v; want allowed %v", tt.key, tt.lim, res, err, tt.want)
		}
	}
}

// TestOneLimitManyForms: a limit passed by value, by pointer or built by
// policyfile.NewLimit from its parameters is one limit: they share state.
func TestOneLimitManyForms(t *testing.T) {
	named, err := policyfile.NewLimit("gcra", map[string]int64{"burst": 3, "rate": 7, "period_ms": 1000})
	if err != nil {
		t.Fatal(err)
	}
	typed := limitspec.GCRA{Burst: 3, Rate: 7, Period: time.Second}
	forms := []limitspec.Limit{typed, &typed, named}
	l := newLimiter(t, Options{NoSweeper: true})
	for i := range 3 { // burst 3 at one instant: each form takes one
		res := decide(t, l, limitspec.Request{Key: "k", Limit: forms[i], Cost: 1, Now: at(t0)})
		if got := only(t, res).Remaining; !res.Allowed || got != int64(2-i) {
			t.Errorf("form %d (%T): allowed %v, remaining %d; want admitted, %d left", i, forms[i], res.Allowed, got, 2-i)
		}
	}
	if res := decide(t, l, limitspec.Request{Key: "k", Limit: typed, Cost: 1, Now: at(t0)}); res.Allowed {
		t.Error("a fourth request within the burst of 3 admitted")
	}
}

// TestExpiredStateReadsAsAbsent: a key whose TTL ran out on the caller's
// clock starts afresh, as in Redis.
func TestExpiredStateReadsAsAbsent(t *testing.T) {
	l := newLimiter(t, Options{NoSweeper: true})
	fw := limitspec.FixedWindow{Limit: 1, Window: time.Second}
	for _, s := range []struct {
		now  int64
		want bool
	}{{t0, true}, {t0 + 1, false}, {t0 + 3600000, true}} {
		if res := decide(t, l, limitspec.Request{Key: "k", Limit: fw, Cost: 1, Now: at(s.now)}); res.Allowed != s.want {
			t.Errorf("at %d: allowed %v, want %v", s.now, res.Allowed, s.want)
		}
	}
	// The window's TTL is window + 60 s: at t0+3600000 the first state
	// had expired and reads as absent, whatever its window said.
	if exp := probeOf(t, l, fw).expires(stateCall(t, l, fw, "k"), t0+3600000); exp != t0+3600000+1000+60000 {
		t.Errorf("the state expires at %d, want %d (its window's end, plus 60 s)", exp, t0+3600000+1000+60000)
	}
}

// TestMetaWindowEntries: the metas of the admitted requests read back in
// order, for the window open at the time asked; a denied request is not
// recorded, and a new window starts a new list. Values worked by hand:
// limit 3 per window of 1000 ms from the first admission.
func TestMetaWindowEntries(t *testing.T) {
	ctx := context.Background()
	l := newLimiter(t, Options{NoSweeper: true})
	mw := limitspec.MetaWindow{Limit: 3, Window: time.Second}
	req := func(dt, cost int64, meta string) limitspec.Request {
		return limitspec.Request{Key: "10.0.0.7", Limit: mw, Cost: cost, Peek: cost == 0, Now: at(t0 + dt), Inputs: map[string]string{"meta": meta}}
	}
	for _, s := range []struct {
		dt, cost int64
		meta     string
		allowed  bool
		retry    time.Duration
	}{
		{0, 1, "alice", true, 0},
		{10, 2, "bob", true, 0},
		{20, 1, "carol", false, 980 * time.Millisecond}, // 3 + 1 > 3 until the window ends at t0+1000
	} {
		res, err := l.Limit(ctx, req(s.dt, s.cost, s.meta))
		if err != nil || res.Allowed != s.allowed || res.RetryAfter != s.retry {
			t.Fatalf("%s at t0+%d: %+v, %v; want allowed %v, retry %v", s.meta, s.dt, res, err, s.allowed, s.retry)
		}
	}
	view := func(dt int64) string {
		recs, err := l.View(ctx, "entries", req(dt, 0, ""))
		return fmt.Sprint(recs, err)
	}
	if got, want := view(30), fmt.Sprint([][]any{{int64(t0), int64(1), "alice"}, {int64(t0 + 10), int64(2), "bob"}}, nil); got != want {
		t.Errorf("entries at t0+30 = %s, want %s", got, want)
	}
	if got, want := view(1000), "[] <nil>"; got != want {
		t.Errorf("entries once the window has ended = %s, want %s", got, want)
	}
	if res, _ := l.Limit(ctx, req(1000, 1, "dave")); !res.Allowed || res.Limits[0].Remaining != 2 || res.Limits[0].ResetAfter != time.Second {
		t.Errorf("the first request of a new window: %+v", res)
	}
	if got, want := view(1000), fmt.Sprint([][]any{{int64(t0 + 1000), int64(1), "dave"}}, nil); got != want {
		t.Errorf("entries of the new window = %s, want dave's alone: %s", got, want)
	}
	long := string(make([]byte, 257))
	if _, err := l.Limit(ctx, req(1001, 1, long)); err == nil || err.Error() != "meta_window: meta must be at most 256 bytes, got 257" {
		t.Errorf("a meta of 257 bytes: %v", err)
	}
	if got, want := view(1001), fmt.Sprint([][]any{{int64(t0 + 1000), int64(1), "dave"}}, nil); got != want {
		t.Errorf("a refused request changed the entries: %s", got)
	}
}

// TestConcurrentExact: many goroutines hammering one key at one instant
// get exactly the limit admitted, on every algorithm, while deciding
// other keys in other shards at the same time (run with -race).
func TestConcurrentExact(t *testing.T) {
	const limit, goroutines, each = 1000, 16, 200
	params := map[string]map[string]int64{
		"fixed_window":   {"limit": limit, "window_ms": 60000},
		"sliding_window": {"limit": limit, "window_ms": 60000},
		"sliding_log":    {"limit": limit, "window_ms": 60000},
		"bucket_window":  {"limit": limit, "window_ms": 60000, "bucket_ms": 1000, "limit_2": 2 * limit, "window_ms_2": 120000},
		"meta_window":    {"limit": limit, "window_ms": 60000},
		"token_bucket":   {"capacity": limit, "refill_tokens": 1, "refill_ms": 60000},
		"gcra":           {"burst": limit, "rate": 1, "period_ms": 60000},
		"leaky_bucket":   {"capacity": limit, "rate": 1, "period_ms": 60000},
	}
	l := newLimiter(t, Options{})
	for _, alg := range algorithms {
		lim := limitOf(alg, params[alg])
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				own := "own" + strconv.Itoa(g)
				for range each {
					for _, key := range []string{"shared", own} {
						res, err := l.Limit(context.Background(), limitspec.Request{Key: key, Limit: lim, Cost: 1, Now: at(t0)})
						if err != nil {
							t.Error(err)
							return
						}
						if key == "shared" && res.Allowed {
							admitted.Add(1)
						}
					}
				}
			})
		}
		wg.Wait()
		if got := admitted.Load(); got != limit {
			t.Errorf("%s: admitted %d of %d requests, want exactly %d", alg, got, goroutines*each, limit)
		}
	}
}

// The in-process limiter keeps holds.
var _ limitspec.Holder = (*Limiter)(nil)

// TestHoldRefusesNoHoldingPolicy: Hold on a request of a Limit, or of a
// policy made without WithHolds, is refused as bad input, not a panic.
func TestHoldRefusesNoHoldingPolicy(t *testing.T) {
	lim, _ := New(Options{NoSweeper: true})
	p, err := limitspec.NewPolicy("pool", limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: 1}, Identity: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	h := limitspec.Hold{Op: limitspec.Reserve, ID: "job", For: time.Second}
	for _, req := range []limitspec.Request{
		{Key: "acme", Limit: limitspec.Concurrency{Limit: 1}, Cost: 1},
		{Policy: p, IDs: map[string]string{"tenant": "acme"}, Cost: 1},
	} {
		if _, err := lim.Hold(t.Context(), req, h); !errors.Is(err, limitspec.ErrBadInput) || !strings.Contains(err.Error(), "holding policy") {
			t.Errorf("%+v: %v; want a refusal naming the holding policy", req, err)
		}
	}
}
