package goimpl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/oracle"
)

// bind binds lim on l, failing the test if Bind refuses it.
func bind(tb testing.TB, l *Limiter, lim limitspec.Limit) *Bound {
	tb.Helper()
	b, err := l.Bind(lim)
	if err != nil {
		tb.Fatalf("Bind(%v): %v", lim, err)
	}
	return b
}

// TestBoundMatchesOracle: every limit of oraclePool bound once to one
// limiter, decided at random on three keys through the handle's Limit,
// through its Allow (at the limiter's clock) and through the limiter's
// own Limit, in turn on the same states, with forced calls, peeks, time
// going back (past the clock skew bound, too) and keys left to expire,
// decides as the oracle's models, one per limit: the three ways share
// one state per key and report the same results, named by the algorithm
// and holding the bound limit.
func TestBoundMatchesOracle(t *testing.T) {
	var clock atomic.Int64
	l := newLimiter(t, Options{NoSweeper: true, Now: func() time.Time { return at(clock.Load()) }})
	models := make([]oracle.Model, len(oraclePool))
	limits := make([]limitspec.Limit, len(oraclePool))
	bounds := make([]*Bound, len(oraclePool))
	for i, p := range oraclePool {
		models[i], limits[i] = mustOracle(t, p.alg, p.params), limitOf(p.alg, p.params)
		bounds[i] = bind(t, l, limits[i])
	}
	rng := rand.New(rand.NewPCG(7, 11))
	now := int64(t0)
	ways := [3]int{}
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
		clock.Store(now)
		i, key := rng.IntN(len(limits)), []string{"alice", "bob", "carol"}[rng.IntN(3)]
		way := rng.IntN(3)
		cost, force, inputs := rng.Int64N(5), rng.IntN(10) == 0, map[string]string{"meta": "m" + strconv.Itoa(step)}
		if way == 1 { // Allow: a cost of 1, not forced, no inputs, at the clock
			cost, force, inputs = 1, false, nil
		}
		ways[way]++
		got, err := decideWay(l, bounds[i], way, limitspec.Request{Key: key, Limit: limits[i], Cost: cost, Peek: cost == 0, Now: at(now), Force: force, Inputs: inputs})
		call := models[i].Decide
		if force {
			call = models[i].Force
		}
		o, oerr := call(key, now, cost, inputs)
		if err != nil || oerr != nil {
			t.Fatalf("step %d (way %d): %v; oracle: %v", step, way, err, oerr)
		}
		if want := fromOracle(o); bare(got) != want || got.Name != oraclePool[i].alg || got.Limit != limits[i] {
			t.Fatalf("step %d (way %d, %s %v, %s at %d, cost %d, forced %v):\n got  %+v\n want %+v, named %s, limit %v",
				step, way, oraclePool[i].alg, oraclePool[i].params, key, now, cost, force, got, want, oraclePool[i].alg, limits[i])
		}
	}
	t.Logf("decisions by the handle's Limit, its Allow and the limiter's Limit: %v", ways)
}

// decideWay decides req by way 0 (b.Limit, the request without its
// Limit), 1 (b.Allow, at the limiter's clock: req's cost must be 1) or 2
// (l.Limit, the limit's part of its result, checked against the
// result's own fields).
func decideWay(l *Limiter, b *Bound, way int, req limitspec.Request) (limitspec.LimitResult, error) {
	ctx := context.Background()
	switch way {
	case 0:
		req.Limit = nil
		return b.Limit(ctx, req)
	case 1:
		return b.Allow(ctx, req.Key)
	}
	res, err := l.Limit(ctx, req)
	if err != nil {
		return limitspec.LimitResult{}, err
	}
	lr := res.Limits[0]
	if len(res.Limits) != 1 || res.Allowed != lr.Allowed || res.RetryAfter != lr.RetryAfter || res.Delay != lr.Delay {
		return limitspec.LimitResult{}, fmt.Errorf("a limit's result %+v departs from its only limit's", res)
	}
	return lr, nil
}

