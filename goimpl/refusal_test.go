package goimpl

import (
	"context"
	"errors"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
)

// foreign is a limit of an algorithm no generated package registered.
type foreign struct{}

// Algorithm is elsewhere.nope; foreign is valid and has no window.
func (foreign) Algorithm() limitspec.Algorithm {
	return limitspec.Algorithm{Library: "elsewhere", Name: "nope"}
}

// Validate accepts the limit.
func (foreign) Validate() error { return nil }

// QuotaWindow is 0: no window.
func (foreign) QuotaWindow() time.Duration { return 0 }

// impostor claims to be a gcra limit without being limitspec.GCRA.
type impostor struct{ foreign }

// Algorithm is gcra's.
func (impostor) Algorithm() limitspec.Algorithm { return limitspec.GCRA{}.Algorithm() }

// noPanic runs f and returns its error, or fails the test if f panics.
func noPanic(t *testing.T, what string, f func() error) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
		}
	}()
	return f()
}

// TestMisuseNeverPanics: every misuse of the limiter or its options is
// refused with an error that says what is wrong; none panics.
func TestMisuseNeverPanics(t *testing.T) {
	ctx := context.Background()
	gcra := limitspec.GCRA{Burst: 1, Rate: 1, Period: time.Second}
	var nilGCRA *limitspec.GCRA
	policy, err := limitspec.BurstQuotaPolicy(3)
	if err != nil {
		t.Fatal(err)
	}
	zeroPolicy := &limitspec.Policy{} // not made by NewPolicy
	impostorPolicy, err := limitspec.NewPolicy("p", limitspec.PolicyLimit{Name: "a", Limit: impostor{}, Identity: "u"})
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	l := newLimiter(t, Options{})
	var zero Limiter // not made by New
	limit := func(l *Limiter, req limitspec.Request) func() error {
		return func() error { _, err := l.Limit(ctx, req); return err }
	}
	bad := []error{limitspec.ErrBadInput}
	unlinked := bad // a limit no linked package decides is refused
	checkMisuses(t, []misuse{
		{"Allow with a nil limit", func() error { _, err := l.Allow(ctx, "k", nil); return err }, "a request needs a Limit or a Policy", bad},
		{"Allow with a typed nil *GCRA", func() error { _, err := l.Allow(ctx, "k", nilGCRA); return err }, "a request needs a Limit or a Policy", bad},
		{"a request with neither", limit(l, limitspec.Request{Key: "k", Cost: 1}), "a request needs a Limit or a Policy", bad},
		{"a request with both", limit(l, limitspec.Request{Key: "k", Limit: gcra, Policy: policy}), "a request names a Limit or a Policy, not both", bad},
		{"a zero Policy", limit(l, limitspec.Request{Policy: zeroPolicy, Cost: 1, Now: at(t0)}), "a policy needs a name and limits", bad},
		{"Reset of a zero Policy", func() error { return l.Reset(ctx, limitspec.Request{Policy: zeroPolicy}) }, "a policy needs a name and limits", bad},
		{"Check of a zero Policy", func() error { return l.Check(limitspec.Request{Policy: zeroPolicy}) }, "a policy needs a name and limits", bad},
		{"a policy without its identities", limit(l, limitspec.Request{Policy: policy, Cost: 1}), "burst_quota: missing identity user", bad},
		{"a limit of no linked algorithm", limit(l, limitspec.Request{Key: "k", Limit: foreign{}, Cost: 1}), "elsewhere.nope: no decision of this algorithm is linked in", unlinked},
		{"Check of a limit of no linked algorithm", func() error { return l.Check(limitspec.Request{Limit: foreign{}}) }, "elsewhere.nope: no decision", unlinked},
		{"a limit claiming another's algorithm", limit(l, limitspec.Request{Key: "k", Limit: impostor{}, Cost: 1}), "gcra: goimpl.impostor is not a limit of gcra", bad},
		{"Check of a limit claiming another's algorithm", func() error { return l.Check(limitspec.Request{Limit: impostor{}}) }, "gcra: goimpl.impostor is not a limit of gcra", bad},
		{"Check of a policy holding one", func() error { return l.Check(limitspec.Request{Policy: impostorPolicy}) }, "p.a: gcra: goimpl.impostor is not a limit of gcra", bad},
		{"Reset of a policy holding one", func() error {
			return l.Reset(ctx, limitspec.Request{Policy: impostorPolicy, IDs: map[string]string{"u": "x"}})
		}, "p.a: gcra: goimpl.impostor is not a limit of gcra", bad},
		{"Reset of a policy with a negative cost (a reset takes none)", func() error {
			return l.Reset(ctx, limitspec.Request{Policy: policy, IDs: map[string]string{"user": "x"}, Cost: -1})
		}, "", nil},
		{"a time before the epoch", limit(l, limitspec.Request{Key: "k", Limit: gcra, Now: time.Time{}.Add(1)}), "gcra: now_ms must be an integer in [0, 35184372088832], got -62135596800000", bad},
		{"Reset with a nil limit", func() error { return l.Reset(ctx, limitspec.Request{Key: "k"}) }, "a request needs a Limit or a Policy", bad},
		{"Reset with an empty key", func() error { return l.Reset(ctx, limitspec.Request{Limit: gcra}) }, "gcra: key must not be empty", bad},
		{"View with a nil limit", func() error { _, err := l.View(ctx, "entries", limitspec.Request{Key: "k"}); return err }, "a view needs a Limit", bad},
		{"View of a policy", func() error { _, err := l.View(ctx, "entries", limitspec.Request{Policy: policy}); return err }, "a view needs a Limit", bad},
		{"an unknown view", func() error { _, err := l.View(ctx, "entries", limitspec.Request{Key: "k", Limit: gcra}); return err }, `gcra: unknown view "entries"`, bad},
		{"Check with neither", func() error { return l.Check(limitspec.Request{}) }, "a request needs a Limit or a Policy", bad},
		{"a cancelled context", func() error { _, err := l.Allow(cancelled, "k", gcra); return err }, "context canceled", []error{context.Canceled}},
		{"a zero Limiter at its clock", func() error { _, err := zero.Allow(ctx, "k", gcra); return err }, "", nil},
		{"a zero Limiter at a given time", limit(&zero, limitspec.Request{Key: "k", Limit: gcra, Cost: 1, Now: at(t0)}), "", nil},
		{"a zero Limiter's Bound at its clock", func() error {
			b, err := zero.Bind(gcra)
			if err == nil {
				_, err = b.Allow(ctx, "k")
			}
			return err
		}, "", nil},
		{"Bind of a nil limit", func() error { _, err := l.Bind(nil); return err }, "a request needs a Limit or a Policy", bad},
		{"Bind of a typed nil *GCRA", func() error { _, err := l.Bind(nilGCRA); return err }, "a request needs a Limit or a Policy", bad},
		{"BindPolicy of a nil policy", func() error { _, err := l.BindPolicy(nil); return err }, "a request needs a Limit or a Policy", bad},
		{"BindPolicy of a zero Policy", func() error { _, err := l.BindPolicy(zeroPolicy); return err }, "a policy needs a name and limits", bad},
		{"New of zero Options", func() error { _, err := New(Options{}); return err }, "", nil},
	})
}

