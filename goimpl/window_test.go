package goimpl_test

import (
	"slices"
	"testing"

	"github.com/limitspec/limitspec/goimpl"
)

// windowCases are limiters with their windows worked out by hand from the
// parameters (spec/algorithms.yaml, window): window_ms for the windows and
// the log; for the buckets, the time to refill or drain the whole limit,
// limit × period / rate, rounded up to a whole ms.
var windowCases = []struct {
	name   string
	alg    string
	params map[string]int64
	want   int64
}{
	{"fixed window: window_ms", "fixed_window", map[string]int64{"limit": 10, "window_ms": 1000}, 1000},
	{"sliding window: window_ms", "sliding_window", map[string]int64{"limit": 10, "window_ms": 60000}, 60000},
	{"sliding log: window_ms", "sliding_log", map[string]int64{"limit": 5, "window_ms": 86400000}, 86400000},
	{"meta window: window_ms", "meta_window", map[string]int64{"limit": 3, "window_ms": 2500}, 2500},
	// 20 tokens, 1 per 100 ms: 20 × 100 / 1 = 2000 ms to refill from empty.
	{"token bucket, whole", "token_bucket", map[string]int64{"capacity": 20, "refill_tokens": 1, "refill_ms": 100}, 2000},
	// 10 tokens, 3 per s: 10 000 / 3 = 3333.3 ms, rounded up.
	{"token bucket, rounded up", "token_bucket", map[string]int64{"capacity": 10, "refill_tokens": 3, "refill_ms": 1000}, 3334},
	// A burst of 5 at 10 per s drains in 5 × 1000 / 10 = 500 ms.
	{"gcra, whole", "gcra", map[string]int64{"burst": 5, "rate": 10, "period_ms": 1000}, 500},
	// A burst of 5 at 3 per s: 5000 / 3 = 1666.7 ms, rounded up.
	{"gcra, rounded up", "gcra", map[string]int64{"burst": 5, "rate": 3, "period_ms": 1000}, 1667},
	// The largest window the requirements allow: 10^12 × 1000 / 10^4.
	{"gcra, largest", "gcra", map[string]int64{"burst": 1_000_000_000_000, "rate": 10_000, "period_ms": 1000}, 100_000_000_000},
	// A queue of 7 drained at 2 per s: 3500 ms.
	{"leaky bucket, whole", "leaky_bucket", map[string]int64{"capacity": 7, "rate": 2, "period_ms": 1000}, 3500},
	// A queue of 1 drained at 3 per s: 1000 / 3 = 333.3 ms, rounded up.
	{"leaky bucket, rounded up", "leaky_bucket", map[string]int64{"capacity": 1, "rate": 3, "period_ms": 1000}, 334},
	{"bucket window, one tier: window_ms", "bucket_window", map[string]int64{"limit": 100, "window_ms": 60000, "bucket_ms": 1000}, 60000},
	{"bucket window, two tiers: none", "bucket_window", map[string]int64{"limit": 100, "window_ms": 60000, "bucket_ms": 1000, "limit_2": 500, "window_ms_2": 600000}, 0},
	{"bucket window, tiers 1 and 3: none", "bucket_window", map[string]int64{"limit": 100, "window_ms": 60000, "bucket_ms": 1000, "limit_3": 500, "window_ms_3": 600000}, 0},
}

// TestWindowMs checks every algorithm's WindowMs against the table.
func TestWindowMs(t *testing.T) {
	covered := map[string]bool{}
	for _, tt := range windowCases {
		l, err := goimpl.New(tt.alg, tt.params)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		stopSweeper(l)
		w, ok := l.(goimpl.Windowed)
		if !ok {
			t.Errorf("%s: %T does not implement Windowed", tt.name, l)
			continue
		}
		if got := w.WindowMs(); got != tt.want {
			t.Errorf("%s: WindowMs() = %d, want %d", tt.name, got, tt.want)
		}
		covered[tt.alg] = true
	}
	for _, alg := range goimpl.Algorithms() {
		if !covered[alg] {
			t.Errorf("no WindowMs case for %s", alg)
		}
	}
}