// TestBoundRefusesAsLimit: a handle refuses a request's key, time, cost
// or input with the limiter's own message, matching ErrBadInput, and
// writes nothing; Bind refuses a limit as the limiter's Limit refuses
// it.
func TestBoundRefusesAsLimit(t *testing.T) {
	ctx := context.Background()
	fw := limitspec.FixedWindow{Limit: 2, Window: time.Second}
	mw := limitspec.MetaWindow{Limit: 2, Window: time.Second}
	requests := []limitspec.Request{
		{Key: "", Limit: fw, Now: at(t0), Cost: 1},
		{Key: "}x", Limit: fw, Now: at(t0), Cost: 1},
		{Key: "", Limit: fw, Now: at(-2), Cost: -1}, // the key before the time
		{Key: "k", Limit: fw, Now: at(-2), Cost: 1},
		{Key: "k", Limit: fw, Now: at(1<<45 + 1), Cost: 1},
		{Key: "k", Limit: fw, Now: at(-2), Cost: -1}, // the time before the cost
		{Key: "k", Limit: fw, Now: at(t0), Cost: -1},
		{Key: "k", Limit: fw, Now: at(t0), Cost: 1 << 53},
		{Key: "k", Limit: mw, Now: at(t0), Cost: 1, Inputs: map[string]string{"meta": strings.Repeat("x", 257)}},
		{Key: "k", Limit: fw, Now: time.Time{}.Add(1), Cost: 1}, // before the epoch
	}
	l := newLimiter(t, Options{NoSweeper: true})
	bounds := map[limitspec.Limit]*Bound{fw: bind(t, l, fw), mw: bind(t, l, mw)}
	for _, req := range requests {
		_, want := l.Limit(ctx, req)
		b := bounds[req.Limit]
		req.Limit = nil
		_, got := b.Limit(ctx, req)
		if want == nil || got == nil || got.Error() != want.Error() || !errors.Is(got, limitspec.ErrBadInput) {
			t.Errorf("%+v: the handle says %v, the limiter %v; want the limiter's ErrBadInput", req, got, want)
		}
	}
	if _, err := bounds[fw].Allow(ctx, ""); err == nil || err.Error() != "fixed_window: key must not be empty" {
		t.Errorf("Allow of an empty key: %v", err)
	}
	for _, lim := range []limitspec.Limit{fw, mw} {
		if n := probeOf(t, l, lim).Len(); n != 0 {
			t.Errorf("%T: the store holds %d states after refusals, want none", lim, n)
		}
	}
	var nilGCRA *limitspec.GCRA
	for _, lim := range []limitspec.Limit{nil, nilGCRA, limitspec.GCRA{Burst: 0, Rate: 1, Period: time.Second},
		limitspec.GCRA{Burst: 1, Rate: 1, Period: 1500 * time.Microsecond}, foreign{}, impostor{}} {
		_, want := l.Limit(ctx, limitspec.Request{Key: "k", Limit: lim, Cost: 1, Now: at(t0)})
		b, got := l.Bind(lim)
		if b != nil || want == nil || got == nil || got.Error() != want.Error() || !errors.Is(got, limitspec.ErrBadInput) {
			t.Errorf("Bind(%#v): %v, %v; want the limiter's refusal %v", lim, b, got, want)
		}
	}
}

// TestBoundRequests: a handle decides a request that names no limit, or
// the bound one (by value, or the pointer it was bound with), and
// refuses one that names another limit or a policy; a cancelled context
// is its error, before anything is decided.
func TestBoundRequests(t *testing.T) {
	ctx := context.Background()
	gcra := limitspec.GCRA{Burst: 4, Rate: 1, Period: time.Second}
	other := limitspec.GCRA{Burst: 5, Rate: 1, Period: time.Second}
	policy, err := limitspec.BurstQuotaPolicy(3)
	if err != nil {
		t.Fatal(err)
	}
	l := newLimiter(t, Options{NoSweeper: true})
	byValue, byPointer := bind(t, l, gcra), bind(t, l, &gcra)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tests := []struct {
		name string
		b    *Bound
		req  limitspec.Request
		ctx  context.Context
		want string // the error's start; "" for a decision
	}{
		{"no limit", byValue, limitspec.Request{Key: "k", Cost: 1, Now: at(t0)}, ctx, ""},
		{"the bound limit", byValue, limitspec.Request{Key: "k", Limit: gcra, Cost: 1, Now: at(t0)}, ctx, ""},
		{"the pointer it was bound with", byPointer, limitspec.Request{Key: "k", Limit: &gcra, Cost: 1, Now: at(t0)}, ctx, ""},
		{"the value of the pointer it was bound with", byPointer, limitspec.Request{Key: "k", Limit: gcra, Cost: 1, Now: at(t0)}, ctx, ""},
		{"another limit", byValue, limitspec.Request{Key: "k", Limit: other, Cost: 1, Now: at(t0)}, ctx,
			"gcra: a request to a bound limit names it or no Limit, not {Burst:5 Rate:1 Period:1s}"},
		{"a pointer to another limit", byValue, limitspec.Request{Key: "k", Limit: &other, Cost: 1, Now: at(t0)}, ctx,
			"gcra: a request to a bound limit names it or no Limit"},
		{"a policy", byValue, limitspec.Request{Key: "k", Policy: policy, Cost: 1, Now: at(t0)}, ctx,
			"gcra: a request to a bound limit names no Policy"},
		{"a cancelled context", byValue, limitspec.Request{Key: "k", Cost: 1, Now: at(t0)}, cancelled, "context canceled"},
	}
	decided := int64(0)
	for _, tt := range tests {
		res, err := tt.b.Limit(tt.ctx, tt.req)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v, want a decision", tt.name, err)
		case tt.want == "":
			decided++
			if !res.Allowed || res.Remaining != 4-decided || res.Limit != gcra {
				t.Errorf("%s: %+v; want admitted, %d left of the bound limit's 4", tt.name, res, 4-decided)
			}
		case err == nil || !strings.HasPrefix(err.Error(), tt.want):
			t.Errorf("%s: %v, want an error starting %q", tt.name, err, tt.want)
		case tt.ctx == ctx && !errors.Is(err, limitspec.ErrBadInput):
			t.Errorf("%s: %v does not match ErrBadInput", tt.name, err)
		}
	}
	if _, err := byValue.Allow(cancelled, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("Allow with a cancelled context: %v", err)
	}
}

