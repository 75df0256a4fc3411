package oracle

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"testing"
)

// The forced call of docs/semantics.md, "Force". Every expected value
// below is worked by hand from that section and "The algorithms, exactly";
// the arithmetic is in the comments.

// huge is a forced cost far past any limit: it is charged only up to the
// bound of twice the limit's worth.
const huge = 1e15

// fstep is one request, forced or not, and its result worked out by hand.
type fstep struct {
	t     int64
	key   string // "k" when empty
	cost  int64
	meta  string
	force bool
	want  Result
}

// freplay runs steps on m, each through Force or Decide.
func freplay(t *testing.T, m Model, steps []fstep) {
	t.Helper()
	for i, s := range steps {
		key := s.key
		if key == "" {
			key = "k"
		}
		call, name := m.Decide, "Decide"
		if s.force {
			call, name = m.Force, "Force"
		}
		got, err := call(key, s.t, s.cost, metaInput(s.meta))
		if err != nil || got != s.want {
			t.Errorf("step %d %s(t %d, %s, cost %d): got %+v %v, want %+v", i+1, name, s.t, key, s.cost, got, err, s.want)
		}
	}
}

func TestForceFixedWindow(t *testing.T) {
	m := mustNew(t, "fixed_window", fwParams(3, 1000))
	freplay(t, m, []fstep{
		// Admitted, so exactly the call: used 2, remaining 3-2 = 1, reset
		// end - now = 1000 - 100 = 900.
		{t: 100, cost: 2, force: true, want: allow(3, 1, 900)},
		// 2+3 > 3: denied, charged min(3, 2·3-2 = 4) = 3: used 5.
		// remaining max(0, 3-5) = 0; retry and reset 1000-200 = 800.
		{t: 200, cost: 3, force: true, want: deny(3, 0, 800, 800)},
		// In debt, even a peek is denied: 5+0 > 3 (the rule "allowed iff
		// used + cost <= limit"); retry and reset 1000-300 = 700. Forced,
		// it is a peek too, and charges nothing.
		{t: 300, cost: 0, want: deny(3, 0, 700, 700)},
		{t: 300, cost: 0, force: true, want: deny(3, 0, 700, 700)},
		// 5+1 > 3 until the window ends at 1000: retry 1.
		{t: 999, cost: 1, want: deny(3, 0, 1, 1)},
		// The debt leaves with the window: used 0, 3 admitted.
		{t: 1000, cost: 3, want: allow(3, 0, 1000)},
		// A huge cost: charged min(10^15, 6-3 = 3) = 3, used 6; never
		// allowed (-1); reset 2000-1500 = 500.
		{t: 1500, cost: huge, force: true, want: deny(3, 0, -1, 500)},
		// At the bound: charged min(1, 6-6) = 0, nothing written; retry
		// and reset 2000-1600 = 400.
		{t: 1600, cost: 1, force: true, want: deny(3, 0, 400, 400)},
		{t: 2000, cost: 3, want: allow(3, 0, 1000)},
	})
}

// TestForceClock: a forced write sets the key's clock as an admission does
// (and MaxSkewMs applies to it); a forced call that charges 0 writes
// nothing, so the clock stays. fixed_window, limit 2, one window of 10^6
// ms: the only window used, so durations are 10^6 - now.
func TestForceClock(t *testing.T) {
	m := mustNew(t, "fixed_window", fwParams(2, 1e6))
	freplay(t, m, []fstep{
		// a: forced 4 on a fresh key: charged min(4, 4) = 4, clock
		// 100000; never (4 > 2); reset 10^6-100000 = 900000.
		{t: 100000, key: "a", cost: 4, force: true, want: deny(2, 0, -1, 900000)},
		// At the bound: charged min(1, 4-4) = 0, nothing written: the
		// clock stays 100000.
		{t: 200000, key: "a", cost: 1, force: true, want: deny(2, 0, 800000, 800000)},
		// A caller at 50000: the clock 100000 is within 60000 of it, so
		// the state counts (had the charge of 0 written clock 200000, it
		// would be stale and the request admitted). Denied: 4+1 > 2,
		// retry and reset 10^6-50000 = 950000.
		{t: 50000, key: "a", cost: 1, want: deny(2, 0, 950000, 950000)},
		// b: 1 admitted at 100000, then forced 3 at 200000: 1+3 > 2,
		// charged min(3, 4-1) = 3, used 4, clock 200000.
		{t: 100000, key: "b", cost: 1, want: allow(2, 1, 900000)},
		{t: 200000, key: "b", cost: 3, force: true, want: deny(2, 0, -1, 800000)},
		// A caller at 130000: 200000 > 130000+60000, the state is stale:
		// decided as fresh and admitted (remaining 1, reset 870000); the
		// admission replaces the state, clock 130000.
		{t: 130000, key: "b", cost: 1, want: allow(2, 1, 870000)},
		// Used 1 (not 4+1): 1+1 <= 2.
		{t: 130000, key: "b", cost: 1, want: allow(2, 0, 870000)},
	})
}

