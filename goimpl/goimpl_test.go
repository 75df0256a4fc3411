package goimpl

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const t0 = 1700000000000 // a time in ms, 2023-11-14

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		alg    string
		params map[string]int64
		want   string
	}{
		{"leaky_faucet", map[string]int64{}, `unknown algorithm "leaky_faucet"`},
		{"gcra", map[string]int64{"rate": 1, "period_ms": 1}, "gcra: missing parameter burst"},
		{"gcra", map[string]int64{"burst": 1, "rate": 1, "period_ms": 1, "prd": 1}, `gcra: unknown parameter "prd"`},
		{"gcra", map[string]int64{"burst": 0, "rate": 1, "period_ms": 1}, "gcra: parameter burst must be an integer in [1, 1000000000000], got 0"},
		{"gcra", map[string]int64{"burst": 1000000, "rate": 1, "period_ms": 1000000001}, "gcra: burst times period_ms must not exceed 10^15"},
		{"fixed_window", map[string]int64{"limit": 5, "window_ms": 100000000001}, "fixed_window: parameter window_ms must be an integer in [1, 100000000000], got 100000000001"},
		{"token_bucket", map[string]int64{"capacity": -1, "refill_tokens": 1, "refill_ms": 1}, "token_bucket: parameter capacity must be an integer in [1, 1000000000000], got -1"},
		{"token_bucket", map[string]int64{"capacity": 1000000000000, "refill_tokens": 1, "refill_ms": 1001}, "token_bucket: capacity times refill_ms must not exceed 10^15"},
		{"token_bucket", map[string]int64{"capacity": 1000000, "refill_tokens": 9999, "refill_ms": 1000000000}, "token_bucket: the time to refill from empty, capacity times refill_ms / refill_tokens, must not exceed 10^11 ms"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			l, err := New(tt.alg, tt.params)
			if err == nil {
				t.Fatalf("New accepted, returned %T", l)
			}
			if !errors.Is(err, ErrBadInput) {
				t.Errorf("error %v does not match ErrBadInput", err)
			}
			if got := err.Error(); len(got) < len(tt.want) || got[:len(tt.want)] != tt.want {
				t.Errorf("error %q, want it to start with %q", got, tt.want)
			}
		})
	}
}

func TestAllowRefuses(t *testing.T) {
	l, err := New("fixed_window", map[string]int64{"limit": 2, "window_ms": 1000})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key       string
		now, cost int64
		want      string
	}{
		{"", t0, 1, "fixed_window: key must not be empty"},
		{"}x", t0, 1, "fixed_window: key must not begin with '}' (its hash tag would be empty)"},
		{"k", -2, 1, "fixed_window: now_ms must be an integer in [0, 35184372088832], got -2"},
		{"k", 1<<45 + 1, 1, "fixed_window: now_ms must be an integer in [0, 35184372088832], got 35184372088833"},
		{"k", t0, -1, "fixed_window: cost must be an integer in [0, 9007199254740991], got -1"},
		{"k", t0, 1 << 53, "fixed_window: cost must be an integer in [0, 9007199254740991], got 9007199254740992"},
	}
	for _, tt := range tests {
		_, err := l.Allow(tt.key, tt.now, tt.cost)
		if !errors.Is(err, ErrBadInput) || err.Error() != tt.want {
			t.Errorf("Allow(%q, %d, %d) = %v, want %q", tt.key, tt.now, tt.cost, err, tt.want)
		}
	}
	// Refused calls changed nothing: the key still has its whole limit.
	if r, err := l.Allow("k", t0, 0); err != nil || r.Remaining != 2 {
		t.Errorf("after refusals: %+v, %v; want remaining 2", r, err)
	}
}

// TestZeroLimiterRefuses: a limiter not made by its constructor has no
// parameters; it refuses every call instead of panicking.
func TestZeroLimiterRefuses(t *testing.T) {
	var nilGCRA *GCRA
	tests := []struct {
		name string
		call func() error
	}{
		{"GCRA{}", func() error { _, err := (&GCRA{}).Allow("k", t0, 1); return err }},
		{"nil *GCRA", func() error { _, err := nilGCRA.Allow("k", t0, 1); return err }},
		{"MetaWindow{}.AllowMeta", func() error { _, err := (&MetaWindow{}).AllowMeta("k", t0, 1, "m"); return err }},
		{"MetaWindow{}.Entries", func() error { _, err := (&MetaWindow{}).Entries("k", t0); return err }},
	}
	for _, tt := range tests {
		if err := tt.call(); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "has no parameters") {
			t.Errorf("%s: error %v, want ErrBadInput saying it has no parameters", tt.name, err)
		}
	}
}

