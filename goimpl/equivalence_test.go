package goimpl

import (
	"math/rand"
	"testing"
)

// TestGCRAEquivalences: gcra with burst B, rate R, period P decides exactly
// as token_bucket with capacity B, refill R per P, and admits exactly as
// leaky_bucket with capacity B, whose other fields agree too but for its
// delay. The three are written differently in the spec (a token level, a
// TAT, a queue), so this checks the generated code of all three.
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
			x, _ := g.Allow(key, now, cost)
			y, _ := tb.Allow(key, now, cost)
			z, _ := lb.Allow(key, now, cost)
			z.DelayMs = 0
			if x != y || x != z {
				t.Fatalf("B=%d R=%d P=%d step %d (t %d, %s, cost %d):\n gcra         %+v\n token_bucket %+v\n leaky_bucket %+v (delay aside)",
					b, r, p, i, now, key, cost, x, y, z)
			}
		}
	}
}