// TestForceStaleKey: a forced call on a key whose clock is more than
// MaxSkewMs ahead is decided as on a fresh key, and its charge replaces
// the stale state. token_bucket, capacity 4, 1 token per 100 ms.
func TestForceStaleKey(t *testing.T) {
	m := mustNew(t, "token_bucket", map[string]int64{"capacity": 4, "refill_tokens": 1, "refill_ms": 100})
	freplay(t, m, []fstep{
		// Level 4 -> 0; reset ceil(4·100) = 400. Clock 100000.
		{t: 100000, cost: 4, want: allow(4, 0, 400)},
		// 100000 > 30000+60000: stale, fresh level 4. 6 > 4: denied,
		// never (6 > capacity); level max(-4, 4-6) = -2, clock 30000;
		// reset ceil((4+2)·100) = 600. (Trusted, it would be decided at
		// 100000 with level 0: reset 70000 + 800.)
		{t: 30000, cost: 6, force: true, want: deny(4, 0, -1, 600)},
		// 100 ms on: level -2+1 = -1, so a peek is denied (0 > -1):
		// retry ceil(1·100) = 100, reset ceil((4+1)·100) = 500.
		{t: 30100, cost: 0, want: deny(4, 0, 100, 500)},
	})
}

// bucketStep is one step of the table shared by token_bucket (capacity 4,
// refill 1 per 100 ms), gcra (burst 4, rate 1, period 100: T = 100 ms,
// tau = 400 ms) and leaky_bucket (capacity 4, same T): the three must
// decide alike under force, and leaky_bucket adds delay_ms.
type bucketStep struct {
	t, cost int64
	force   bool
	want    Result // without delay_ms
	delay   int64  // leaky_bucket's delay_ms
}

func TestForceBuckets(t *testing.T) {
	steps := []bucketStep{
		// Level 4 -> 1: remaining 1, reset ceil(3·100) = 300.
		// TAT 1000 -> 1300: allowAt 900 <= 1000; ahead 300, room
		// (400-300)/100 = 1. Nothing queued ahead: delay 0.
		{1000, 3, false, allow(4, 1, 300), 0},
		// Level 1 < 3: denied; forced, level max(-4, 1-3) = -2.
		// remaining 0; retry ceil((3+2)·100) = 500; reset
		// ceil((4+2)·100) = 600. TAT: newTAT 1600, allowAt 1200 > 1000;
		// forced, min(1600, 1000+800) = 1600: ahead 600, reset 600;
		// retry 1600+300-400-1000 = 500. Delay: the queue ahead,
		// 1300-1000 = 300.
		{1000, 3, true, deny(4, 0, 500, 600), 300},
		// The debt is paid back: level -2+3 = 1 < 3, retry ceil(2·100) =
		// 200 (1000+500 = 1300+200), remaining 1, reset ceil(3·100) =
		// 300. TAT 1600: allowAt 1500 > 1300. A denial: delay 0.
		{1300, 3, false, deny(4, 1, 200, 300), 0},
		// A peek: level 1, remaining 1. Delay: TAT 1600 - 1300 = 300.
		{1300, 0, false, allow(4, 1, 300), 300},
		// Level 1+2 = 3 >= 3: 0 left, reset ceil(4·100) = 400. TAT 1600
		// -> 1900, allowAt 1500 <= 1500; delay 1600-1500 = 100.
		{1500, 3, false, allow(4, 0, 400), 100},
		// Huge: level max(-4, 0-10^15) = -4: never, reset
		// ceil(8·100) = 800. TAT: min(1900+10^17, 1500+800) = 2300,
		// ahead 800. Delay 1900-1500 = 400.
		{1500, huge, true, deny(4, 0, -1, 800), 400},
		// Level -4+1 = -3 < 1; forced, max(-4, -4) = -4 (1 charged):
		// retry ceil((1+4)·100) = 500, reset 800. TAT 2300 -> min(2400,
		// 1600+800) = 2400; retry 2400+100-400-1600 = 500. Delay
		// 2300-1600 = 700.
		{1600, 1, true, deny(4, 0, 500, 800), 700},
		// At the bound: level -4, charged 0 (TAT stays 2400 =
		// 1600+800). Delay 2400-1600 = 800: its work is queued too.
		{1600, 1, true, deny(4, 0, 500, 800), 800},
		// A forced peek is a peek: level -4 < 0, denied, retry
		// ceil(4·100) = 400 (allowAt 2400-400 = 2000); a denial has
		// delay 0.
		{1600, 0, true, deny(4, 0, 400, 800), 0},
		// At 2399 the level is -4+7.99 = 3.99 < 4: retry
		// ceil(0.01·100) = 1, remaining floor(3.99) = 3, reset 1.
		{2399, 4, false, deny(4, 3, 1, 1), 0},
		// At 2400 the debt is paid: level 4, all 4 admitted, reset 400.
		// TAT 2400 -> 2800; nothing ahead.
		{2400, 4, false, allow(4, 0, 400), 0},
		// Admitted, force is the call: level 0+4 = 4 -> 2, reset 200.
		// TAT 2800 -> 3000; nothing ahead.
		{2800, 2, true, allow(4, 2, 200), 0},
		// A lagging clock: decided at 2800, lag 50. Level 2 < 4; forced,
		// -2. retry 50+ceil(6·100) = 650, reset 650. TAT 3000 -> 3400
		// (below 2800+800), ahead 600. Delay 50 + 3000-2800 = 250.
		{2750, 4, true, deny(4, 0, 650, 650), 250},
		// Level -2: a peek is denied, retry ceil(2·100) = 200, reset
		// ceil(6·100) = 600.
		{2800, 0, false, deny(4, 0, 200, 600), 0},
	}
	models := map[string]Model{
		"token_bucket": mustNew(t, "token_bucket", map[string]int64{"capacity": 4, "refill_tokens": 1, "refill_ms": 100}),
		"gcra":         mustNew(t, "gcra", map[string]int64{"burst": 4, "rate": 1, "period_ms": 100}),
		"leaky_bucket": mustNew(t, "leaky_bucket", map[string]int64{"capacity": 4, "rate": 1, "period_ms": 100}),
	}
	for name, m := range models {
		var fs []fstep
		for _, s := range steps {
			want := s.want
			if name == "leaky_bucket" {
				want.DelayMs = s.delay
			}
			fs = append(fs, fstep{t: s.t, cost: s.cost, force: s.force, want: want})
		}
		t.Run(name, func(t *testing.T) { freplay(t, m, fs) })
	}
}