// TestNowReadsTheProcessClock: Now decides at time.Now, as an explicit
// time taken around the call would.
func TestNowReadsTheProcessClock(t *testing.T) {
	l, err := NewFixedWindow(FixedWindowParams{Limit: 1, WindowMs: 3600000})
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().UnixMilli()
	r, err := l.Allow("k", Now, 1)
	after := time.Now().UnixMilli()
	if err != nil || !r.Allowed {
		t.Fatalf("Allow at Now: %+v, %v", r, err)
	}
	// The window ends at the next multiple of an hour after the time used.
	end := func(t int64) int64 { return (t/3600000 + 1) * 3600000 }
	if r.ResetAfterMs < end(after)-after || r.ResetAfterMs > end(before)-before {
		t.Errorf("reset_after_ms %d is not the wait to the window's end from a time in [%d, %d]", r.ResetAfterMs, before, after)
	}
	// The admission was recorded at that time: an explicit call then is denied.
	if r, err := l.Allow("k", after, 1); err != nil || r.Allowed {
		t.Errorf("explicit call after Now: %+v, %v; want denied", r, err)
	}
}

// TestNewAcceptsWholeDomain tries the corners of every parameter domain:
// New must accept exactly the parameters docs/semantics.md allows (each
// within its domain and the joint bound), so that the generated runtime
// checks on exactness never refuse documented parameters.
func TestNewAcceptsWholeDomain(t *testing.T) {
	type param struct {
		name   string
		lo, hi int64
	}
	algs := []struct {
		name   string
		params []param
		joint  func(p map[string]int64) bool
	}{
		{"fixed_window", []param{{"limit", 1, 1e12}, {"window_ms", 1, 1e11}}, func(map[string]int64) bool { return true }},
		{"token_bucket", []param{{"capacity", 1, 1e12}, {"refill_tokens", 1, 1e12}, {"refill_ms", 1, 1e11}},
			func(p map[string]int64) bool { return bucketOK(p["capacity"], p["refill_ms"], p["refill_tokens"]) }},
		{"gcra", []param{{"burst", 1, 1e12}, {"rate", 1, 1e12}, {"period_ms", 1, 1e11}},
			func(p map[string]int64) bool { return bucketOK(p["burst"], p["period_ms"], p["rate"]) }},
		{"leaky_bucket", []param{{"capacity", 1, 1e12}, {"rate", 1, 1e12}, {"period_ms", 1, 1e11}},
			func(p map[string]int64) bool { return bucketOK(p["capacity"], p["period_ms"], p["rate"]) }},
		{"sliding_window", []param{{"limit", 1, 1e12}, {"window_ms", 1, 1e11}},
			func(p map[string]int64) bool {
				return new(big.Int).Mul(big.NewInt(p["limit"]), big.NewInt(p["window_ms"])).Cmp(big.NewInt(1e15)) <= 0
			}},
		{"sliding_log", []param{{"limit", 1, 1e5}, {"window_ms", 1, 1e11}}, func(map[string]int64) bool { return true }},
		{"meta_window", []param{{"limit", 1, 1e5}, {"window_ms", 1, 1e11}}, func(map[string]int64) bool { return true }},
		{"bucket_window", []param{{"limit", 1, 5e11}, {"window_ms", 1, 1e11}, {"bucket_ms", 1, 1e11}},
			func(p map[string]int64) bool {
				return p["window_ms"]%p["bucket_ms"] == 0 && p["window_ms"]/p["bucket_ms"] <= 3600
			}},
	}
	for _, a := range algs {
		// Each parameter takes its ends, a middle value, and values around
		// the joint bound 10^15 when paired with another parameter.
		values := func(p param) []int64 {
			return []int64{p.lo, p.hi, 7, 1000, 1e3 + 1, 1e4, 1e5, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12}
		}
		var combos []map[string]int64
		var build func(i int, cur map[string]int64)
		build = func(i int, cur map[string]int64) {
			if i == len(a.params) {
				c := map[string]int64{}
				for k, v := range cur {
					c[k] = v
				}
				combos = append(combos, c)
				return
			}
			for _, v := range values(a.params[i]) {
				if v < a.params[i].lo || v > a.params[i].hi {
					continue
				}
				cur[a.params[i].name] = v
				build(i+1, cur)
			}
		}
		build(0, map[string]int64{})
		for _, p := range combos {
			l, err := New(a.name, p)
			if want := a.joint(p); (err == nil) != want {
				t.Errorf("New(%s, %v): err %v, want accepted=%v", a.name, p, err, want)
				continue
			}
			if l == nil {
				continue
			}
			// The extremes of the inputs decide without error.
			for _, in := range [][2]int64{{0, 0}, {1 << 45, 1<<53 - 1}, {1 << 45, 1}, {0, 1}} {
				if _, err := l.Allow("k", in[0], in[1]); err != nil {
					t.Errorf("%s %v: Allow(now=%d, cost=%d): %v", a.name, p, in[0], in[1], err)
				}
			}
		}
	}
}