// TestBoundKeepsItsLimit: a handle decides by the value its limit had
// when bound, and reports that value, even when the limit was given by a
// pointer that is changed afterwards.
func TestBoundKeepsItsLimit(t *testing.T) {
	gcra := limitspec.GCRA{Burst: 2, Rate: 1, Period: time.Second}
	l := newLimiter(t, Options{NoSweeper: true})
	b := bind(t, l, &gcra)
	gcra.Burst = 100
	res, err := b.Limit(context.Background(), limitspec.Request{Key: "k", Cost: 1, Now: at(t0)})
	want := limitspec.GCRA{Burst: 2, Rate: 1, Period: time.Second}
	if err != nil || res.Quota != 2 || res.Remaining != 1 || res.Limit != want {
		t.Errorf("%+v, %v; want a quota of 2, 1 left, reported with the limit %v", res, err, want)
	}
}

// TestBoundPolicyMatchesOracle: spec policies bound once, decided at
// random through the handle's Limit and LimitInto and the limiter's own
// Limit, in turn on the same states, decide as the oracle's model.
func TestBoundPolicyMatchesOracle(t *testing.T) {
	ctx := context.Background()
	for _, spec := range []policySpec{ipUserSpec, burstQuota(1000), everyAlgSpec} {
		t.Run(spec.name, func(t *testing.T) {
			p, o := spec.build(t)
			l := newLimiter(t, Options{NoSweeper: true})
			b, err := l.BindPolicy(p)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(5, uint64(len(spec.name))))
			now := int64(t0)
			var into limitspec.Result
			for step := range 3000 {
				now += rng.Int64N(150)
				ids := map[string]string{}
				for _, id := range p.Identities() {
					ids[id] = id + strconv.Itoa(rng.IntN(3))
				}
				cost, force := rng.Int64N(4), rng.IntN(10) == 0
				req := limitspec.Request{IDs: ids, Cost: cost, Peek: cost == 0, Force: force, Now: at(now)}
				var res limitspec.Result
				switch way := step % 3; way {
				case 0:
					res, err = b.Limit(ctx, req)
				case 1:
					req.Policy = p
					err = b.LimitInto(ctx, req, &into)
					res = into
				default:
					req.Policy = p
					res, err = l.Limit(ctx, req)
				}
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				call := o.Decide
				if force {
					call = o.Force
				}
				want, err := call(ids, now, cost)
				if err != nil {
					t.Fatal(err)
				}
				checkPolicyResult(t, fmt.Sprintf("step %d (%v at %d, cost %d, forced %v)", step, ids, now, cost, force), p, res, want)
			}
		})
	}
}