func TestForceSlidingWindow(t *testing.T) {
	// limit 4, W 1000: allowed iff prev·(1000-e) + (curr+cost)·1000 <=
	// 4000; counts[w] is the cost in window w (t in [w·1000, w·1000+1000)).
	m := mustNew(t, "sliding_window", fwParams(4, 1000))
	freplay(t, m, []fstep{
		// Window 1, e 0: 0 + 3000 <= 4000. counts[1] = 3, remaining
		// floor(4000/1000) - 3 = 1. counts[1] weighs until window 2
		// ends: reset 3000-1000 = 2000.
		{t: 1000, cost: 3, want: allow(4, 1, 2000)},
		// (3+3)·1000 > 4000: denied; charged min(3, 8-3) = 3: counts[1]
		// = 6, remaining max(0, 4-6) = 0. Retry from the charged state:
		// in window 1, (6+3)·1000 > 4000; in window 2, 6·(1000-e) +
		// 3000 <= 4000 iff e >= 833.3…: t 2834, retry 1834. Reset 2000.
		{t: 1000, cost: 3, force: true, want: deny(4, 0, 1834, 2000)},
		// At 2500 (e 500): 6·500 + 2000 = 5000 > 4000. Retry: 6·(1000-e)
		// <= 2000 iff e >= 666.6…: 2667, retry 167. Remaining
		// floor((4000-3000)/1000) - 0 = 1; reset 3000-2500 = 500.
		{t: 2500, cost: 2, want: deny(4, 1, 167, 500)},
		// At 2666: 6·334 + 2000 = 4004 > 4000, still denied; 2667:
		// 6·333 + 2000 = 3998: admitted, counts[2] = 2. Remaining
		// floor((4000-1998)/1000) - 2 = 0; reset 4000-2667 = 1333.
		{t: 2666, cost: 2, want: deny(4, 1, 1, 334)},
		{t: 2667, cost: 2, want: allow(4, 0, 1333)},
		// Window 3, e 0: huge > limit, denied, never; charged min(10^15,
		// 8-0) = 8: counts[3] = 8. Remaining max(0, floor((4000 -
		// 2·1000)/1000) - 8) = 0. counts[3] weighs until 5000: reset 2000.
		{t: 3000, cost: huge, force: true, want: deny(4, 0, -1, 2000)},
		// At the bound: charged min(2, 8-8) = 0. Retry: window 3 never
		// ((8+2)·1000 > 4000); window 4: 8·(1000-e) + 2000 <= 4000 iff e
		// >= 750: 4750, retry 1750. Reset 2000.
		{t: 3000, cost: 2, force: true, want: deny(4, 0, 1750, 2000)},
		// A forced peek at 4500 (e 500): 8·500 = 4000 <= 4000, allowed,
		// remaining floor(0/1000) = 0, reset 5000-4500 = 500. It writes
		// nothing: the clock stays 3000, so a peek at 4400 is decided
		// at 4400 (not 4500): 8·600 = 4800 > 4000, denied until e 500:
		// retry 100, reset 600.
		{t: 4500, cost: 0, force: true, want: allow(4, 0, 500)},
		{t: 4400, cost: 0, want: deny(4, 0, 100, 600)},
		// Admitted, force is the call: 8·250 + 2000 = 4000. counts[4] =
		// 2, remaining floor((4000-2000)/1000) - 2 = 0, reset
		// 6000-4750 = 1250.
		{t: 4750, cost: 2, force: true, want: allow(4, 0, 1250)},
	})
	// A cost of 2^53-1 with W = 10^11: (cost)·W would overflow int64 (and
	// wrap below limit·W); a cost above the limit is never allowed.
	// Fresh: remaining 10, reset 0.
	wide := mustNew(t, "sliding_window", fwParams(10, 1e11))
	freplay(t, wide, []fstep{{t: 0, cost: costMax, want: deny(10, 10, -1, 0)}})
}