func TestTypedConstructorMatchesNew(t *testing.T) {
	typed, err := NewGCRA(GCRAParams{Burst: 3, Rate: 7, PeriodMs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	named, err := New("gcra", map[string]int64{"burst": 3, "rate": 7, "period_ms": 1000})
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 50; i++ {
		now := t0 + i*37
		a, errA := typed.Allow("k", now, i%3)
		b, errB := named.Allow("k", now, i%3)
		if a != b || errA != nil || errB != nil {
			t.Fatalf("step %d: typed %+v %v, New %+v %v", i, a, errA, b, errB)
		}
	}
}

// TestConcurrentExact hammers one key from many goroutines: a fixed window
// admits exactly its limit, never more, never less.
// TestConcurrentExact: many goroutines hammering one key at one instant
// get exactly the limit admitted, on every algorithm.
func TestConcurrentExact(t *testing.T) {
	const limit, goroutines, each = 1000, 16, 200
	for _, tt := range []struct {
		name   string
		params map[string]int64
	}{
		{"fixed_window", map[string]int64{"limit": limit, "window_ms": 60000}},
		{"sliding_window", map[string]int64{"limit": limit, "window_ms": 60000}},
		{"sliding_log", map[string]int64{"limit": limit, "window_ms": 60000}},
		{"bucket_window", map[string]int64{"limit": limit, "window_ms": 60000, "bucket_ms": 1000, "limit_2": 2 * limit, "window_ms_2": 120000}},
		{"meta_window", map[string]int64{"limit": limit, "window_ms": 60000}},
		{"token_bucket", map[string]int64{"capacity": limit, "refill_tokens": 1, "refill_ms": 60000}},
		{"gcra", map[string]int64{"burst": limit, "rate": 1, "period_ms": 60000}},
		{"leaky_bucket", map[string]int64{"capacity": limit, "rate": 1, "period_ms": 60000}},
	} {
		l, err := New(tt.name, tt.params)
		if err != nil {
			t.Fatal(err)
		}
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := 0; i < each; i++ {
					r, err := l.Allow("shared", t0, 1)
					if err != nil {
						t.Error(err)
						return
					}
					if r.Allowed {
						admitted.Add(1)
					}
					// Other keys in other shards at the same time.
					if _, err := l.Allow(fmt.Sprint("own", g), t0, 1); err != nil {
						t.Error(err)
					}
				}
			}(g)
		}
		wg.Wait()
		if got := admitted.Load(); got != limit {
			t.Errorf("%s: admitted %d of %d requests, want exactly %d", tt.name, got, goroutines*each, limit)
		}
	}
}