// TestWindowMsIsTheTimeToBeWhole spends each limiter's whole limit at
// once, on a fresh key, at a time when every window and bucket begins:
// ResetAfterMs is then the window, remaining is short of the limit 1 ms
// before it and whole at it. A sliding window also counts the previous
// window, weighted: spent at a window's start, it counts in full until
// the next begins and is whole one more window later, at twice WindowMs.
func TestWindowMsIsTheTimeToBeWhole(t *testing.T) {
	const t0 = 86_400_000 * 20_000 // a multiple of every window_ms and bucket_ms above
	for _, tt := range windowCases {
		if tt.want == 0 {
			continue
		}
		l, err := goimpl.New(tt.alg, tt.params)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		stopSweeper(l)
		window := l.(goimpl.Windowed).WindowMs()
		peek, err := l.Allow("k", t0, 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := l.Allow("k", t0, peek.Limit)
		if err != nil || !r.Allowed {
			t.Fatalf("%s: spending the limit %d: %+v, %v", tt.name, peek.Limit, r, err)
		}
		whole := window
		if tt.alg == "sliding_window" {
			whole = 2 * window
		}
		if r.ResetAfterMs != whole {
			t.Errorf("%s: ResetAfterMs = %d after spending the limit, want %d", tt.name, r.ResetAfterMs, whole)
		}
		before, _ := l.Allow("k", t0+whole-1, 0)
		at, _ := l.Allow("k", t0+whole, 0)
		if before.Remaining >= before.Limit || at.Remaining != at.Limit {
			t.Errorf("%s: remaining %d of %d at %d ms, %d of %d at %d ms; want short, then whole",
				tt.name, before.Remaining, before.Limit, whole-1, at.Remaining, at.Limit, whole)
		}
	}
}

// TestWindowMsOfAZeroLimiter: a limiter not made by its constructor has
// no parameters, hence no window.
func TestWindowMsOfAZeroLimiter(t *testing.T) {
	var nilGCRA *goimpl.GCRA
	for _, w := range []goimpl.Windowed{&goimpl.GCRA{}, nilGCRA, &goimpl.FixedWindow{}, &goimpl.BucketWindow{}} {
		if got := w.WindowMs(); got != 0 {
			t.Errorf("%T zero: WindowMs() = %d, want 0", w, got)
		}
	}
}

// TestLimitWindowsMs checks each policy of spec/policies.yaml, its
// windows worked out by hand from its limits' parameters, in the order
// of LimitNames.
func TestLimitWindowsMs(t *testing.T) {
	tests := []struct {
		policy string
		params map[string]int64
		names  []string
		want   []int64
	}{
		// gcra burst 5 at 10 per 1000 ms: 5 × 1000 / 10 = 500; the
		// sliding log's window_ms: 24 h.
		{"burst_quota", map[string]int64{"daily.limit": 3}, []string{"burst", "daily"}, []int64{500, 86_400_000}},
		// token bucket 20, 1 per 100 ms: 20 × 100 / 1 = 2000; the fixed
		// window's window_ms: 1 min.
		{"user_global", map[string]int64{"global.limit": 100}, []string{"user", "global"}, []int64{2000, 60_000}},
		// six fixed windows: a second, a minute and an hour, per IP then
		// per user.
		{"ip_user", nil, []string{"ip_second", "ip_minute", "ip_hour", "user_second", "user_minute", "user_hour"},
			[]int64{1000, 60_000, 3_600_000, 1000, 60_000, 3_600_000}},
	}
	for _, tt := range tests {
		p, err := goimpl.NewPolicy(tt.policy, tt.params)
		if err != nil {
			t.Fatalf("%s: %v", tt.policy, err)
		}
		p.StopSweeper()
		if got := p.LimitNames(); !slices.Equal(got, tt.names) {
			t.Errorf("%s: LimitNames() = %v, want %v", tt.policy, got, tt.names)
		}
		if got := p.LimitWindowsMs(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: LimitWindowsMs() = %v, want %v", tt.policy, got, tt.want)
		}
	}
}

// stopSweeper stops a limiter's sweeper: the tests hold the time still.
func stopSweeper(l goimpl.Limiter) {
	if s, ok := l.(goimpl.SweepStopper); ok {
		s.StopSweeper()
	}
}