func TestForceSlidingLog(t *testing.T) {
	// limit 3, window 1000: an entry at t counts while t > τ - 1000.
	m := mustNew(t, "sliding_log", fwParams(3, 1000))
	freplay(t, m, []fstep{
		// Log (1000, 2): remaining 1, reset 1000.
		{t: 1000, cost: 2, want: allow(3, 1, 1000)},
		// 2+3 > 3: charged min(3, 6-2) = 3, log (1000, 2), (1200, 3):
		// remaining 0. Retry: used + 3 <= 3 needs both gone, (1200, 3)
		// leaves at 2200: retry 1000; reset 1200+1000-1200 = 1000.
		{t: 1200, cost: 3, force: true, want: deny(3, 0, 1000, 1000)},
		// (1000, 2) has left at 2000; used 3: 3+1 > 3 until 2200.
		{t: 2000, cost: 1, want: deny(3, 0, 200, 200)},
		{t: 2200, cost: 3, want: allow(3, 0, 1000)},
		// Huge: used 3, charged min(10^15, 6-3) = 3, recorded as (2500,
		// 3). Never; reset 2500+1000-2500 = 1000.
		{t: 2500, cost: huge, force: true, want: deny(3, 0, -1, 1000)},
		// (2200, 3) has left at 3200: used 3, the 2500 entry, which holds
		// the 3 charged, so a peek fits (3+0 <= 3): remaining 0, reset
		// 2500+1000-3200 = 300.
		{t: 3200, cost: 0, want: allow(3, 0, 300)},
		// Cost 5: charged min(5, 6-3) = 3, recorded (3200, 3);
		// never; reset 1000.
		{t: 3200, cost: 5, force: true, want: deny(3, 0, -1, 1000)},
		// (2500, 3) leaves at 3500; used 3, the 3200 entry: a peek fits
		// (3+0 <= 3; it would not, had 5 been recorded), remaining 0,
		// reset 4200-3500 = 700.
		{t: 3500, cost: 0, want: allow(3, 0, 700)},
		// 3+1 > 3: charged min(1, 3) = 1, (3500, 1). Retry: used <= 2
		// once (3200, 3) leaves at 4200: 700; reset 3500+1000-3500 = 1000.
		{t: 3500, cost: 1, force: true, want: deny(3, 0, 700, 1000)},
		// At 4200 used 1: 1+2 <= 3, (4200, 2); reset 1000.
		{t: 4200, cost: 2, want: allow(3, 0, 1000)},
		// A forced peek at 4500, when (3500, 1) has left: used 2,
		// remaining 1, reset 5200-4500 = 700. It writes nothing: the
		// clock stays 4200, and a peek at 4450 is decided at 4450, where
		// (3500, 1) still counts: used 3, remaining 0, reset 750.
		{t: 4500, cost: 0, force: true, want: allow(3, 1, 700)},
		{t: 4450, cost: 0, want: allow(3, 0, 750)},
		// Admitted, force is the call: (4200, 2) has left at 5200, used
		// 0; (5200, 2), remaining 1, reset 1000.
		{t: 5200, cost: 2, force: true, want: allow(3, 1, 1000)},
	})
}

// TestForceBucketWindow: two tiers, 4 per 1000 ms and 6 per 3000 ms, in
// buckets of 1000 ms. Bucket b leaves tier 1 at b+1000 and tier 2 at
// b+3000. L = 4; reset waits until tier 1 holds at most 0 and tier 2 at
// most 6-4 = 2.
func TestForceBucketWindow(t *testing.T) {
	m := mustNew(t, "bucket_window", map[string]int64{"limit": 4, "window_ms": 1000, "bucket_ms": 1000,
		"limit_2": 6, "window_ms_2": 3000})
	a := func(rem, reset, tier int64) Result { return withTier(allow(4, rem, reset), tier) }
	d := func(rem, retry, reset, tier int64) Result { return withTier(deny(4, rem, retry, reset), tier) }
	freplay(t, m, []fstep{
		// Bucket 0: 3. Used (3, 3), rooms (1, 3): tier 1. Reset: tier 1
		// at 1000, tier 2 (3 > 2) at 3000.
		{t: 0, cost: 3, want: a(1, 3000, 1)},
		// Used (0, 3): 5 > 4, 3+5 > 6. Cost 5 > L: never, tier 1 (the
		// first limit below 5). Charged min(5, 8-0, 12-3) = 5: bucket
		// 1000 = 5, used (5, 8), remaining 0. Reset: tier 1 at 2000;
		// tier 2 to 2: at 3000 8-3 = 5, at 4000 0: 3000.
		{t: 1000, cost: 5, force: true, want: d(0, -1, 3000, 1)},
		// Used (5, 8): charged min(2, 8-5, 12-8) = 2: bucket 1000 = 7,
		// used (7, 10). Retry from there: tier 1 needs 7+2 <= 4, at 2000
		// (500); tier 2 needs <= 4: at 3000 7, at 4000 0 (2500): tier 2.
		// Reset: tier 2 at 4000, 2500.
		{t: 1500, cost: 2, force: true, want: d(0, 2500, 2500, 2)},
		// Used (0, 10) at 2000: huge, never, tier 1; charged min(10^15,
		// 8-0, 12-10) = 2: bucket 2000 = 2, used (2, 12), remaining
		// min(2, -6) -> 0. Reset: tier 1 at 3000; tier 2 to 2: at 3000
		// 9, at 4000 2: 2000.
		{t: 2000, cost: huge, force: true, want: d(0, -1, 2000, 1)},
		// At the bound: charged min(1, 6, 0) = 0. Tier 1 admits (3 <=
		// 4), tier 2 denies (13 > 6) until 4000: retry 2000, tier 2.
		{t: 2000, cost: 1, force: true, want: d(0, 2000, 2000, 2)},
		// A forced peek: tier 2 holds 12 > 6, so it is denied until 4000
		// (1500), tier 2; tier 1 at 3000 (500): reset 1500. Writes
		// nothing.
		{t: 2500, cost: 0, force: true, want: d(0, 1500, 1500, 2)},
		// At 4000: used (0, 2), bucket 2000 alone. Admitted, force is the
		// call: bucket 4000 = 2, used (2, 4), rooms (2, 2): a tie, tier
		// 1. Reset: tier 1 at 5000; tier 2 to 2, bucket 2000 at 5000:
		// 1000.
		{t: 4000, cost: 2, force: true, want: a(2, 1000, 1)},
	})
	// A tier that admits before the charge may deny after it: the retry
	// is the wait from the charged state.
	freplay(t, m, []fstep{
		// Bucket 0: 4. Used (4, 4), rooms (0, 2): tier 1. Reset 3000.
		{t: 0, key: "b", cost: 4, want: a(0, 3000, 1)},
		// Tier 1 denies (6 > 4), tier 2 admits (6 <= 6). Charged min(2,
		// 8-4, 12-4) = 2: bucket 0 = 6, used (6, 6). Now both deny: tier
		// 1 until 1000 (500), tier 2 (8 > 6) until 3000 (2500): retry
		// 2500, tier 2. Reset: tier 2 to 2 at 3000: 2500.
		{t: 500, key: "b", cost: 2, force: true, want: d(0, 2500, 2500, 2)},
		// Indeed at 1000 tier 2 still denies: 6+2 > 6 until 3000.
		// Remaining min(4-0, 6-6) = 0.
		{t: 1000, key: "b", cost: 2, want: d(0, 2000, 2000, 2)},
		{t: 3000, key: "b", cost: 4, want: a(0, 3000, 1)},
	})
}

