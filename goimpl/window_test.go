package goimpl

import (
	"slices"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
)

// windowCases are limits with their windows worked out by hand from the
// parameters (docs/semantics.md, "Windows"): window_ms for the windows
// and the log; for the buckets, the time to refill or drain the whole
// limit, limit × period / rate, rounded up to a whole ms.
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

// TestQuotaWindows checks every algorithm's window, as the limit states
// it and as a decision's result reports it.
func TestQuotaWindows(t *testing.T) {
	covered := map[string]bool{}
	l := newLimiter(t, Options{NoSweeper: true})
	for _, tt := range windowCases {
		lim := limitOf(tt.alg, tt.params)
		res := decide(t, l, limitspec.Request{Key: "k", Limit: lim, Cost: 1, Now: at(t0)})
		if got, got2 := lim.QuotaWindow(), only(t, res).Window(); got != ms(tt.want) || got2 != ms(tt.want) {
			t.Errorf("%s: QuotaWindow() = %v, the result's Window() = %v; want %v", tt.name, got, got2, ms(tt.want))
		}
		covered[tt.alg] = true
	}
	for _, alg := range algorithms {
		if !covered[alg] {
			t.Errorf("no window case for %s", alg)
		}
	}
	// A limit out of its domain, or none, has no window.
	var nilGCRA *limitspec.GCRA
	for _, lim := range []limitspec.Limit{limitspec.GCRA{}, nilGCRA, limitspec.FixedWindow{}, limitspec.BucketWindow{}, nil} {
		if got := (limitspec.LimitResult{Limit: lim}).Window(); got != 0 {
			t.Errorf("the window of %#v: %v, want 0", lim, got)
		}
	}
}

// TestQuotaWindowIsTheTimeToBeWhole spends each limit's whole quota at
// once, on a fresh key, at a time when every window and bucket begins:
// the reset is then the window, and remaining is short of the quota 1 ms
// before it and whole at it. A sliding window also counts the previous
// window, weighted: spent at a window's start, it counts in full until
// the next begins and is whole one more window later, at twice the
// window.
func TestQuotaWindowIsTheTimeToBeWhole(t *testing.T) {
	const start = 86_400_000 * 20_000 // a multiple of every window_ms and bucket_ms above
	for _, tt := range windowCases {
		if tt.want == 0 {
			continue
		}
		l := newLimiter(t, Options{NoSweeper: true})
		lim := limitOf(tt.alg, tt.params)
		peek := only(t, decide(t, l, limitspec.Request{Key: "k", Limit: lim, Peek: true, Now: at(start)}))
		spent := only(t, decide(t, l, limitspec.Request{Key: "k", Limit: lim, Cost: peek.Quota, Now: at(start)}))
		if !spent.Allowed {
			t.Fatalf("%s: spending the quota %d: %+v", tt.name, peek.Quota, spent)
		}
		whole := lim.QuotaWindow()
		if tt.alg == "sliding_window" {
			whole *= 2
		}
		if spent.ResetAfter != whole {
			t.Errorf("%s: reset %v after spending the quota, want %v", tt.name, spent.ResetAfter, whole)
		}
		w := whole.Milliseconds()
		before := only(t, decide(t, l, limitspec.Request{Key: "k", Limit: lim, Peek: true, Now: at(start + w - 1)}))
		then := only(t, decide(t, l, limitspec.Request{Key: "k", Limit: lim, Peek: true, Now: at(start + w)}))
		if before.Remaining >= before.Quota || then.Remaining != then.Quota {
			t.Errorf("%s: %d of %d left at %d ms, %d of %d at %d ms; want short, then whole",
				tt.name, before.Remaining, before.Quota, w-1, then.Remaining, then.Quota, w)
		}
	}
}

// TestPolicyWindows checks each policy of spec/policies.yaml: its limits'
// names and windows, worked out by hand from their parameters, in order,
// as a decision reports them.
func TestPolicyWindows(t *testing.T) {
	burstQuota, _ := limitspec.BurstQuotaPolicy(3)
	userGlobal, _ := limitspec.UserGlobalPolicy(100)
	ipUser, _ := limitspec.IPUserPolicy()
	s, m, h := time.Second, time.Minute, time.Hour
	tests := []struct {
		policy *limitspec.Policy
		ids    map[string]string
		names  []string
		want   []time.Duration
	}{
		// gcra burst 5 at 10 per 1000 ms: 5 × 1000 / 10 = 500 ms; the
		// sliding log's window: 24 h.
		{burstQuota, map[string]string{"user": "u"}, []string{"burst", "daily"}, []time.Duration{500 * time.Millisecond, 24 * h}},
		// token bucket 20, 1 per 100 ms: 20 × 100 / 1 = 2000 ms; the
		// fixed window's: 1 min.
		{userGlobal, map[string]string{"user": "u"}, []string{"user", "global"}, []time.Duration{2 * s, m}},
		// six fixed windows: a second, a minute and an hour, per IP then
		// per user.
		{ipUser, map[string]string{"ip": "10.0.0.1", "user": "u"}, []string{"ip_second", "ip_minute", "ip_hour", "user_second", "user_minute", "user_hour"},
			[]time.Duration{s, m, h, s, m, h}},
	}
	l := newLimiter(t, Options{NoSweeper: true})
	for _, tt := range tests {
		res := decide(t, l, limitspec.Request{Policy: tt.policy, IDs: tt.ids, Cost: 1, Now: at(t0)})
		var names []string
		var windows []time.Duration
		for _, lr := range res.Limits {
			names, windows = append(names, lr.Name), append(windows, lr.Window())
		}
		if !slices.Equal(names, tt.names) || !slices.Equal(windows, tt.want) {
			t.Errorf("%s: limits %v, windows %v; want %v, %v", tt.policy.Name(), names, windows, tt.names, tt.want)
		}
	}
}