// TestBindPolicyRefusals: BindPolicy refuses what Check refuses, with its
// message; a policy's handle refuses a request naming a limit or another
// policy, and a request's identities as the limiter does.
func TestBindPolicyRefusals(t *testing.T) {
	ctx := context.Background()
	l := newLimiter(t, Options{NoSweeper: true})
	impostorPolicy, err := limitspec.NewPolicy("p", limitspec.PolicyLimit{Name: "a", Limit: impostor{}, Identity: "u"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*limitspec.Policy{nil, {}, impostorPolicy} {
		want := l.Check(limitspec.Request{Policy: p})
		b, got := l.BindPolicy(p)
		if b != nil || want == nil || got == nil || got.Error() != want.Error() || !errors.Is(got, limitspec.ErrBadInput) {
			t.Errorf("BindPolicy(%v): %v, %v; want Check's refusal %v", p, b, got, want)
		}
	}
	quota, err := limitspec.BurstQuotaPolicy(3)
	if err != nil {
		t.Fatal(err)
	}
	other, err := limitspec.BurstQuotaPolicy(3) // equal, but another policy
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.BindPolicy(quota)
	if err != nil {
		t.Fatal(err)
	}
	alice := map[string]string{"user": "alice"}
	for _, tt := range []struct {
		req  limitspec.Request
		want string
	}{
		{limitspec.Request{IDs: alice, Limit: limitspec.GCRA{Burst: 1, Rate: 1, Period: time.Second}, Now: at(t0)},
			"burst_quota: a request to a bound policy names no Limit"},
		{limitspec.Request{IDs: alice, Policy: other, Now: at(t0)},
			"burst_quota: a request to a bound policy names it or no Policy, not burst_quota"},
		{limitspec.Request{IDs: map[string]string{"user": ""}, Now: at(t0)}, "burst_quota: identity user must not be empty"},
		{limitspec.Request{IDs: alice, Now: at(t0), Cost: -1}, "burst_quota: cost must be an integer in [0, 9007199254740991], got -1"},
	} {
		_, err := b.Limit(ctx, tt.req)
		if err == nil || err.Error() != tt.want || !errors.Is(err, limitspec.ErrBadInput) {
			t.Errorf("%+v: %v, want ErrBadInput %q", tt.req, err, tt.want)
		}
	}
	if res, err := b.Limit(ctx, limitspec.Request{IDs: alice, Policy: quota, Cost: 1, Now: at(t0)}); err != nil || !res.Allowed {
		t.Errorf("a request naming the bound policy: %+v, %v", res, err)
	}
}

// TestBoundAllocations: a handle's decision on an existing key whose
// state is a few integers allocates nothing, by Allow or by Limit, in a
// store of 10000 keys as in a store of one. BenchmarkBound measures the
// same.
func TestBoundAllocations(t *testing.T) {
	for _, alg := range []string{"fixed_window", "gcra", "leaky_bucket", "sliding_window", "token_bucket"} {
		for _, keys := range []int{1, 10000} {
			l := newLimiter(t, Options{NoSweeper: true})
			b := bind(t, l, limitOf(alg, largeParams[alg]))
			for k := range keys {
				if _, err := b.Allow(context.Background(), "user"+strconv.Itoa(k)); err != nil {
					t.Fatal(err)
				}
			}
			now := int64(t0)
			allow := testing.AllocsPerRun(1000, func() {
				if _, err := b.Allow(context.Background(), "user0"); err != nil {
					t.Fatal(err)
				}
			})
			limit := testing.AllocsPerRun(1000, func() {
				now++
				if _, err := b.Limit(context.Background(), limitspec.Request{Key: "user0", Cost: 1, Now: at(now)}); err != nil {
					t.Fatal(err)
				}
			})
			if allow != 0 || limit != 0 {
				t.Errorf("%s among %d keys: %.1f allocations per Allow, %.1f per Limit; want none", alg, keys, allow, limit)
			}
		}
	}
}

// TestConcurrentBound: goroutines deciding one key through one handle,
// and through the limiter, at one instant, get exactly the limit
// admitted between them (run with -race).
func TestConcurrentBound(t *testing.T) {
	const limit, goroutines, each = 1000, 16, 200
	gcra := limitspec.GCRA{Burst: limit, Rate: 1, Period: time.Minute}
	l := newLimiter(t, Options{Now: func() time.Time { return at(t0) }})
	b := bind(t, l, gcra)
	var admitted atomic.Int64
	done := make(chan struct{})
	for g := range goroutines {
		go func() {
			defer func() { done <- struct{}{} }()
			for range each {
				var res limitspec.LimitResult
				var err error
				if g%2 == 0 {
					res, err = b.Allow(context.Background(), "shared")
				} else {
					var r limitspec.Result
					r, err = l.Allow(context.Background(), "shared", gcra)
					res.Allowed = r.Allowed
				}
				if err != nil {
					t.Error(err)
					return
				}
				if res.Allowed {
					admitted.Add(1)
				}
			}
		}()
	}
	for range goroutines {
		<-done
	}
	if got := admitted.Load(); got != limit {
		t.Errorf("admitted %d of %d requests, want exactly %d", got, goroutines*each, limit)
	}
}