func TestForceMetaWindow(t *testing.T) {
	m := mustNew(t, "meta_window", fwParams(3, 1000))
	lister := m.(EntryLister)
	entries := func(now int64, want ...Entry) {
		t.Helper()
		if got, err := lister.Entries("k", now); err != nil || !reflect.DeepEqual(got, append([]Entry{}, want...)) {
			t.Errorf("Entries(%d) = %v %v, want %v", now, got, err, want)
		}
	}
	freplay(t, m, []fstep{
		// The window opens at 100, until 1100.
		{t: 100, cost: 2, meta: "a", want: allow(3, 1, 1000)},
		// 2+3 > 3: charged min(3, 6-2) = 3, used 5, the entry recorded.
		// Retry and reset 1100-200 = 900.
		{t: 200, cost: 3, meta: "b", force: true, want: deny(3, 0, 900, 900)},
		// 9 > 3, never: charged min(9, 6-5) = 1, recorded with the 1
		// charged. Reset 800.
		{t: 300, cost: 9, meta: "c", force: true, want: deny(3, 0, -1, 800)},
		// At the bound: charged 0, not recorded. 700 left.
		{t: 400, cost: 1, meta: "d", force: true, want: deny(3, 0, 700, 700)},
	})
	entries(400, Entry{100, 2, "a"}, Entry{200, 3, "b"}, Entry{300, 1, "c"})
	freplay(t, m, []fstep{
		// The window has closed at 1100: the debt is gone.
		{t: 1100, cost: 3, meta: "e", want: allow(3, 0, 1000)},
		// Closed again at 2100: used 0, 5 > 3, never; charged min(5, 6)
		// = 5, which opens a window at 2100 with its entry. Reset 1000.
		{t: 2100, cost: 5, meta: "f", force: true, want: deny(3, 0, -1, 1000)},
		// A forced peek: 5+0 > 3, denied until 3100 (900); not recorded.
		{t: 2200, cost: 0, meta: "g", force: true, want: deny(3, 0, 900, 900)},
	})
	entries(2200, Entry{2100, 5, "f"})
	freplay(t, m, []fstep{
		// Admitted, force is the call: a new window at 3100.
		{t: 3100, cost: 1, meta: "h", force: true, want: allow(3, 2, 1000)},
	})
	entries(3100, Entry{3100, 1, "h"})
}

