package oracle

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// step is one request and the result worked out by hand.
type step struct {
	t    int64
	key  string
	cost int64
	meta string
	want Result
}

// allow and deny build expected results of a single-limit algorithm.
func allow(limit, remaining, reset int64) Result {
	return Result{Allowed: true, Limit: limit, Remaining: remaining, RetryAfterMs: -1, ResetAfterMs: reset}
}

func deny(limit, remaining, retry, reset int64) Result {
	return Result{Limit: limit, Remaining: remaining, RetryAfterMs: retry, ResetAfterMs: reset}
}

// withTier sets the binding tier of a bucket_window result.
func withTier(r Result, tier int64) Result { r.Tier = tier; return r }

func replay(t *testing.T, m Model, steps []step) {
	t.Helper()
	for i, s := range steps {
		key := s.key
		if key == "" {
			key = "k"
		}
		got, err := m.Decide(key, s.t, s.cost, metaInput(s.meta))
		if err != nil || got != s.want {
			t.Errorf("step %d (t %d, %s, cost %d): got %+v %v, want %+v", i+1, s.t, key, s.cost, got, err, s.want)
		}
	}
}

func mustNew(t *testing.T, alg string, p map[string]int64) Model {
	t.Helper()
	m, err := New(alg, p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSlidingLog(t *testing.T) {
	m := mustNew(t, "sliding_log", map[string]int64{"limit": 3, "window_ms": 1000})
	replay(t, m, []step{
		// Three in one ms; each is kept at t 1000 until t 2000.
		{t: 1000, cost: 1, want: allow(3, 2, 1000)},
		{t: 1000, cost: 1, want: allow(3, 1, 1000)},
		{t: 1000, cost: 1, want: allow(3, 0, 1000)},
		// Full: the oldest entry leaves at 1000 + 1000 = 2000.
		{t: 1000, cost: 1, want: deny(3, 0, 1000, 1000)},
		{t: 1500, cost: 1, want: deny(3, 0, 500, 500)},
		// The last ms the entries count: a peek is allowed, nothing left.
		{t: 1999, cost: 0, want: allow(3, 0, 1)},
		// At 2000 the entries at 1000 are exactly window_ms old: not
		// 1000 > 2000 - 1000, so they have left. Log: (2000, 2).
		{t: 2000, cost: 2, want: allow(3, 1, 1000)},
		// Log: (2000, 2), (2500, 1); the newest leaves at 3500.
		{t: 2500, cost: 1, want: allow(3, 0, 1000)},
		// Cost 2 needs 2 to leave: (2000, 2) leaves at 3000, retry
		// 3000 - 2600 = 400; reset 3500 - 2600 = 900.
		{t: 2600, cost: 2, want: deny(3, 0, 400, 900)},
		// Cost 3 needs everything gone: at 3000 one is left, at 3500
		// none: retry 900.
		{t: 2600, cost: 3, want: deny(3, 0, 900, 900)},
		// Cost above the limit: never.
		{t: 2600, cost: 4, want: deny(3, 0, -1, 900)},
		// A clock 100 ms behind the last admission (2500) is decided at
		// 2500; durations count from 2400: reset 3500 - 2400 = 1100,
		// retry 3000 - 2400 = 600.
		{t: 2400, cost: 0, want: allow(3, 0, 1100)},
		{t: 2400, cost: 1, want: deny(3, 0, 600, 1100)},
		// Another key has its own log.
		{t: 0, key: "other", cost: 1, want: allow(3, 2, 1000)},
	})
}

// TestSlidingLogDeniedNotRecorded: a client hammering every ms while
// denied is admitted as soon as its admitted requests have left; the
// denied ones were never recorded.
func TestSlidingLogDeniedNotRecorded(t *testing.T) {
	m := mustNew(t, "sliding_log", map[string]int64{"limit": 2, "window_ms": 10})
	steps := []step{{t: 100, cost: 2, want: allow(2, 0, 10)}}
	// (100, 2) leaves at 110: at t the wait is 110 - t.
	for now := int64(101); now < 110; now++ {
		steps = append(steps, step{t: now, cost: 1, want: deny(2, 0, 110-now, 110-now)})
	}
	steps = append(steps,
		step{t: 110, cost: 1, want: allow(2, 1, 10)},  // log (110, 1)
		step{t: 111, cost: 1, want: allow(2, 0, 10)},  // log (110, 1), (111, 1)
		step{t: 112, cost: 1, want: deny(2, 0, 8, 9)}, // (110, 1) leaves at 120; (111, 1) at 121
	)
	replay(t, m, steps)
}

func TestBucketWindowOneTier(t *testing.T) {
	m := mustNew(t, "bucket_window", map[string]int64{"limit": 3, "window_ms": 1000, "bucket_ms": 100})
	a := func(rem, reset int64) Result { return withTier(allow(3, rem, reset), 1) }
	d := func(rem, retry, reset int64) Result { return withTier(deny(3, rem, retry, reset), 1) }
	// The window is the 10 buckets of 100 ms ending with the current one;
	// bucket b leaves it at b + 1000.
	replay(t, m, []step{
		// Bucket 1000 gets 1; it leaves at 2000: reset 950.
		{t: 1050, cost: 1, want: a(2, 950)},
		// Bucket 1400 gets 2; full until 1400 leaves at 2400: reset 980.
		{t: 1420, cost: 2, want: a(0, 980)},
		// Buckets 1000 and 1400 both count at 1999 (its bucket is
		// 1900, the window starts after 900): bucket 1000 leaves at
		// 2000, retry 1; reset 2400 - 1999 = 401.
		{t: 1999, cost: 1, want: d(0, 1, 401)},
		// At 2000 bucket 1000 has left: 2 used, 1 admitted into bucket
		// 2000, which leaves at 3000: reset 1000.
		{t: 2000, cost: 1, want: a(0, 1000)},
		// At 2399, 3 used; cost 2 needs bucket 1400 (2) gone: at 2400,
		// retry 1; reset 3000 - 2399 = 601.
		{t: 2399, cost: 2, want: d(0, 1, 601)},
		{t: 2400, cost: 0, want: a(2, 600)},
		// Cost 4 exceeds the limit 3 of tier 1.
		{t: 2400, cost: 4, want: d(2, -1, 600)},
	})
}

// TestBucketWindowTiers: 1000 per 1 s, 5000 per 10 s and 7000 per 15 s,
// scaled down to 4 per 1 s, 10 per 10 s and 14 per 15 s, in buckets of
// 1 s. Bucket b leaves tier 1 at b + 1000, tier 2 at b + 10000, tier 3 at
// b + 15000. limit = min(4, 10, 14) = 4; reset waits until tier i holds
// at most limit_i - 4: 0, 6 and 10.
func TestBucketWindowTiers(t *testing.T) {
	m := mustNew(t, "bucket_window", map[string]int64{"limit": 4, "window_ms": 1000, "bucket_ms": 1000,
		"limit_2": 10, "window_ms_2": 10000, "limit_3": 14, "window_ms_3": 15000})
	a := func(rem, reset, tier int64) Result { return withTier(allow(4, rem, reset), tier) }
	d := func(rem, retry, reset, tier int64) Result { return withTier(deny(4, rem, retry, reset), tier) }
	replay(t, m, []step{
		// Used after (tier 1, 2, 3) = (4, 4, 4), rooms (0, 6, 10): tier 1
		// binds. Reset: bucket 0 leaves tier 1 at 1000.
		{t: 0, cost: 4, want: a(0, 1000, 1)},
		// (4, 8, 8), rooms (0, 2, 6). Reset: tier 1 at 2000; tier 2 must
		// get to 6: bucket 0 (4) leaves at 10000, 9000 from now.
		{t: 1000, cost: 4, want: a(0, 9000, 1)},
		// Used (0, 8, 8): tier 2 would hold 12 > 10, the others fit.
		// It needs 2 gone: bucket 0 leaves at 10000: retry 8000.
		// Remaining min(4, 2, 6) = 2. Reset: tier 2 at 10000.
		{t: 2000, cost: 4, want: d(2, 8000, 8000, 2)},
		// Cost 2 fits everywhere: (2, 10, 10), rooms (2, 0, 4): tier 2
		// binds. Reset: tier 1 at 3000, tier 2 must shed 4: bucket 0 at
		// 10000; tier 3 holds 10, fine.
		{t: 2000, cost: 2, want: a(0, 8000, 2)},
		// Cost 3 overfills tier 1 (5 > 4: bucket 2000 leaves at 3000,
		// wait 1000) and tier 2 (13 > 10: bucket 0 at 10000, wait
		// 8000): the slower, tier 2, binds.
		{t: 2000, cost: 3, want: d(0, 8000, 8000, 2)},
		// Buckets: 0:4, 1000:4, 2000:2. At 10000 tier 1 holds nothing,
		// tier 2 (buckets after 0) 6, tier 3 10: cost 4 fits, (4, 10, 14),
		// rooms all 0: the lowest, tier 1, binds. Reset: tier 1 at 11000;
		// tier 2 sheds 4: bucket 1000 at 11000; tier 3 sheds 4: bucket 0
		// at 15000, 5000 from now.
		{t: 10000, cost: 4, want: a(0, 5000, 1)},
		// At 11000 (buckets 0:4, 1000:4, 2000:2, 10000:4): used (0, 6,
		// 14), rooms (4, 4, 0): a peek is allowed and tier 3 binds.
		{t: 11000, cost: 0, want: a(0, 4000, 3)},
		// Cost 4: tier 3 would hold 18 > 14; bucket 0 (4) leaves it at
		// 15000: retry 4000.
		{t: 11000, cost: 4, want: d(0, 4000, 4000, 3)},
		{t: 14999, cost: 1, want: d(0, 1, 1, 3)},
		// Cost 5 exceeds the limit 4 of tier 1, the lowest below 5.
		{t: 14999, cost: 5, want: d(0, -1, 1, 1)},
		// At 15000 bucket 0 has left tier 3: used (0, 4, 10): cost 4
		// fits: (4, 8, 14), rooms (0, 2, 0): tier 1 binds. Reset: tier 1
		// at 16000; tier 2 sheds 2: bucket 10000 at 20000; tier 3 sheds
		// 4: bucket 1000 at 16000. Max: 20000, 5000 from now.
		{t: 15000, cost: 4, want: a(0, 5000, 1)},
	})
}

func TestMetaWindow(t *testing.T) {
	m := mustNew(t, "meta_window", map[string]int64{"limit": 3, "window_ms": 1000})
	lister, ok := m.(EntryLister)
	if !ok {
		t.Fatal("the meta_window model lists no entries")
	}
	entries := func(key string, now int64, want ...Entry) {
		t.Helper()
		got, err := lister.Entries(key, now)
		if err != nil || got == nil || (len(want) > 0 && !reflect.DeepEqual(got, want)) || len(got) != len(want) {
			t.Errorf("Entries(%s, %d) = %#v %v, want %#v", key, now, got, err, want)
		}
	}
	alice, bob, dave := Entry{700, 1, "alice"}, Entry{800, 1, "bob"}, Entry{1699, 1, "dave"}
	// A peek opens no window.
	replay(t, m, []step{{t: 500, cost: 0, meta: "peek", want: allow(3, 3, 0)}})
	entries("k", 500)
	replay(t, m, []step{
		// The window opens at 700, the first admission, until 1700.
		{t: 700, cost: 1, meta: "alice", want: allow(3, 2, 1000)},
		{t: 800, cost: 1, meta: "bob", want: allow(3, 1, 900)},
		// 2 + 2 > 3: denied until the window closes; not recorded.
		{t: 800, cost: 2, meta: "carol", want: deny(3, 1, 900, 900)},
	})
	entries("k", 800, alice, bob)
	replay(t, m, []step{{t: 1699, cost: 1, meta: "dave", want: allow(3, 0, 1)}})
	entries("k", 1699, alice, bob, dave)
	// A lagging clock reads at the last admission, 1699: still open.
	entries("k", 1000, alice, bob, dave)
	// At 1700 the window has closed.
	entries("k", 1700)
	replay(t, m, []step{
		{t: 1700, cost: 0, meta: "peek", want: allow(3, 3, 0)},
		// A new window opens at 1750 and drops the old entries.
		{t: 1750, cost: 2, meta: "erin", want: allow(3, 1, 1000)},
		{t: 1750, cost: 4, meta: "frank", want: deny(3, 1, -1, 1000)},
	})
	entries("k", 1750, Entry{1750, 2, "erin"})
	entries("other", 1750)

	// Meta of 257 bytes is refused and changes nothing; 256 is fine.
	if _, err := m.Decide("k", 1800, 1, metaInput(strings.Repeat("m", 257))); !errors.Is(err, ErrBadInput) {
		t.Errorf("257-byte meta: %v, want ErrBadInput", err)
	}
	entries("k", 1800, Entry{1750, 2, "erin"})
	long := strings.Repeat("m", 256)
	replay(t, m, []step{{t: 1800, cost: 1, meta: long, want: allow(3, 0, 950)}})
	entries("k", 1800, Entry{1750, 2, "erin"}, Entry{1800, 1, long})
	// Other algorithms ignore meta, however long.
	fw := mustNew(t, "fixed_window", map[string]int64{"limit": 1, "window_ms": 10})
	replay(t, fw, []step{{t: 0, cost: 1, meta: strings.Repeat("m", 1000), want: allow(1, 0, 10)}})
	if _, ok := fw.(EntryLister); ok {
		t.Error("fixed_window lists entries")
	}

	for _, c := range []struct {
		key string
		now int64
	}{{"", 0}, {"k", -1}, {"k", 1<<45 + 1}} {
		if _, err := lister.Entries(c.key, c.now); !errors.Is(err, ErrBadInput) {
			t.Errorf("Entries(%q, %d) = %v, want ErrBadInput", c.key, c.now, err)
		}
	}
}

func TestWindowRefusals(t *testing.T) {
	bw := func(extra map[string]int64) map[string]int64 {
		p := map[string]int64{"limit": 3, "window_ms": 1000, "bucket_ms": 100}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}
	refused := []struct {
		name   string
		alg    string
		params map[string]int64
	}{
		{"half tier: limit only", "bucket_window", bw(map[string]int64{"limit_2": 5, "window_ms_2": 0})},
		{"half tier: window only", "bucket_window", bw(map[string]int64{"window_ms_3": 2000})},
		{"window not a multiple", "bucket_window", bw(map[string]int64{"window_ms": 1000, "bucket_ms": 300})},
		{"tier window not a multiple", "bucket_window", bw(map[string]int64{"limit_2": 5, "window_ms_2": 1050})},
		{"3601 buckets", "bucket_window", bw(map[string]int64{"window_ms": 3601000, "bucket_ms": 1000})},
		{"3601 buckets in tier 3", "bucket_window", bw(map[string]int64{"limit_3": 9, "window_ms_3": 360100})},
		{"negative optional", "bucket_window", bw(map[string]int64{"limit_2": -1, "window_ms_2": 1000})},
		{"sliding_log limit above 10^5", "sliding_log", map[string]int64{"limit": 100001, "window_ms": 1}},
		{"meta_window window missing", "meta_window", map[string]int64{"limit": 1}},
	}
	for _, tt := range refused {
		if _, err := New(tt.alg, tt.params); !errors.Is(err, ErrBadInput) {
			t.Errorf("%s: New = %v, want ErrBadInput", tt.name, err)
		}
	}
	accepted := []map[string]int64{
		bw(nil), // the optional parameters missing
		bw(map[string]int64{"limit_2": 0, "window_ms_2": 0, "limit_3": 0, "window_ms_3": 0}),
		bw(map[string]int64{"window_ms": 3600000, "bucket_ms": 1000}),
		bw(map[string]int64{"limit_3": 9, "window_ms_3": 360000}), // tier 3 without tier 2
	}
	for _, p := range accepted {
		if _, err := New("bucket_window", p); err != nil {
			t.Errorf("New(bucket_window, %v) = %v", p, err)
		}
	}
	for _, c := range []struct {
		alg, param string
		want       bool
	}{{"bucket_window", "limit", false}, {"bucket_window", "bucket_ms", false}, {"bucket_window", "limit_2", true},
		{"bucket_window", "window_ms_3", true}, {"gcra", "burst", false}, {"nope", "limit", false}} {
		if got := Optional(c.alg, c.param); got != c.want {
			t.Errorf("Optional(%s, %s) = %v", c.alg, c.param, got)
		}
	}
}

// TestWindowWaitsAreTight checks retry_after_ms and reset_after_ms of the
// window models against their definitions in the contract, on random
// traces: the same request is denied at now+retry-1 and allowed at
// now+retry; at now+reset a peek finds remaining = limit, at now+reset-1
// it does not.
func TestWindowWaitsAreTight(t *testing.T) {
	type admitted struct {
		key       string
		now, cost int64
	}
	sets := []struct {
		alg string
		p   map[string]int64
	}{
		{"sliding_log", map[string]int64{"limit": 5, "window_ms": 40}},
		{"meta_window", map[string]int64{"limit": 5, "window_ms": 40}},
		{"bucket_window", map[string]int64{"limit": 3, "window_ms": 30, "bucket_ms": 10}},
		{"bucket_window", map[string]int64{"limit": 4, "window_ms": 10, "bucket_ms": 10,
			"limit_2": 10, "window_ms_2": 100, "limit_3": 14, "window_ms_3": 150}},
		{"bucket_window", map[string]int64{"limit": 6, "window_ms": 60, "bucket_ms": 20,
			"limit_3": 3, "window_ms_3": 20}},
	}
	for _, set := range sets {
		rng := rand.New(rand.NewSource(int64(len(set.p))))
		m := mustNew(t, set.alg, set.p)
		var hist []admitted
		// at decides a request on a copy of m's current state.
		at := func(key string, now, cost int64) Result {
			c := mustNew(t, set.alg, set.p)
			for _, h := range hist {
				c.Decide(h.key, h.now, h.cost, nil)
			}
			r, err := c.Decide(key, now, cost, nil)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		now := int64(1000)
		denied, waited := 0, 0
		for i := 0; i < 250; i++ {
			now += rng.Int63n(12) - 2
			key, cost := []string{"a", "b"}[rng.Intn(2)], rng.Int63n(4)
			r, err := m.Decide(key, now, cost, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Allowed && cost > 0 {
				hist = append(hist, admitted{key, now, cost})
			}
			where := func() string {
				return fmt.Sprintf("%s %v step %d (t %d, %s, cost %d): %+v", set.alg, set.p, i, now, key, cost, r)
			}
			if !r.Allowed && r.RetryAfterMs >= 1 {
				denied++
				if !at(key, now+r.RetryAfterMs, cost).Allowed {
					t.Errorf("%s: denied at now+retry", where())
				}
				if r.RetryAfterMs > 1 && at(key, now+r.RetryAfterMs-1, cost).Allowed {
					t.Errorf("%s: allowed at now+retry-1", where())
				}
			}
			if !r.Allowed && (r.RetryAfterMs == -1) != (cost > r.Limit) {
				t.Errorf("%s: retry -1 iff cost > limit", where())
			}
			if p := at(key, now+r.ResetAfterMs, 0); p.Remaining != p.Limit {
				t.Errorf("%s: remaining %d at now+reset", where(), p.Remaining)
			}
			if r.ResetAfterMs > 0 {
				waited++
				if p := at(key, now+r.ResetAfterMs-1, 0); p.Remaining == p.Limit {
					t.Errorf("%s: remaining = limit at now+reset-1", where())
				}
			}
		}
		t.Logf("%s %v: %d denied with a retry, %d with a reset wait", set.alg, set.p, denied, waited)
	}
}

// metaInput is the string inputs of a meta_window request whose meta is
// meta.
func metaInput(meta string) map[string]string { return map[string]string{"meta": meta} }