// misuse is a call that misuses a limiter, and the error it must return.
type misuse struct {
	name  string
	call  func() error
	want  string  // the error's start; "" for no error
	class []error // what the error matches, one of them; nil: not checked
}

// checkMisuses makes each call, which must not panic, and checks its
// error.
func checkMisuses(t *testing.T, tests []misuse) {
	t.Helper()
	for _, tt := range tests {
		err := noPanic(t, tt.name, tt.call)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", tt.name, err)
		case tt.want == "":
		case err == nil || !strings.HasPrefix(err.Error(), tt.want):
			t.Errorf("%s: %v, want an error starting %q", tt.name, err, tt.want)
		case tt.class != nil && !slices.ContainsFunc(tt.class, func(c error) bool { return errors.Is(err, c) }):
			t.Errorf("%s: %v matches none of %v", tt.name, err, tt.class)
		}
	}
}

// TestRefusals: a limit out of its domain and a request's key, time,
// cost or meta out of theirs are refused with the scripts' messages, and
// nothing is written: the key keeps its whole limit and the store holds
// no state.
func TestRefusals(t *testing.T) {
	fw := limitspec.FixedWindow{Limit: 2, Window: time.Second}
	mw := limitspec.MetaWindow{Limit: 2, Window: time.Second}
	req := func(lim limitspec.Limit, key string, now, cost int64) limitspec.Request {
		return limitspec.Request{Key: key, Limit: lim, Now: at(now), Cost: cost, Peek: cost == 0}
	}
	tests := []struct {
		req  limitspec.Request
		want string
	}{
		{req(limitspec.GCRA{Burst: 0, Rate: 1, Period: time.Millisecond}, "k", t0, 1), "gcra: parameter burst must be an integer in [1, 1000000000000], got 0"},
		{req(limitspec.GCRA{Burst: 1000000, Rate: 1, Period: 1000000001 * time.Millisecond}, "k", t0, 1), "gcra: burst times period_ms must not exceed 10^15"},
		{req(limitspec.GCRA{Burst: 1, Rate: 1, Period: 1500 * time.Microsecond}, "k", t0, 1), "gcra: parameter period_ms must be an integer in [1, 100000000000], got 1.5ms"},
		{req(limitspec.FixedWindow{Limit: 5, Window: 100000000001 * time.Millisecond}, "k", t0, 1), "fixed_window: parameter window_ms must be an integer in [1, 100000000000], got 100000000001"},
		{req(limitspec.TokenBucket{Capacity: -1, RefillTokens: 1, Refill: time.Millisecond}, "k", t0, 1), "token_bucket: parameter capacity must be an integer in [1, 1000000000000], got -1"},
		{req(limitspec.TokenBucket{Capacity: 1000000000000, RefillTokens: 1, Refill: 1001 * time.Millisecond}, "k", t0, 1), "token_bucket: capacity times refill_ms must not exceed 10^15"},
		{req(limitspec.TokenBucket{Capacity: 1000000, RefillTokens: 9999, Refill: 1000000000 * time.Millisecond}, "k", t0, 1),
			"token_bucket: the time to refill from empty, capacity times refill_ms / refill_tokens, must not exceed 10^11 ms"},
		{req(limitspec.FixedWindow{Limit: 0, Window: time.Second}, "", -5, -1), "fixed_window: parameter limit must be"}, // the limit first
		{req(fw, "", t0, 1), "fixed_window: key must not be empty"},
		{req(fw, "}x", t0, 1), "fixed_window: key must not begin with '}' (its hash tag would be empty)"},
		{req(fw, "", -2, -1), "fixed_window: key must not be empty"}, // the key before the time
		{req(fw, "k", -2, 1), "fixed_window: now_ms must be an integer in [0, 35184372088832], got -2"},
		{req(fw, "k", 1<<45+1, 1), "fixed_window: now_ms must be an integer in [0, 35184372088832], got 35184372088833"},
		{req(fw, "k", -2, -1), "fixed_window: now_ms must be"}, // the time before the cost
		{req(fw, "k", t0, -1), "fixed_window: cost must be an integer in [0, 9007199254740991], got -1"},
		{req(fw, "k", t0, 1<<53), "fixed_window: cost must be an integer in [0, 9007199254740991], got 9007199254740992"},
		{limitspec.Request{Key: "k", Limit: mw, Now: at(t0), Cost: 1, Inputs: map[string]string{"meta": strings.Repeat("x", 257)}},
			"meta_window: meta must be at most 256 bytes, got 257"},
	}
	l := newLimiter(t, Options{NoSweeper: true})
	for _, tt := range tests {
		_, err := l.Limit(context.Background(), tt.req)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, limitspec.ErrBadInput) {
			t.Errorf("%+v: %v, want an ErrBadInput starting %q", tt.req, err, tt.want)
		}
	}
	for _, lim := range []limitspec.Limit{fw, mw} {
		if res := decide(t, l, limitspec.Request{Key: "k", Limit: lim, Peek: true, Now: at(t0)}); only(t, res).Remaining != 2 {
			t.Errorf("%T after refusals: %+v; want the whole limit of 2", lim, res)
		}
		if n := probeOf(t, l, lim).Len(); n != 0 {
			t.Errorf("%T: the store holds %d states after refusals and a peek, want none", lim, n)
		}
	}
}