// TestForcePolicy: a fixed_window (2 per 1000 ms) and a leaky_bucket
// (capacity 3, T = 1000 ms, tau = 3000 ms) on one ip, forced.
func TestForcePolicy(t *testing.T) {
	p := mustPolicy(t, "shaped",
		byID("window", "ip", "fixed_window", fwParams(2, 1000)),
		byID("queue", "ip", "leaky_bucket", map[string]int64{"capacity": 3, "rate": 1, "period_ms": 1000}))
	ip := map[string]string{"ip": "10.0.0.1"}
	steps := []struct {
		t, cost int64
		force   bool
		want    PolicyResult
	}{
		// Both admit, as Decide: window 1/2 left, reset 1000; queue TAT
		// 0 -> 1000, room 2, reset 1000, delay 0. 1/2 < 2/3: window.
		{0, 1, true, pres(1, allow(2, 1, 1000), allow(3, 2, 1000))},
		// The window denies (1+2 > 2) and is charged min(2, 4-1) = 2:
		// used 3, remaining 0, retry and reset 1000. The queue admits:
		// TAT 1000 -> 3000 (allowAt 0 <= 0), room 0, reset 3000, delay
		// 1000. Not allowed; the window binds (the only denial); delay_ms
		// is the largest, 1000, though the policy denies.
		{0, 2, true, PolicyResult{Result: withDelay(deny(2, 0, 1000, 1000), 1000), Index: 1,
			Limits: []Result{deny(2, 0, 1000, 1000), withDelay(allow(3, 0, 3000), 1000)}}},
		// Both deny and are charged. Window: used 3, charged min(1, 1) =
		// 1, retry and reset 500. Queue: TAT 3000, newTAT 4000, allowAt
		// 1000 > 500; forced, min(4000, 500+6000) = 4000: ahead 3500,
		// remaining 0, reset 3500, retry 4000+1000-3000-500 = 1500,
		// delay 3000-500 = 2500. The longest retry binds: the queue.
		{500, 1, true, PolicyResult{Result: withDelay(deny(3, 0, 1500, 3500), 2500), Index: 2,
			Limits: []Result{deny(2, 0, 500, 500), withDelay(deny(3, 0, 1500, 3500), 2500)}}},
		// Decided, not forced: a new window admits and peeks (2 left,
		// reset 0). The queue's TAT 4000 (the forced charge): newTAT
		// 5000, allowAt 2000 > 1000, retry 1000, reset 3000. Denied:
		// delay 0.
		{1000, 1, false, pres(2, allow(2, 2, 0), deny(3, 0, 1000, 3000))},
		// The debt is paid: both admit. Window 1 left, reset 1000; queue
		// TAT 4000 -> 5000 (allowAt 2000 <= 2000), room 0, reset 3000,
		// delay 4000-2000 = 2000. 0/3 < 1/2: the queue binds.
		{2000, 1, false, pres(2, allow(2, 1, 1000), withDelay(allow(3, 0, 3000), 2000))},
		// Huge: the window (new at 3000) charges min(10^15, 4) = 4,
		// never, reset 1000; the queue: TAT 5000 -> min(…, 3000+6000) =
		// 9000, ahead 6000, never, delay 5000-3000 = 2000. Both never: a
		// tie, the first binds; delay 2000.
		{3000, huge, true, PolicyResult{Result: withDelay(deny(2, 0, -1, 1000), 2000), Index: 1,
			Limits: []Result{deny(2, 0, -1, 1000), withDelay(deny(3, 0, -1, 6000), 2000)}}},
	}
	for i, s := range steps {
		call := p.Decide
		if s.force {
			call = p.Force
		}
		got, err := call(ip, hourT+s.t, s.cost)
		if err != nil || !reflect.DeepEqual(got, s.want) {
			t.Errorf("step %d (t +%d, cost %d, force %v):\n got %+v %v\nwant %+v", i+1, s.t, s.cost, s.force, got, err, s.want)
		}
	}
}

// TestForceRefusals: Force refuses what Decide refuses, with the same
// message, and writes nothing.
func TestForceRefusals(t *testing.T) {
	for _, alg := range []string{"fixed_window", "meta_window"} {
		m := mustNew(t, alg, fwParams(1, 1000))
		for _, c := range []struct {
			key       string
			now, cost int64
			meta      string
		}{{"", 0, 5, ""}, {"}k", 0, 5, ""}, {"k", -1, 5, ""}, {"k", 1<<45 + 1, 5, ""}, {"k", 0, -1, ""},
			{"k", 0, 1 << 53, ""}, {"k", 0, 5, string(make([]byte, 257))}} {
			if alg == "fixed_window" && len(c.meta) > 0 {
				continue // only meta_window checks meta
			}
			_, errD := m.Decide(c.key, c.now, c.cost, metaInput(c.meta))
			_, errF := m.Force(c.key, c.now, c.cost, metaInput(c.meta))
			if !errors.Is(errF, ErrBadInput) || errD == nil || errF.Error() != errD.Error() {
				t.Errorf("%s Force(%q, %d, %d): %v, Decide: %v", alg, c.key, c.now, c.cost, errF, errD)
			}
		}
		// Nothing was charged: fresh, 1 left, reset 0.
		freplay(t, m, []fstep{{t: 0, cost: 0, want: allow(1, 1, 0)}})
	}
	p := mustPolicy(t, "refuse",
		byID("per_ip", "ip", "fixed_window", fwParams(2, 1000)),
		byID("per_user", "user", "fixed_window", fwParams(3, 1000)))
	for _, c := range []struct {
		ids       map[string]string
		now, cost int64
	}{{ids("", "alice"), hourT, 5}, {map[string]string{"ip": "x"}, hourT, 5}, {ids("x", "alice"), -1, 5},
		{ids("x", "alice"), hourT, 1 << 53}, {map[string]string{"ip": "x", "user": "a", "z": "b"}, hourT, 5}} {
		_, errD := p.Decide(c.ids, c.now, c.cost)
		_, errF := p.Force(c.ids, c.now, c.cost)
		if !errors.Is(errF, ErrBadInput) || errD == nil || errF.Error() != errD.Error() {
			t.Errorf("policy Force(%v, %d, %d): %v, Decide: %v", c.ids, c.now, c.cost, errF, errD)
		}
	}
	// Nothing was charged: 2/2 and 3/3 left, a tie, the first.
	preplay(t, p, []pstep{{ids("x", "alice"), 0, 0, pres(1, allow(2, 2, 0), allow(3, 3, 0))}})
}

