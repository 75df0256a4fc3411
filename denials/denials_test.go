package denials_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/denials"
	"github.com/limitspec/limitspec/goimpl"
)

// counting is a primary that counts its calls.
type counting struct {
	limitspec.Limiter
	calls atomic.Int64
}

func (c *counting) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	c.calls.Add(1)
	return c.Limiter.Limit(ctx, req)
}

func newMemory(t *testing.T) *goimpl.Limiter {
	t.Helper()
	m, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func newCache(t *testing.T, primary limitspec.Limiter) *denials.Limiter {
	t.Helper()
	l, err := denials.New(primary, denials.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var base = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// requests are the subjects of the traces: a limit of each algorithm and
// a policy, small enough to be denied often.
func requests(t *testing.T) map[string]limitspec.Request {
	policy, err := limitspec.BurstQuotaPolicy(40)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, id := range policy.Identities() {
		ids[id] = "u"
	}
	return map[string]limitspec.Request{
		"fixed_window":   {Key: "k", Limit: limitspec.FixedWindow{Limit: 5, Window: 10 * time.Second}},
		"token_bucket":   {Key: "k", Limit: limitspec.TokenBucket{Capacity: 5, RefillTokens: 1, Refill: time.Second}},
		"gcra":           {Key: "k", Limit: limitspec.GCRA{Burst: 5, Rate: 1, Period: time.Second}},
		"sliding_window": {Key: "k", Limit: limitspec.SlidingWindow{Limit: 5, Window: 10 * time.Second}},
		"leaky_bucket":   {Key: "k", Limit: limitspec.LeakyBucket{Capacity: 5, Rate: 1, Period: time.Second}},
		"sliding_log":    {Key: "k", Limit: limitspec.SlidingLog{Limit: 5, Window: 10 * time.Second}},
		"bucket_window":  {Key: "k", Limit: limitspec.BucketWindow{Limit: 5, Window: 10 * time.Second, Bucket: time.Second}},
		"meta_window":    {Key: "k", Limit: limitspec.MetaWindow{Limit: 5, Window: 10 * time.Second}},
		"burst_quota":    {Policy: policy, IDs: ids},
	}
}

// TestSameAsPrimary: on a random trace of one caller (costs 0 to 2, a
// forced call now and then, steps of 0 to 1.5 s), the cache decides as
// its primary alone does, with the same waits: allowed, RetryAfter,
// Delay, the binding limit and each limit's ResetAfter; for a cost of 1,
// the binding limit's Remaining too (0 when denied; the others' are as of
// the denial). It answers part of the trace itself.
func TestSameAsPrimary(t *testing.T) {
	for name, req := range requests(t) {
		t.Run(name, func(t *testing.T) {
			alone, primary := newMemory(t), &counting{Limiter: newMemory(t)}
			cache := newCache(t, primary)
			rng := rand.New(rand.NewPCG(5, 6))
			now := base
			for step := range 600 {
				now = now.Add(time.Duration(rng.IntN(1500)) * time.Millisecond * time.Duration(rng.IntN(2)))
				r := req
				r.Now, r.Cost, r.Force = now, []int64{0, 1, 1, 1, 1, 2}[rng.IntN(6)], rng.IntN(20) == 0
				want, err := alone.Limit(t.Context(), r)
				if err != nil {
					t.Fatal(err)
				}
				got, err := cache.Limit(t.Context(), r)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(summary(want, r.Cost), summary(got, r.Cost)); diff != "" {
					t.Fatalf("step %d (cost %d, forced %v): the cache differs from the primary alone (-alone +cache):\n%s", step, r.Cost, r.Force, diff)
				}
			}
			st := cache.Stats()
			if st.Hits < 50 || st.Hits+st.Misses != 600 || int64(st.Misses) != primary.calls.Load() {
				t.Errorf("stats %+v, primary calls %d: want 50 hits at least, and every miss a call", st, primary.calls.Load())
			}
		})
	}
}

// summary is what TestSameAsPrimary compares of a result.
func summary(res limitspec.Result, cost int64) string {
	s := fmt.Sprintf("allowed %v retry %v delay %v binding %d side %v", res.Allowed, res.RetryAfter, res.Delay, res.Binding, res.Side)
	for i, l := range res.Limits {
		s += fmt.Sprintf("\n%s: allowed %v retry %v reset %v", l.Name, l.Allowed, l.RetryAfter, l.ResetAfter)
		if cost == 1 && (res.Allowed || i == res.Binding) {
			s += fmt.Sprintf(" remaining %d", l.Remaining)
		}
	}
	return s
}

// TestOthersOnlyConsume: two processes share a primary; the first's
// cache answers its denials while the second admits and forces requests
// on the same key. Every denial the cache answers is one the primary
// would give then: its Remaining is below the cost.
func TestOthersOnlyConsume(t *testing.T) {
	for name, req := range requests(t) {
		t.Run(name, func(t *testing.T) {
			shared := newMemory(t)
			cache := newCache(t, shared)
			rng := rand.New(rand.NewPCG(7, 8))
			now := base
			for range 600 {
				now = now.Add(time.Duration(rng.IntN(400)) * time.Millisecond)
				other := req
				other.Now, other.Cost, other.Force = now, 1, rng.IntN(4) == 0
				if _, err := shared.Limit(t.Context(), other); err != nil {
					t.Fatal(err)
				}
				r := req
				r.Now, r.Cost = now, 1
				before := cache.Stats().Hits
				got, err := cache.Limit(t.Context(), r)
				if err != nil || cache.Stats().Hits == before {
					continue
				}
				peek := r
				peek.Cost, peek.Peek = 0, true
				state, err := shared.Limit(t.Context(), peek)
				if err != nil {
					t.Fatal(err)
				}
				if got.Allowed || state.Allowed && state.Limits[state.Binding].Remaining >= r.Cost {
					t.Fatalf("at %v the cache denied a cost the primary would admit: %+v", now.Sub(base), state)
				}
			}
			if cache.Stats().Hits < 50 {
				t.Errorf("stats %+v: the trace hardly used the cache", cache.Stats())
			}
		})
	}
}

// TestHotKey: a thousand requests on a key denied for a minute reach the
// primary once.
func TestHotKey(t *testing.T) {
	primary := &counting{Limiter: newMemory(t)}
	cache := newCache(t, primary)
	req := limitspec.Request{Key: "hot", Limit: limitspec.FixedWindow{Limit: 1, Window: time.Minute}, Cost: 1, Now: base}
	if res, err := cache.Limit(t.Context(), req); err != nil || !res.Allowed {
		t.Fatal(res, err)
	}
	for i := range 1000 {
		req.Now = base.Add(time.Duration(i) * time.Millisecond)
		res, err := cache.Limit(t.Context(), req)
		if err != nil || res.Allowed || res.RetryAfter != time.Minute-time.Duration(i)*time.Millisecond {
			t.Fatalf("request %d: %+v, %v; want denied, retry after the window's end", i, res, err)
		}
	}
	if got := primary.calls.Load(); got != 2 {
		t.Errorf("%d calls of the primary, want 2 (the admission, the first denial)", got)
	}
}

// TestReset clears the key's denial.
func TestReset(t *testing.T) {
	cache := newCache(t, newMemory(t))
	req := limitspec.Request{Key: "k", Limit: limitspec.FixedWindow{Limit: 1, Window: time.Minute}, Cost: 1, Now: base}
	for range 2 {
		if _, err := cache.Limit(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	if err := cache.Reset(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if res, err := cache.Limit(t.Context(), req); err != nil || !res.Allowed {
		t.Fatalf("after a reset: %+v, %v; want admitted", res, err)
	}
}

// TestNewRefuses what cannot work.
func TestNewRefuses(t *testing.T) {
	var typedNil *goimpl.Limiter
	for name, tt := range map[string]struct {
		primary limitspec.Limiter
		opts    denials.Options
		want    string
	}{
		"a nil primary":       {nil, denials.Options{}, "the primary limiter is nil"},
		"a typed nil primary": {typedNil, denials.Options{}, "the primary limiter is nil"},
		"negative Keys":       {newMemory(t), denials.Options{Keys: -1}, "Options.Keys must be ≥ 0, got -1"},
	} {
		_, err := denials.New(tt.primary, tt.opts)
		if want := "denials: misconfigured: " + tt.want; !errors.Is(err, limitspec.ErrMisconfigured) || err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q, matching ErrMisconfigured", name, err, want)
		}
	}
}

// sided is a primary whose results carry the side given.
type sided struct {
	limitspec.Limiter
	side  limitspec.Side
	calls atomic.Int64
}

func (s *sided) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	s.calls.Add(1)
	res, err := s.Limiter.Limit(ctx, req)
	res.Side = s.side
	return res, err
}

// TestOnlyPrimaryDenials: a denial made without the primary (by a
// fallback's local limiter, or failing closed) is not kept.
func TestOnlyPrimaryDenials(t *testing.T) {
	for _, side := range []limitspec.Side{limitspec.Fallback, limitspec.FailClosed} {
		p := &sided{Limiter: newMemory(t), side: side}
		cache := newCache(t, p)
		req := limitspec.Request{Key: "k", Limit: limitspec.FixedWindow{Limit: 1, Window: time.Minute}, Cost: 1, Now: base}
		for range 3 {
			if _, err := cache.Limit(t.Context(), req); err != nil {
				t.Fatal(err)
			}
		}
		if p.calls.Load() != 3 {
			t.Errorf("%v: %d calls for 3 requests; want 3, no denial kept", side, p.calls.Load())
		}
	}
}
