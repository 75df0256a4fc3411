package main

import (
	"maps"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
)

// TestTraceOutcomes decides the trace and counts the admissions of each
// phase, against values worked by hand from the contract's rule of each
// algorithm (10 per 10 s everywhere; times in s from the trace's start).
func TestTraceOutcomes(t *testing.T) {
	const window = 10 * time.Second
	// token_bucket, gcra and leaky_bucket admit alike (the contract: gcra
	// decides as token_bucket, leaky_bucket admits as gcra). One token a
	// second. Steady: before its n-th request (from 0, at 0.8n s) the
	// bucket holds 10 - n + 0.8n ≥ 1 up to n = 45, so all 25 pass, leaving
	// 4.2 tokens at 19.2 s, full again by 25 s. Burst: before its k-th
	// request (at 25 + 0.1k s) it holds 10 - 0.9k, ≥ 1 up to k = 10, so 11
	// pass and the bucket is empty at 26.0 s; 0.1 to 0.4 token is too
	// little for the other 4. Full again at 39 s, the edge burst goes the
	// same way: 11 pass (to 40.0 s), 9 do not. Slow: 2 tokens come in
	// every 2 s, 1 goes out: all 9 pass.
	bucket := map[string]int{"steady 1.25/s": 25, "burst": 11, "edge burst": 11, "slow 0.5/s": 9}
	tests := []struct {
		limit limitspec.Limit
		want  map[string]int
	}{
		// Windows [0,10) and [10,20) hold 13 and 12 steady requests: 10 of
		// each pass. The burst is alone in [20,30): 10 of 15. The edge
		// burst is 10 requests in [30,40), then 10 in [40,50): all 20 pass,
		// twice the limit within 2 s; then 42 to 48 s find [40,50) full,
		// 50 to 58 s pass.
		{limitspec.FixedWindow{Limit: 10, Window: window},
			map[string]int{"steady 1.25/s": 20, "burst": 10, "edge burst": 20, "slow 0.5/s": 5}},
		// Counted over (now - 10 s, now]. Steady: 0 to 7.2 s pass, 8.0 to
		// 9.6 s are denied; from 10.4 s each request finds the one 10.4 s
		// before it gone, so 10.4 to 17.6 s pass, then 18.4 and 19.2 s find
		// 10 again. Burst: at 25.0 s the window still holds 15.2, 16.0, 16.8
		// and 17.6 s: 25.0 to 25.6 s pass (7: 15.2 s leaves at 25.2 s), 16.0
		// s leaves at 26.0 s, which passes too: 8. Edge burst: the window
		// is empty at 39.0 s: 10 pass, then the 10 after 40 s find it full.
		// Slow: 42 to 48 s find 39.0 to 39.9 s in the window; 50 to 58 s
		// pass.
		{limitspec.SlidingLog{Limit: 10, Window: window},
			map[string]int{"steady 1.25/s": 20, "burst": 8, "edge burst": 10, "slow 0.5/s": 5}},
		// Each window opens at the first admission once the last has ended:
		// at 0 s (8.0 to 9.6 s denied), 10.4 s (18.4 and 19.2 s denied), 25
		// s (10 of 15), 39 s (until 49 s: the 10 after 40 s, and 42 to 48 s,
		// denied), 50 s (50 to 58 s pass).
		{limitspec.MetaWindow{Limit: 10, Window: window},
			map[string]int{"steady 1.25/s": 20, "burst": 10, "edge burst": 10, "slow 0.5/s": 5}},
		// Each admitted request holds its slot 3 s. Steady: requests 0.8 s
		// apart hold at most 4 slots at once (those of the last 2.4 s): all
		// 25 pass. Burst: 15 within 1.4 s, the first 10 take the slots, the
		// other 5 find none. Edge burst: 20 within 1.9 s, 10 pass. Slow: at
		// 42 s the commit of the request of 39.0 s, due then, frees a slot
		// first (9 still held), and from 44 s at most one is held: all 9.
		{limitspec.Concurrency{Limit: 10},
			map[string]int{"steady 1.25/s": 25, "burst": 10, "edge burst": 10, "slow 0.5/s": 9}},
		{limitspec.TokenBucket{Capacity: 10, RefillTokens: 10, Refill: window}, bucket},
		{limitspec.GCRA{Burst: 10, Rate: 10, Period: window}, bucket},
		{limitspec.LeakyBucket{Capacity: 10, Rate: 10, Period: window}, bucket},
	}
	for _, tt := range tests {
		t.Run(tt.limit.Algorithm().Name, func(t *testing.T) {
			ds, err := decide(t.Context(), tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, d := range ds {
				if d.allowed {
					got[trace[d.phase].name]++
				}
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("admitted per phase: %v; want %v", got, tt.want)
			}
		})
	}
}

// TestBoundaryBurst: within the trace, fixed_window admits twice its limit
// in 10 s (the edge burst), while sliding_log never admits more than its
// limit in any 10 s.
func TestBoundaryBurst(t *testing.T) {
	tests := []struct {
		limit limitspec.Limit
		most  int // the most admissions in any 10 s of the trace
	}{
		{limitspec.FixedWindow{Limit: 10, Window: 10 * time.Second}, 20},
		{limitspec.SlidingLog{Limit: 10, Window: 10 * time.Second}, 10},
	}
	for _, tt := range tests {
		ds, err := decide(t.Context(), tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		if got := mostWithin(ds, 10*time.Second); got != tt.most {
			t.Errorf("%s admitted at most %d in 10 s; want %d", tt.limit.Algorithm(), got, tt.most)
		}
	}
}

// mostWithin is the most admissions of ds within any span shorter than d.
func mostWithin(ds []decision, d time.Duration) int {
	most := 0
	for i, first := range ds {
		n := 0
		for _, later := range ds[i:] {
			if later.allowed && first.allowed && later.at-first.at < d {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}