// TestClock: a request without a time is decided at the limiter's clock,
// time.Now unless Options.Now gives another; a request's own time wins.
func TestClock(t *testing.T) {
	ctx := context.Background()
	hourly := limitspec.FixedWindow{Limit: 1, Window: time.Hour}
	// The window ends at the next multiple of an hour after the time used.
	toEnd := func(ms int64) time.Duration { return time.Duration((ms/3600000+1)*3600000-ms) * time.Millisecond }

	l := newLimiter(t, Options{})
	before := time.Now().UnixMilli()
	res, err := l.Allow(ctx, "k", hourly)
	after := time.Now().UnixMilli()
	if err != nil || !res.Allowed {
		t.Fatalf("Allow at the process clock: %+v, %v", res, err)
	}
	if got := res.Limits[0].ResetAfter; got < toEnd(after) || got > toEnd(before) {
		t.Errorf("reset %v is not the wait to the hour's end from a time in [%d, %d]", got, before, after)
	}
	// The admission was recorded at that time: a request then is denied.
	if res := decide(t, l, limitspec.Request{Key: "k", Limit: hourly, Cost: 1, Now: at(after)}); res.Allowed {
		t.Errorf("a request at %d after one at the process clock: admitted", after)
	}

	hour := int64(t0/3600000+1) * 3600000
	held := newLimiter(t, Options{Now: func() time.Time { return at(hour + 1000) }})
	if res, err := held.Allow(ctx, "k", hourly); err != nil || !res.Allowed || res.Limits[0].ResetAfter != toEnd(hour+1000) {
		t.Errorf("Allow at a held clock: %+v, %v; want admitted, reset %v", res, err, toEnd(hour+1000))
	}
	if res := decide(t, held, limitspec.Request{Key: "k", Limit: hourly, Cost: 1, Now: at(hour + 2000)}); res.Allowed || res.RetryAfter != toEnd(hour+2000) {
		t.Errorf("a request of its own time in the same hour: %+v; want denied, retry %v", res, toEnd(hour+2000))
	}
	if res := decide(t, held, limitspec.Request{Key: "k", Limit: hourly, Cost: 1, Now: at(hour + 3600000)}); !res.Allowed {
		t.Errorf("a request of its own time in the next hour: %+v; want admitted", res)
	}
}

