package goimpl

import (
	"math"
	"math/rand"
	"testing"
)

// TestGCRAEquivalences: gcra with burst B, rate R, period P decides exactly
// as token_bucket with capacity B, refill R per P, and admits exactly as
// leaky_bucket with capacity B, whose other fields agree too but for its
// delay. The three are written differently in the spec (a token level, a
// TAT, a queue), so this checks the generated code of all three, forced
// calls (which put a key in debt) included.
func TestGCRAEquivalences(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for trial := 0; trial < 300; trial++ {
		b, r, p := rng.Int63n(30)+1, rng.Int63n(60)+1, rng.Int63n(10000)+1
		g, err1 := NewGCRA(GCRAParams{Burst: b, Rate: r, PeriodMs: p})
		tb, err2 := NewTokenBucket(TokenBucketParams{Capacity: b, RefillTokens: r, RefillMs: p})
		lb, err3 := NewLeakyBucket(LeakyBucketParams{Capacity: b, Rate: r, PeriodMs: p})
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatal(err1, err2, err3)
		}
		now := int64(t0)
		for i := 0; i < 400; i++ {
			switch rng.Intn(8) {
			case 0:
				now -= rng.Int63n(p)
			case 1:
				now += rng.Int63n(10 * p)
			default:
				now += rng.Int63n(p/r + 2)
			}
			key, cost := []string{"x", "y"}[rng.Intn(2)], rng.Int63n(b+2)
			call := func(l Limiter) Result {
				r, _ := l.Allow(key, now, cost)
				return r
			}
			forced := rng.Intn(5) == 0 // a forced call puts the key in debt, alike in all three
			if forced {
				call = func(l Limiter) Result {
					r, _ := l.(Forcer).Force(key, now, cost*3)
					return r
				}
			}
			x, y, z := call(g), call(tb), call(lb)
			z.DelayMs = 0
			if x != y || x != z {
				t.Fatalf("B=%d R=%d P=%d step %d (t %d, %s, cost %d, forced %v):\n gcra         %+v\n token_bucket %+v\n leaky_bucket %+v (delay aside)",
					b, r, p, i, now, key, cost, forced, x, y, z)
			}
		}
	}
}

// TestTieredBucketWindowIsConjunction: bucket_window with several tiers
// admits exactly when every single-tier bucket_window with one of its
// tiers (and the same buckets) would, fed the same admitted requests; its
// limit and remaining are the smallest of theirs, its retry_after_ms the
// longest wait of the tiers that deny, and its tier the one that binds.
func TestTieredBucketWindowIsConjunction(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	for trial := 0; trial < 300; trial++ {
		bucket := rng.Int63n(50) + 1
		tiers := 2 + rng.Intn(2)
		limits := make([]int64, tiers)
		windows := make([]int64, tiers)
		params := map[string]int64{"bucket_ms": bucket}
		for i := range limits {
			limits[i], windows[i] = rng.Int63n(20)+1, (rng.Int63n(20)+1)*bucket
			suffix := []string{"", "_2", "_3"}[i]
			params["limit"+suffix], params["window_ms"+suffix] = limits[i], windows[i]
		}
		tiered, err := New("bucket_window", params)
		if err != nil {
			t.Fatal(err)
		}
		singles := make([]Limiter, tiers)
		lmin := limits[0]
		for i := range singles {
			if singles[i], err = New("bucket_window", map[string]int64{"limit": limits[i], "window_ms": windows[i], "bucket_ms": bucket}); err != nil {
				t.Fatal(err)
			}
			lmin = min(lmin, limits[i])
		}
		now := int64(t0)
		for step := 0; step < 300; step++ {
			switch rng.Intn(10) {
			case 0:
				now -= rng.Int63n(3 * bucket)
			case 1:
				now += rng.Int63n(30 * bucket)
			default:
				now += rng.Int63n(bucket)
			}
			key, cost := []string{"x", "y"}[rng.Intn(2)], rng.Int63n(lmin+3)
			// What each tier alone would do: peek, then try if it would deny.
			var want Result
			want.Allowed, want.Limit, want.Remaining, want.RetryAfterMs = true, lmin, math.MaxInt64, -1
			retry := make([]int64, tiers)
			for i, s := range singles {
				p, err := s.Allow(key, now, 0)
				if err != nil {
					t.Fatal(err)
				}
				want.Remaining = min(want.Remaining, p.Remaining)
				if cost > p.Remaining {
					want.Allowed = false
					d, _ := s.Allow(key, now, cost) // denied: consumes nothing
					if d.Allowed {
						t.Fatalf("tier %d admits cost %d above its remaining %d", i+1, cost, p.Remaining)
					}
					retry[i] = d.RetryAfterMs
					want.RetryAfterMs = max(want.RetryAfterMs, d.RetryAfterMs)
				}
			}
			got, err := tiered.Allow(key, now, cost)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case want.Allowed:
				want.RetryAfterMs = -1
				want.Remaining -= cost
				for i := range limits { // the tier with the least room left
					r, _ := singles[i].Allow(key, now, 0)
					if r.Remaining-cost == want.Remaining && want.Tier == 0 {
						want.Tier = int64(i + 1)
					}
				}
			case cost > lmin:
				want.RetryAfterMs = -1
				for i := range limits {
					if limits[i] < cost && want.Tier == 0 {
						want.Tier = int64(i + 1)
					}
				}
			default:
				for i := range limits {
					if retry[i] == want.RetryAfterMs && want.Tier == 0 {
						want.Tier = int64(i + 1)
					}
				}
			}
			if got.Allowed != want.Allowed || got.Limit != want.Limit || got.Remaining != want.Remaining ||
				got.RetryAfterMs != want.RetryAfterMs || got.Tier != want.Tier {
				t.Fatalf("bucket %d, limits %v, windows %v, step %d (t %d, %s, cost %d):\n tiered %+v\n tiers  %+v (reset not compared)",
					bucket, limits, windows, step, now, key, cost, got, want)
			}
			if got.Allowed && cost > 0 {
				for i, s := range singles {
					if r, _ := s.Allow(key, now, cost); !r.Allowed {
						t.Fatalf("tier %d alone denies what the tiered limiter admitted", i+1)
					}
				}
			}
		}
	}
}