// TestForceMaxTTL: a forced call can leave token_bucket, gcra and
// leaky_bucket one capacity in debt, so their horizon is the time to
// refill 2·capacity: ceil(2·capacity·refill_ms/refill_tokens). The window
// algorithms' horizons do not change.
func TestForceMaxTTL(t *testing.T) {
	const extra = MaxSkewMs + TTLMarginMs
	for _, c := range []struct {
		alg    string
		params map[string]int64
		want   int64
	}{
		// 2·4·100/1 = 800.
		{"token_bucket", map[string]int64{"capacity": 4, "refill_tokens": 1, "refill_ms": 100}, 800},
		// 2·3·7/2 = 21 (ceil(3·7/2) = 11 doubled would be 22).
		{"gcra", map[string]int64{"burst": 3, "rate": 2, "period_ms": 7}, 21},
		// ceil(2·3·7/4) = ceil(10.5) = 11.
		{"leaky_bucket", map[string]int64{"capacity": 3, "rate": 4, "period_ms": 7}, 11},
		{"fixed_window", fwParams(3, 1000), 1000},
		{"sliding_log", fwParams(3, 1000), 1000},
		{"meta_window", fwParams(3, 1000), 1000},
		{"sliding_window", fwParams(3, 1000), 2000},
		{"bucket_window", map[string]int64{"limit": 4, "window_ms": 1000, "bucket_ms": 100, "limit_2": 9, "window_ms_2": 3000}, 3000},
	} {
		if got, ok := MaxTTL(c.alg, c.params); !ok || got != c.want+extra {
			t.Errorf("MaxTTL(%s, %v) = %d %v, want %d", c.alg, c.params, got, ok, c.want+extra)
		}
	}
}

// TestForceGCRAIsTokenBucket: on random traces with forced steps (and
// clocks behind, at times past MaxSkewMs), gcra and token_bucket with the
// same parameters give identical results, and leaky_bucket gcra's but for
// delay_ms.
func TestForceGCRAIsTokenBucket(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	forced := 0
	for trial := 0; trial < 200; trial++ {
		b, r, p := rng.Int63n(20)+1, rng.Int63n(50)+1, rng.Int63n(5000)+1
		g := mustNew(t, "gcra", map[string]int64{"burst": b, "rate": r, "period_ms": p})
		tb := mustNew(t, "token_bucket", map[string]int64{"capacity": b, "refill_tokens": r, "refill_ms": p})
		lb := mustNew(t, "leaky_bucket", map[string]int64{"capacity": b, "rate": r, "period_ms": p})
		now := int64(1700000000000)
		for i := 0; i < 300; i++ {
			now += rng.Int63n(p/2+2) - rng.Int63n(3)*int64(rng.Intn(2))
			if rng.Intn(50) == 0 {
				now -= rng.Int63n(2 * MaxSkewMs)
			}
			key, cost, force := []string{"a", "b"}[rng.Intn(2)], rng.Int63n(2*b+2), rng.Intn(3) == 0
			if rng.Intn(20) == 0 {
				cost = huge
			}
			call := func(m Model) (Result, error) {
				if force {
					return m.Force(key, now, cost, nil)
				}
				return m.Decide(key, now, cost, nil)
			}
			x, errX := call(g)
			y, errY := call(tb)
			z, errZ := call(lb)
			z.DelayMs = 0
			if x != y || x != z || errX != nil || errY != nil || errZ != nil {
				t.Fatalf("burst %d rate %d period %d, step %d (t %d, %s, cost %d, force %v): gcra %+v %v, token_bucket %+v %v, leaky_bucket %+v %v",
					b, r, p, i, now, key, cost, force, x, errX, y, errY, z, errZ)
			}
			if force && !x.Allowed {
				forced++
			}
		}
	}
	if forced < 1000 {
		t.Errorf("only %d forced denials: the traces do not test enough", forced)
	}
}

// forceSets are small parameters of every algorithm, for the random
// traces below.
var forceSets = []struct {
	alg string
	p   map[string]int64
}{
	{"fixed_window", map[string]int64{"limit": 3, "window_ms": 20}},
	{"sliding_window", map[string]int64{"limit": 3, "window_ms": 20}},
	{"sliding_log", map[string]int64{"limit": 5, "window_ms": 40}},
	{"meta_window", map[string]int64{"limit": 5, "window_ms": 40}},
	{"bucket_window", map[string]int64{"limit": 3, "window_ms": 30, "bucket_ms": 10}},
	{"bucket_window", map[string]int64{"limit": 4, "window_ms": 10, "bucket_ms": 10,
		"limit_2": 10, "window_ms_2": 100, "limit_3": 14, "window_ms_3": 150}},
	{"bucket_window", map[string]int64{"limit": 6, "window_ms": 60, "bucket_ms": 20,
		"limit_3": 3, "window_ms_3": 20}},
	{"token_bucket", map[string]int64{"capacity": 3, "refill_tokens": 2, "refill_ms": 7}},
	{"gcra", map[string]int64{"burst": 5, "rate": 3, "period_ms": 10}},
	{"leaky_bucket", map[string]int64{"capacity": 4, "rate": 1, "period_ms": 6}},
}