// TestMetaWindowEntries: the metas of the admitted requests read back in
// order, for the window open at the time asked; a denied request is not
// recorded, and a new window starts a new list. Values worked by hand:
// limit 3 per window of 1000 ms from the first admission.
func TestMetaWindowEntries(t *testing.T) {
	l, err := NewMetaWindow(MetaWindowParams{Limit: 3, WindowMs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		dt, cost int64
		meta     string
		allowed  bool
		retry    int64
	}{
		{0, 1, "alice", true, -1},
		{10, 2, "bob", true, -1},
		{20, 1, "carol", false, 980}, // 3 + 1 > 3 until the window ends at t0+1000
	}
	for _, s := range steps {
		r, err := l.AllowMeta("10.0.0.7", t0+s.dt, s.cost, s.meta)
		if err != nil || r.Allowed != s.allowed || r.RetryAfterMs != s.retry {
			t.Fatalf("%s at t0+%d: %+v, %v; want allowed %v, retry %d", s.meta, s.dt, r, err, s.allowed, s.retry)
		}
	}
	want := []MetaWindowLogEntry{{TMs: t0, Cost: 1, Meta: "alice"}, {TMs: t0 + 10, Cost: 2, Meta: "bob"}}
	if got, err := l.Entries("10.0.0.7", t0+30); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Entries at t0+30 = %v, %v; want %v", got, err, want)
	}
	if got, err := l.Entries("10.0.0.7", t0+1000); err != nil || len(got) != 0 {
		t.Errorf("Entries once the window has ended = %v, %v; want none", got, err)
	}
	if r, _ := l.AllowMeta("10.0.0.7", t0+1000, 1, "dave"); !r.Allowed || r.Remaining != 2 || r.ResetAfterMs != 1000 {
		t.Errorf("the first request of a new window: %+v", r)
	}
	recs, err := l.View("entries", "10.0.0.7", t0+1000)
	if err != nil || fmt.Sprint(recs) != fmt.Sprint([]Record{{int64(t0 + 1000), int64(1), "dave"}}) {
		t.Errorf("View(entries) = %v, %v; want dave's entry alone", recs, err)
	}
	if _, err := l.View("nope", "10.0.0.7", t0); !errors.Is(err, ErrBadInput) {
		t.Errorf("an unknown view: %v, want ErrBadInput", err)
	}
	long := string(make([]byte, 257))
	if _, err := l.AllowMeta("10.0.0.7", t0+1001, 1, long); !errors.Is(err, ErrBadInput) || err.Error() != "meta_window: meta must be at most 256 bytes, got 257" {
		t.Errorf("a meta of 257 bytes: %v", err)
	}
	if got, _ := l.Entries("10.0.0.7", t0+1001); len(got) != 1 {
		t.Errorf("a refused request changed the entries: %v", got)
	}
}