// bucketOK is the joint rule of docs/semantics.md for token_bucket, gcra
// and leaky_bucket: count × period ≤ 10^15, and from empty to full,
// count × period / rate ms, within 10^11 ms.
func bucketOK(count, period, rate int64) bool {
	prod := new(big.Int).Mul(big.NewInt(count), big.NewInt(period))
	fill := new(big.Rat).SetFrac(prod, big.NewInt(rate))
	return prod.Cmp(big.NewInt(1e15)) <= 0 && fill.Cmp(new(big.Rat).SetInt64(1e11)) <= 0
}

// domainParam is a parameter of TestAcceptsWholeDomain and its domain.
type domainParam struct {
	name   string
	lo, hi int64
}

// combos returns every assignment of the test values within their
// domains to params: each parameter's ends, a middle value, and values
// around the joint bound 10^15 when paired with another.
func combos(params []domainParam) []map[string]int64 {
	values := []int64{7, 1000, 1e3 + 1, 1e4, 1e5, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12}
	out := []map[string]int64{{}}
	for _, p := range params {
		var next []map[string]int64
		for _, c := range out {
			for _, v := range append([]int64{p.lo, p.hi}, values...) {
				if v < p.lo || v > p.hi {
					continue
				}
				m := map[string]int64{p.name: v}
				for k, x := range c {
					m[k] = x
				}
				next = append(next, m)
			}
		}
		out = next
	}
	return out
}

// extremes are the corners of the domains of now_ms and cost.
var extremes = [][2]int64{{0, 0}, {1 << 45, 1<<53 - 1}, {1 << 45, 1}, {0, 1}}

// checkDomain fails the test unless l accepts alg's limit of params
// exactly when want, with an ErrBadInput otherwise, and decides the
// extreme inputs of an accepted one without error.
func checkDomain(t *testing.T, l *Limiter, alg string, p map[string]int64, want bool) {
	t.Helper()
	lim := limitOf(alg, p)
	err := l.Check(limitspec.Request{Limit: lim})
	if (err == nil) != want || err != nil && !errors.Is(err, limitspec.ErrBadInput) {
		t.Errorf("%s %v: Check = %v, want accepted %v", alg, p, err, want)
		return
	}
	for _, in := range extremes {
		_, err := l.Limit(context.Background(), limitspec.Request{Key: "k", Limit: lim, Now: at(in[0]), Cost: in[1]})
		if (err == nil) != want {
			t.Errorf("%s %v: Limit(now=%d, cost=%d) = %v, want accepted %v", alg, p, in[0], in[1], err, want)
		}
	}
}