// TestForceWaitsAreTight: on random traces with forced steps, for every
// algorithm, each result is checked against the contract's definitions on
// a copy of the state (every earlier call replayed): a forced call that
// the decision admits, or a peek, is exactly Decide; a forced denial
// reports Decide's allowed; the same request is allowed at now+retry and
// not at now+retry-1 (from the state after the charge); at now+reset a
// peek finds remaining = limit, at now+reset-1 it does not; and for a
// caller on time, reset stays within the horizon of MaxTTL.
func TestForceWaitsAreTight(t *testing.T) {
	for _, set := range forceSets {
		name := fmt.Sprintf("%s %v", set.alg, set.p)
		rng := rand.New(rand.NewSource(int64(len(set.p)) + int64(len(set.alg))))
		tr := &forceTrace{t: t, alg: set.alg, p: set.p, m: mustNew(t, set.alg, set.p)}
		ttl, _ := MaxTTL(set.alg, set.p)
		horizon := ttl - MaxSkewMs - TTLMarginMs
		now, latest := int64(1000), int64(0)
		forcedDenials, waited := 0, 0
		for i := 0; i < 250; i++ {
			now += rng.Int63n(12) - 2
			key, cost, force := []string{"a", "b"}[rng.Intn(2)], rng.Int63n(5), rng.Intn(3) == 0
			if rng.Intn(10) == 0 {
				cost = 20 // past twice any limit here
			}
			c := forceCall{key, now, cost, force}
			decided := tr.at(key, now, cost)
			r := tr.call(c)
			where := fmt.Sprintf("%s step %d (t %d, %s, cost %d, force %v): %+v", name, i, now, key, cost, force, r)
			denial, wait := tr.check(where, c, decided, r)
			if denial {
				forcedDenials++
			}
			if wait {
				waited++
			}
			if now >= latest && r.ResetAfterMs > horizon {
				t.Errorf("%s: reset past the horizon %d", where, horizon)
			}
			latest = max(latest, now)
		}
		if forcedDenials < 20 {
			t.Errorf("%s: only %d forced denials", name, forcedDenials)
		}
		t.Logf("%s: %d forced denials, %d with a reset wait", name, forcedDenials, waited)
	}
}

// forceCall is one call of a trace: Force when force, else Decide.
type forceCall struct {
	key       string
	now, cost int64
	force     bool
}

// forceTrace is a trace of calls of one limit, made on m and kept in
// hist, so that a request can be decided on a copy of m's state.
type forceTrace struct {
	t    *testing.T
	alg  string
	p    map[string]int64
	m    Model
	hist []forceCall
}

// call makes c on m, keeps it, and returns its result.
func (tr *forceTrace) call(c forceCall) Result {
	var r Result
	var err error
	if c.force {
		r, err = tr.m.Force(c.key, c.now, c.cost, nil)
	} else {
		r, err = tr.m.Decide(c.key, c.now, c.cost, nil)
	}
	if err != nil {
		tr.t.Fatal(err)
	}
	tr.hist = append(tr.hist, c)
	return r
}

// at decides a request on a copy of m's current state.
func (tr *forceTrace) at(key string, now, cost int64) Result {
	c := mustNew(tr.t, tr.alg, tr.p)
	for _, h := range tr.hist {
		if h.force {
			c.Force(h.key, h.now, h.cost, nil)
		} else {
			c.Decide(h.key, h.now, h.cost, nil)
		}
	}
	r, err := c.Decide(key, now, cost, nil)
	if err != nil {
		tr.t.Fatal(err)
	}
	return r
}

// check checks r, the result of the call c just made (decided: Decide's
// result for it, on the state before), against the contract's
// definitions on the state after it; it reports whether r is a forced
// denial, and whether it has a reset wait.
func (tr *forceTrace) check(where string, c forceCall, decided, r Result) (forcedDenial, waited bool) {
	t := tr.t
	switch {
	case decided.Allowed || c.cost == 0:
		if r != decided {
			t.Errorf("%s: Decide gives %+v", where, decided)
		}
	case r.Allowed:
		t.Errorf("%s: Decide denies", where)
	default:
		forcedDenial = true
	}
	if !r.Allowed && r.RetryAfterMs >= 1 {
		if !tr.at(c.key, c.now+r.RetryAfterMs, c.cost).Allowed {
			t.Errorf("%s: denied at now+retry", where)
		}
		if r.RetryAfterMs > 1 && tr.at(c.key, c.now+r.RetryAfterMs-1, c.cost).Allowed {
			t.Errorf("%s: allowed at now+retry-1", where)
		}
	}
	if !r.Allowed && (r.RetryAfterMs == -1) != (c.cost > r.Limit) {
		t.Errorf("%s: retry -1 iff cost > limit", where)
	}
	if !r.Allowed && r.RetryAfterMs == 0 {
		t.Errorf("%s: denied with retry 0", where)
	}
	if p := tr.at(c.key, c.now+r.ResetAfterMs, 0); p.Remaining != p.Limit {
		t.Errorf("%s: remaining %d at now+reset", where, p.Remaining)
	}
	if r.ResetAfterMs > 0 {
		waited = true
		if p := tr.at(c.key, c.now+r.ResetAfterMs-1, 0); p.Remaining == p.Limit {
			t.Errorf("%s: remaining = limit at now+reset-1", where)
		}
	}
	if r.Remaining < 0 || r.Remaining > r.Limit {
		t.Errorf("%s: remaining out of [0, limit]", where)
	}
	return forcedDenial, waited
}