// TestIdleKeysAreEvicted writes many short-lived keys over a long time:
// the store keeps only about the keys live within one TTL.
func TestIdleKeysAreEvicted(t *testing.T) {
	l, err := NewFixedWindow(FixedWindowParams{Limit: 10, WindowMs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	// Each key lives at most window (1 s) + margin (60 s); 1000 new keys a
	// second for 10 minutes would be 600000 keys without eviction.
	const perSecond, seconds = 1000, 600
	for s := int64(0); s < seconds; s++ {
		for k := int64(0); k < perSecond; k++ {
			if _, err := l.Allow(fmt.Sprint(s, "/", k), t0+s*1000, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	live := int64(62 * perSecond) // keys written within the last TTL
	if n := l.states.len(); n > int(3*live) {
		t.Errorf("store holds %d keys, want at most %d (about 2x the %d live ones)", n, 3*live, live)
	}
}

// TestExpiredStateReadsAsAbsent checks that a key whose TTL ran out on the
// caller's clock starts afresh, as in Redis.
func TestExpiredStateReadsAsAbsent(t *testing.T) {
	l, _ := NewFixedWindow(FixedWindowParams{Limit: 1, WindowMs: 1000})
	if r, _ := l.Allow("k", t0, 1); !r.Allowed {
		t.Fatal("first request denied")
	}
	if r, _ := l.Allow("k", t0+1, 1); r.Allowed {
		t.Fatal("second request in the window admitted")
	}
	// Long after the TTL: absent, so admitted, at the caller's time.
	if r, _ := l.Allow("k", t0+3600000, 1); !r.Allowed || r.Remaining != 0 {
		t.Fatalf("after expiry: %+v", r)
	}
}

// TestAllowDoesNotAllocate: the algorithms whose state is a few integers
// decide for an existing key without allocating. (Those that keep
// entries, sliding_log, bucket_window and meta_window, grow and trim
// slices; BenchmarkAllow reports their allocations.)
func TestAllowDoesNotAllocate(t *testing.T) {
	for _, name := range []string{"fixed_window", "gcra", "leaky_bucket", "sliding_window", "token_bucket"} {
		l := mustNew(t, name)
		if _, err := l.Allow("existing", t0, 1); err != nil {
			t.Fatal(err)
		}
		now := int64(t0)
		allocs := testing.AllocsPerRun(1000, func() {
			now++
			if _, err := l.Allow("existing", now, 1); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per decision for an existing key, want 0", name, allocs)
		}
	}
}

func TestSaturating(t *testing.T) {
	const M, m = math.MaxInt64, math.MinInt64
	tests := []struct {
		name string
		got  int64
		want int64
	}{
		{"add", satAdd(2, 3), 5},
		{"add overflow", satAdd(M, 1), M},
		{"add underflow", satAdd(m, -1), m},
		{"sub", satSub(2, 3), -1},
		{"sub overflow", satSub(M, -1), M},
		{"sub min", satSub(0, m), M},
		{"mul", satMul(1e9, 1e9), 1e18},
		{"mul overflow", satMul(1e12, 1e11), M},
		{"mul negative overflow", satMul(-1e12, 1e11), m},
		{"ceildiv", satCeilDiv(7, 2), 4},
		{"ceildiv exact", satCeilDiv(8, 2), 4},
		{"ceildiv of max", satCeilDiv(M, M), 1},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

// TestBucketWindowTiersAcceptWholeDomain: bucket_window's tiers 2 and 3
// are accepted exactly when both their parameters are 0 or both positive,
// with windows that are multiples of bucket_ms spanning at most 3600
// buckets, over the ends of every domain.
func TestBucketWindowTiersAcceptWholeDomain(t *testing.T) {
	tierOK := func(limit, window, bucket int64) bool {
		if limit == 0 || window == 0 {
			return limit == 0 && window == 0
		}
		return window%bucket == 0 && window/bucket <= 3600
	}
	for _, bucket := range []int64{1, 7, 1000, 1e11} {
		for _, limit := range []int64{1, 5e11} {
			for _, l2 := range []int64{0, 1, 5e11} {
				for _, w2 := range []int64{0, bucket, 3600 * bucket, 3601 * bucket, bucket + 1, 1e11} {
					for _, l3 := range []int64{0, 5e11} {
						for _, w3 := range []int64{0, 1e11, 2 * bucket} {
							p := map[string]int64{"limit": limit, "window_ms": bucket, "bucket_ms": bucket,
								"limit_2": l2, "window_ms_2": w2, "limit_3": l3, "window_ms_3": w3}
							want := w2 <= 1e11 && w3 <= 1e11 && tierOK(l2, w2, bucket) && tierOK(l3, w3, bucket)
							l, err := New("bucket_window", p)
							if (err == nil) != want {
								t.Errorf("New(bucket_window, %v): err %v, want accepted=%v", p, err, want)
								continue
							}
							if err != nil {
								if !errors.Is(err, ErrBadInput) {
									t.Errorf("%v: %v does not match ErrBadInput", p, err)
								}
								continue
							}
							for _, in := range [][2]int64{{0, 0}, {1 << 45, 1<<53 - 1}, {1 << 45, 1}, {0, 1}} {
								if _, err := l.Allow("k", in[0], in[1]); err != nil {
									t.Errorf("%v: Allow(now=%d, cost=%d): %v", p, in[0], in[1], err)
								}
							}
						}
					}
				}
			}
		}
	}
}

// bucketOK is the joint rule of docs/semantics.md for token_bucket and
// gcra: count x period <= 10^15, and from empty to full, count x period /
// rate ms, within 10^11 ms.
func bucketOK(count, period, rate int64) bool {
	prod := new(big.Int).Mul(big.NewInt(count), big.NewInt(period))
	fill := new(big.Rat).SetFrac(prod, big.NewInt(rate))
	return prod.Cmp(big.NewInt(1e15)) <= 0 && fill.Cmp(new(big.Rat).SetInt64(1e11)) <= 0
}

// mustNew returns a limiter of the named algorithm with small parameters.
func mustNew(tb testing.TB, name string) Limiter {
	tb.Helper()
	params := map[string]map[string]int64{
		"fixed_window":   {"limit": 1000000, "window_ms": 1000},
		"token_bucket":   {"capacity": 1000000, "refill_tokens": 7, "refill_ms": 1000},
		"gcra":           {"burst": 1000000, "rate": 7, "period_ms": 1000},
		"leaky_bucket":   {"capacity": 1000000, "rate": 7, "period_ms": 1000},
		"sliding_window": {"limit": 1000000, "window_ms": 1000},
		"sliding_log":    {"limit": 1000, "window_ms": 1000},
		"bucket_window":  {"limit": 1000, "window_ms": 1000, "bucket_ms": 100, "limit_2": 5000, "window_ms_2": 10000},
		"meta_window":    {"limit": 1000, "window_ms": 1000},
	}[name]
	l, err := New(name, params)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return l
}

// BenchmarkAllow measures one decision on an existing key, from all
// GOMAXPROCS goroutines over 1024 keys.
func BenchmarkAllow(b *testing.B) {
	for _, name := range Algorithms() {
		b.Run(name, func(b *testing.B) {
			l := mustNew(b, name)
			keys := make([]string, 1024)
			for i := range keys {
				keys[i] = fmt.Sprint("user", i)
			}
			var clock atomic.Int64
			clock.Store(t0)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					i++
					if _, err := l.Allow(keys[i%len(keys)], clock.Add(1)/1000, 1); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