// TestAcceptsWholeDomain tries the corners of every parameter domain: the
// limiter must accept exactly the limits docs/semantics.md allows (each
// parameter within its domain and the joint bound), so that the checks on
// exactness never refuse a documented limit, and decide the extremes of
// now_ms and cost under each without error.
func TestAcceptsWholeDomain(t *testing.T) {
	always := func(map[string]int64) bool { return true }
	windowed := func(lim int64) []domainParam { return []domainParam{{"limit", 1, lim}, {"window_ms", 1, 1e11}} }
	algs := []struct {
		name   string
		params []domainParam
		joint  func(p map[string]int64) bool
	}{
		{"fixed_window", windowed(1e12), always},
		{"token_bucket", []domainParam{{"capacity", 1, 1e12}, {"refill_tokens", 1, 1e12}, {"refill_ms", 1, 1e11}},
			func(p map[string]int64) bool { return bucketOK(p["capacity"], p["refill_ms"], p["refill_tokens"]) }},
		{"gcra", []domainParam{{"burst", 1, 1e12}, {"rate", 1, 1e12}, {"period_ms", 1, 1e11}},
			func(p map[string]int64) bool { return bucketOK(p["burst"], p["period_ms"], p["rate"]) }},
		{"leaky_bucket", []domainParam{{"capacity", 1, 1e12}, {"rate", 1, 1e12}, {"period_ms", 1, 1e11}},
			func(p map[string]int64) bool { return bucketOK(p["capacity"], p["period_ms"], p["rate"]) }},
		{"sliding_window", windowed(1e12), func(p map[string]int64) bool {
			return new(big.Int).Mul(big.NewInt(p["limit"]), big.NewInt(p["window_ms"])).Cmp(big.NewInt(1e15)) <= 0
		}},
		{"sliding_log", windowed(1e5), always},
		{"meta_window", windowed(1e5), always},
		{"bucket_window", []domainParam{{"limit", 1, 5e11}, {"window_ms", 1, 1e11}, {"bucket_ms", 1, 1e11}},
			func(p map[string]int64) bool {
				return p["window_ms"]%p["bucket_ms"] == 0 && p["window_ms"]/p["bucket_ms"] <= 3600
			}},
	}
	l := newLimiter(t, Options{NoSweeper: true})
	for _, a := range algs {
		accepted := 0
		for _, p := range combos(a.params) {
			want := a.joint(p)
			checkDomain(t, l, a.name, p, want)
			if want {
				accepted++
			}
		}
		if accepted == 0 {
			t.Errorf("%s: no combination accepted", a.name)
		}
	}
	// Just outside each end of a domain: refused.
	for _, p := range []map[string]int64{{"limit": 0, "window_ms": 1000}, {"limit": 1e12 + 1, "window_ms": 1000},
		{"limit": 5, "window_ms": 0}, {"limit": 5, "window_ms": 1e11 + 1}} {
		checkDomain(t, l, "fixed_window", p, false)
	}
}

// TestBucketWindowTiersAcceptWholeDomain: bucket_window's tiers 2 and 3
// are accepted exactly when both their parameters are 0 or both positive,
// with windows that are multiples of bucket_ms spanning at most 3600
// buckets, over the ends of every domain.
func TestBucketWindowTiersAcceptWholeDomain(t *testing.T) {
	tierOK := func(limit, window, bucket int64) bool {
		if limit == 0 || window == 0 {
			return limit == 0 && window == 0
		}
		return window%bucket == 0 && window/bucket <= 3600
	}
	l := newLimiter(t, Options{NoSweeper: true})
	for _, bucket := range []int64{1, 7, 1000, 1e11} {
		for _, limit := range []int64{1, 5e11} {
			for _, l2 := range []int64{0, 1, 5e11} {
				for _, w2 := range []int64{0, bucket, 3600 * bucket, 3601 * bucket, bucket + 1, 1e11} {
					for _, l3 := range []int64{0, 5e11} {
						for _, w3 := range []int64{0, 1e11, 2 * bucket} {
							p := map[string]int64{"limit": limit, "window_ms": bucket, "bucket_ms": bucket,
								"limit_2": l2, "window_ms_2": w2, "limit_3": l3, "window_ms_3": w3}
							checkDomain(t, l, "bucket_window", p, w2 <= 1e11 && w3 <= 1e11 && tierOK(l2, w2, bucket) && tierOK(l3, w3, bucket))
						}
					}
				}
			}
		}
	}
}
