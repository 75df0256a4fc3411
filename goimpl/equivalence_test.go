package goimpl

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
)

// TestGCRAEquivalences: gcra with burst B, rate R, period P decides
// exactly as token_bucket with capacity B, refill R per P, and admits
// exactly as leaky_bucket with capacity B, whose other fields agree too
// but for its delay. The three are written differently in the spec (a
// token level, a TAT, a queue), so this checks the generated code of all
// three, forced calls (which put a key in debt) included. One limiter
// decides all three.
func TestGCRAEquivalences(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 0))
	for trial := range 300 {
		b, r, p := rng.Int64N(30)+1, rng.Int64N(60)+1, rng.Int64N(10000)+1
		limits := []limitspec.Limit{
			limitspec.GCRA{Burst: b, Rate: r, Period: ms(p)},
			limitspec.TokenBucket{Capacity: b, RefillTokens: r, Refill: ms(p)},
			limitspec.LeakyBucket{Capacity: b, Rate: r, Period: ms(p)},
		}
		l := newLimiter(t, Options{NoSweeper: true})
		now := int64(t0)
		for i := range 400 {
			switch rng.IntN(8) {
			case 0:
				now -= rng.Int64N(p)
			case 1:
				now += rng.Int64N(10 * p)
			default:
				now += rng.Int64N(p/r + 2)
			}
			key, cost := []string{"x", "y"}[rng.IntN(2)], rng.Int64N(b+2)
			forced := rng.IntN(5) == 0 // a forced call puts the key in debt, alike in all three
			if forced {
				cost *= 3
			}
			var got [3]limitspec.Result
			for j, lim := range limits {
				got[j] = decide(t, l, limitspec.Request{Key: key, Limit: lim, Cost: cost, Peek: cost == 0, Force: forced, Now: at(now)})
			}
			x, y, z := bare(only(t, got[0])), bare(only(t, got[1])), bare(only(t, got[2]))
			z.Delay = 0
			if x != y || x != z || got[0].RetryAfter != got[2].RetryAfter || got[0].Allowed != got[2].Allowed {
				t.Fatalf("trial %d B=%d R=%d P=%d step %d (t %d, %s, cost %d, forced %v):\n gcra         %+v\n token_bucket %+v\n leaky_bucket %+v (delay aside)",
					trial, b, r, p, i, now, key, cost, forced, x, y, z)
			}
		}
	}
}

// tierCase is a tiered bucket_window of TestTieredBucketWindowIsConjunction
// and a limiter per tier deciding that tier alone.
type tierCase struct {
	bucket          int64
	limits, windows []int64
	tiered          limitspec.Limit
	singles         []limitspec.Limit
	alone           []*Limiter
	lmin            int64
}

// newTierCase draws a bucket and 2 or 3 tiers.
func newTierCase(t *testing.T, rng *rand.Rand) *tierCase {
	c := &tierCase{bucket: rng.Int64N(50) + 1, lmin: math.MaxInt64}
	tiers := 2 + rng.IntN(2)
	p := map[string]int64{"bucket_ms": c.bucket}
	for i := range tiers {
		limit, window := rng.Int64N(20)+1, (rng.Int64N(20)+1)*c.bucket
		c.limits, c.windows = append(c.limits, limit), append(c.windows, window)
		suffix := []string{"", "_2", "_3"}[i]
		p["limit"+suffix], p["window_ms"+suffix] = limit, window
		c.singles = append(c.singles, limitspec.BucketWindow{Limit: limit, Window: ms(window), Bucket: ms(c.bucket)})
		c.alone = append(c.alone, newLimiter(t, Options{NoSweeper: true})) // two tiers of one window would share a state
		c.lmin = min(c.lmin, limit)
	}
	c.tiered = limitOf("bucket_window", p)
	return c
}

// want returns what the tiers alone say of a request: admitted when each
// has room, the least remaining, the longest wait of those that deny, and
// the binding tier (from 1).
func (c *tierCase) want(t *testing.T, key string, now, cost int64) limitspec.LimitResult {
	w := limitspec.LimitResult{Allowed: true, Quota: c.lmin, Remaining: math.MaxInt64}
	retry := make([]time.Duration, len(c.singles))
	rem := make([]int64, len(c.singles))
	for i, s := range c.singles {
		p := only(t, decide(t, c.alone[i], limitspec.Request{Key: key, Limit: s, Peek: true, Now: at(now)}))
		rem[i] = p.Remaining
		w.Remaining = min(w.Remaining, p.Remaining)
		if cost > p.Remaining {
			w.Allowed = false
			d := only(t, decide(t, c.alone[i], limitspec.Request{Key: key, Limit: s, Cost: cost, Peek: cost == 0, Now: at(now)}))
			if d.Allowed {
				t.Fatalf("tier %d admits cost %d above its remaining %d", i+1, cost, p.Remaining)
			}
			retry[i] = d.RetryAfter
			w.RetryAfter = max(w.RetryAfter, d.RetryAfter)
		}
	}
	for i := range c.singles {
		switch {
		case w.Tier > 0:
		case w.Allowed: // the tier with the least room left
			if rem[i] == w.Remaining {
				w.Tier = i + 1
			}
		case cost > c.lmin: // the first whose limit is below the cost
			w.RetryAfter = limitspec.Never
			if c.limits[i] < cost {
				w.Tier = i + 1
			}
		case retry[i] == w.RetryAfter:
			w.Tier = i + 1
		}
	}
	if w.Allowed {
		w.Remaining -= cost
	}
	return w
}

// TestTieredBucketWindowIsConjunction: bucket_window with several tiers
// admits exactly when every single-tier bucket_window with one of its
// tiers (and the same buckets) would, fed the same admitted requests; its
// quota and remaining are the smallest of theirs, its retry the longest
// wait of the tiers that deny, and its tier the one that binds.
func TestTieredBucketWindowIsConjunction(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 0))
	for trial := range 300 {
		c := newTierCase(t, rng)
		l := newLimiter(t, Options{NoSweeper: true})
		now := int64(t0)
		for step := range 300 {
			switch rng.IntN(10) {
			case 0:
				now -= rng.Int64N(3 * c.bucket)
			case 1:
				now += rng.Int64N(30 * c.bucket)
			default:
				now += rng.Int64N(c.bucket)
			}
			key, cost := []string{"x", "y"}[rng.IntN(2)], rng.Int64N(c.lmin+3)
			want := c.want(t, key, now, cost)
			got := only(t, decide(t, l, limitspec.Request{Key: key, Limit: c.tiered, Cost: cost, Peek: cost == 0, Now: at(now)}))
			if got.Allowed != want.Allowed || got.Quota != want.Quota || got.Remaining != want.Remaining ||
				got.RetryAfter != want.RetryAfter || got.Tier != want.Tier {
				t.Fatalf("trial %d: bucket %d, limits %v, windows %v, step %d (t %d, %s, cost %d):\n tiered %+v\n tiers  %+v (reset not compared)",
					trial, c.bucket, c.limits, c.windows, step, now, key, cost, bare(got), want)
			}
			if got.Allowed && cost > 0 {
				for i, s := range c.singles {
					if r := decide(t, c.alone[i], limitspec.Request{Key: key, Limit: s, Cost: cost, Peek: cost == 0, Now: at(now)}); !r.Allowed {
						t.Fatalf("tier %d alone denies what the tiered limit admitted", i+1)
					}
				}
			}
		}
	}
}
