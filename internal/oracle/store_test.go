package oracle

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// storeCall is one call through a Store: the limit it is decided under
// and what docs/semantics.md, "Keys", makes of it, worked by hand.
type storeCall struct {
	params      map[string]int64
	t, cost     int64
	force, view bool
	want        Result
	entries     []Entry // a view's
}

// TestStoreChangingLimits replays limits changing between calls on one
// key. The expected values are worked from the contract: a state written
// under other amounts reads clamped to at most twice the new limit's
// worth (a bucket: within one capacity of empty or full), and a change of
// a parameter the state is measured in starts afresh.
func TestStoreChangingLimits(t *testing.T) {
	fw := func(limit, window int64) map[string]int64 {
		return map[string]int64{"limit": limit, "window_ms": window}
	}
	g := func(burst int64) map[string]int64 {
		return map[string]int64{"burst": burst, "rate": 1, "period_ms": 1000}
	}
	tb := func(capacity int64) map[string]int64 {
		return map[string]int64{"capacity": capacity, "refill_tokens": 1, "refill_ms": 1000}
	}
	tests := []struct {
		name      string
		algorithm string
		calls     []storeCall
	}{
		{"fixed_window: lowered, raised, another window", "fixed_window", []storeCall{
			{params: fw(10, 1000), cost: 10, want: Result{Allowed: true, Limit: 10, Remaining: 0, RetryAfterMs: -1, ResetAfterMs: 1000}},
			{params: fw(10, 1000), cost: 10, force: true, want: Result{Limit: 10, RetryAfterMs: 1000, ResetAfterMs: 1000}},
			// 20 used reads as 2·3 = 6 under limit 3: denied, nothing written.
			{params: fw(3, 1000), t: 1, cost: 1, want: Result{Limit: 3, RetryAfterMs: 999, ResetAfterMs: 999}},
			// Raised to 30: the 20 stored are still there, 10 fit.
			{params: fw(30, 1000), t: 2, cost: 10, want: Result{Allowed: true, Limit: 30, RetryAfterMs: -1, ResetAfterMs: 998}},
			{params: fw(30, 1000), t: 2, cost: 1, want: Result{Limit: 30, RetryAfterMs: 998, ResetAfterMs: 998}},
			// Another window is another state: fresh.
			{params: fw(10, 2000), t: 3, cost: 1, want: Result{Allowed: true, Limit: 10, Remaining: 9, RetryAfterMs: -1, ResetAfterMs: 1997}},
		}},
		{"gcra: a lowered burst reads the queue as at most two bursts", "gcra", []storeCall{
			// T = 1000 ms, tau = 10000 ms: ten cells take TAT to 10000.
			{params: g(10), cost: 10, want: Result{Allowed: true, Limit: 10, RetryAfterMs: -1, ResetAfterMs: 10000}},
			// Burst 2: tau 2000, TAT read as 0 + 2·2000 = 4000; one more
			// cell conforms at 4000 + 1000 - 2000 = 3000.
			{params: g(2), cost: 1, want: Result{Limit: 2, RetryAfterMs: 3000, ResetAfterMs: 4000}},
			// Burst 20: tau 20000, TAT 10000 as stored: 10 cells of room.
			{params: g(20), cost: 0, want: Result{Allowed: true, Limit: 20, Remaining: 10, RetryAfterMs: -1, ResetAfterMs: 10000}},
			// Another rate is another state: fresh.
			{params: map[string]int64{"burst": 10, "rate": 2, "period_ms": 1000}, cost: 1,
				want: Result{Allowed: true, Limit: 10, Remaining: 9, RetryAfterMs: -1, ResetAfterMs: 500}},
		}},
		{"token_bucket: debt beyond the new capacity is forgiven", "token_bucket", []storeCall{
			// Ten tokens, then ten forced: level -10.
			{params: tb(10), cost: 10, want: Result{Allowed: true, Limit: 10, RetryAfterMs: -1, ResetAfterMs: 10000}},
			{params: tb(10), cost: 10, force: true, want: Result{Limit: 10, RetryAfterMs: 20000, ResetAfterMs: 20000}},
			// Capacity 4: the level reads as -4; one token in 5 s.
			{params: tb(4), cost: 1, want: Result{Limit: 4, RetryAfterMs: 5000, ResetAfterMs: 8000}},
			// Capacity 10 again: nothing was written, the level is -10.
			{params: tb(10), cost: 1, want: Result{Limit: 10, RetryAfterMs: 11000, ResetAfterMs: 20000}},
		}},
		{"sliding_window: the previous window reads as at most 2·limit", "sliding_window", []storeCall{
			{params: fw(10, 1000), t: 500, cost: 10, want: Result{Allowed: true, Limit: 10, RetryAfterMs: -1, ResetAfterMs: 1500}},
			// Forced to 20: ten more fit once the window is empty, at 2000.
			{params: fw(10, 1000), t: 500, cost: 10, force: true, want: Result{Limit: 10, RetryAfterMs: 1500, ResetAfterMs: 1500}},
			// Limit 3 at 1500: prev 20 reads as 6, weighing 6·500 of
			// 3·1000; one more fits once 6·(1000 - e) <= 2000, e = 667.
			{params: fw(3, 1000), t: 1500, cost: 1, want: Result{Limit: 3, RetryAfterMs: 167, ResetAfterMs: 500}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replayStore(t, tt.algorithm, tt.calls)
		})
	}
}

// TestStoreMetaWindowEntries: entries written under a higher limit read
// back as the newest 2·limit, each of cost at most 2·limit.
func TestStoreMetaWindowEntries(t *testing.T) {
	mw := func(limit int64) map[string]int64 { return map[string]int64{"limit": limit, "window_ms": 1000} }
	calls := []storeCall{
		{params: mw(5), t: 0, cost: 1, want: Result{Allowed: true, Limit: 5, Remaining: 4, RetryAfterMs: -1, ResetAfterMs: 1000}},
		{params: mw(5), t: 1, cost: 4, want: Result{Allowed: true, Limit: 5, RetryAfterMs: -1, ResetAfterMs: 999}},
		{params: mw(5), t: 2, cost: 5, force: true, want: Result{Limit: 5, RetryAfterMs: 998, ResetAfterMs: 998}},
		{params: mw(5), t: 3, view: true, entries: []Entry{{0, 1, "m0"}, {1, 4, "m1"}, {2, 5, "m2"}}},
		// Limit 1: the newest two entries, costs cut to 2.
		{params: mw(1), t: 3, view: true, entries: []Entry{{1, 2, "m1"}, {2, 2, "m2"}}},
		// Used 10 reads as 2: denied, forced charges nothing more.
		{params: mw(1), t: 4, cost: 1, force: true, want: Result{Limit: 1, RetryAfterMs: 996, ResetAfterMs: 996}},
		{params: mw(5), t: 5, view: true, entries: []Entry{{0, 1, "m0"}, {1, 4, "m1"}, {2, 5, "m2"}}},
	}
	replayStore(t, "meta_window", calls)
}

func replayStore(t *testing.T, algorithm string, calls []storeCall) {
	t.Helper()
	s := NewStore()
	for i, c := range calls {
		m, err := s.Limit(algorithm, c.params)
		if err != nil {
			t.Fatalf("call %d: Limit(%v): %v", i, c.params, err)
		}
		if c.view {
			got, err := m.(EntryLister).Entries("k", c.t)
			if err != nil {
				t.Fatalf("call %d: Entries: %v", i, err)
			}
			if diff := cmp.Diff(c.entries, got); diff != "" {
				t.Errorf("call %d (%v): entries (-want +got):\n%s", i, c.params, diff)
			}
			continue
		}
		decide := m.Decide
		if c.force {
			decide = m.Force
		}
		got, err := decide("k", c.t, c.cost, metaInput("m"+string(rune('0'+i))))
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if got != c.want {
			t.Errorf("call %d (%v, t %d, cost %d, force %v):\n got %+v\nwant %+v", i, c.params, c.t, c.cost, c.force, got, c.want)
		}
	}
}
