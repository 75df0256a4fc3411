package goimpl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"
)

// testStore is what the tests reach of a limiter's store.
type testStore interface {
	len() int
	sweepOnce()
	stopSweeper()
	setSweeper(clock func() time.Duration, interval time.Duration)
	setSweepAt(n int)
	beginAll()
	liveKeys(nowMs int64) []string
	sweeperOf() *sweeper
}

// storeOf returns the store of a limiter of this package.
func storeOf(tb testing.TB, l Limiter) testStore {
	tb.Helper()
	switch l := l.(type) {
	case *BucketWindow:
		return l.states
	case *FixedWindow:
		return l.states
	case *GCRA:
		return l.states
	case *LeakyBucket:
		return l.states
	case *MetaWindow:
		return l.states
	case *SlidingLog:
		return l.states
	case *SlidingWindow:
		return l.states
	case *TokenBucket:
		return l.states
	}
	tb.Fatalf("no store known for %T", l)
	return nil
}

// setSweeper gives the sweeper another clock and interval; before the
// first key.
func (s *store[S]) setSweeper(clock func() time.Duration, interval time.Duration) {
	s.sw.clock, s.sw.interval = clock, interval
}

// setSweepAt sets the size at which every shard's growth starts a pass.
func (s *store[S]) setSweepAt(n int) {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.sweepAt = n
		sh.mu.Unlock()
	}
}

// beginAll starts a pass in every shard that has none under way.
func (s *store[S]) beginAll() {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		if sh.old.m == nil {
			sh.begin()
		}
		sh.mu.Unlock()
	}
}

// liveKeys returns the keys whose state has not expired by nowMs.
func (s *store[S]) liveKeys(nowMs int64) []string {
	var keys []string
	live := func(e *entry[S]) {
		if expiry(&e.state) > nowMs {
			keys = append(keys, e.key)
		}
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for j := range sh.cur.n {
			live(sh.cur.at(j))
		}
		for j := sh.cursor; j < sh.old.n; j++ { // those before are gone
			live(sh.old.at(j))
		}
		sh.mu.Unlock()
	}
	slices.Sort(keys)
	return keys
}

// sweeperOf returns the store's sweeper.
func (s *store[S]) sweeperOf() *sweeper { return s.sw }

// sweepOnce runs one round of the sweeper by hand.
func (s *store[S]) sweepOnce() { sweepRound(weak.Make(s), nil) }

// expiresAt is a state that expires at a given time.
type expiresAt struct{ exp int64 }

func (s *expiresAt) expires() int64 { return s.exp }

// manualClock is a sweeper clock the test sets.
type manualClock struct{ d atomic.Int64 }

func (c *manualClock) read() time.Duration { return time.Duration(c.d.Load()) }
func (c *manualClock) set(d time.Duration) { c.d.Store(int64(d)) }

// TestSweeperReckonsCallersTime: the sweeper reclaims exactly the keys
// whose expiry is at or before the latest call's nowMs plus the time its
// clock has run since it first saw that nowMs; none later.
func TestSweeperReckonsCallersTime(t *testing.T) {
	tests := []struct {
		name     string
		calls    []int64       // nowMs of calls to every shard, in order
		seen, at time.Duration // the sweeper's clock at its two rounds
		want     int64         // the time it must reckon at the second
	}{
		{"no time passes", []int64{t0}, 0, 0, t0},
		{"the caller's clock moves on", []int64{t0 + 50000}, time.Second, time.Second, t0 + 50000},
		{"the sweeper's clock moves on", []int64{t0}, 0, 50 * time.Second, t0 + 50000},
		{"whole ms only", []int64{t0}, 0, 50*time.Second - time.Nanosecond, t0 + 49999},
		{"counted from when the sweeper saw the call", []int64{t0}, 10 * time.Second, 40 * time.Second, t0 + 30000},
		{"the latest call, even earlier", []int64{t0 + 90000, t0 + 20000}, 0, 10 * time.Second, t0 + 30000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore[expiresAt]()
			s.stopSweeper() // rounds run by hand
			var clock manualClock
			s.setSweeper(clock.read, time.Hour)
			var all []string
			for i := range 2000 {
				k := "k" + strconv.Itoa(i)
				sh := s.shard(k)
				sh.put(k, sh.get(k, t0), expiresAt{t0 + int64(i)*100})
				all = append(all, k)
			}
			for _, now := range tt.calls {
				for i := range s.shards {
					s.shards[i].get("", now)
				}
			}
			clock.set(tt.seen)
			s.sweepOnce()
			s.beginAll()
			clock.set(tt.at)
			s.sweepOnce()
			var want []string
			for i, k := range all {
				if t0+int64(i)*100 > tt.want {
					want = append(want, k)
				}
			}
			slices.Sort(want)
			if got := s.liveKeys(math.MinInt64); !slices.Equal(got, want) {
				t.Errorf("holds %d keys, want the %d expiring after %d", len(got), len(want), tt.want)
			}
		})
	}
}

// TestLookupsDuringPasses: while passes move a shard's keys a few at a
// time from its old map to its new one, every live key is found, with its
// state; an expired key found there has its own.
func TestLookupsDuringPasses(t *testing.T) {
	s := newStore[expiresAt]()
	s.stopSweeper()
	// About 60 keys a shard, so that a pass takes several calls; a third
	// expire at t0+1, live when read at t0.
	const n = 4000
	exp := func(i int) int64 { return t0 + int64(i%3) - 1 }
	for i := range n {
		k := strconv.Itoa(i)
		sh := s.shard(k)
		sh.put(k, sh.get(k, t0), expiresAt{exp(i)})
	}
	s.beginAll()
	for i := range n {
		k := strconv.Itoa(i)
		e := s.shard(k).get(k, t0)
		if e == nil && exp(i) > t0 || e != nil && e.state.exp != exp(i) {
			t.Fatalf("key %s, expiring at %d, read at %d: entry %v", k, exp(i), t0, e)
		}
	}
	if got, live := s.len(), len(s.liveKeys(t0)); live != n/3 || got > n {
		t.Errorf("holds %d keys, %d of them live; want the %d live ones and at most all %d", got, live, n/3, n)
	}
}

// TestCallsFinishPassesOnceStopped: a pass the sweeper began, left half
// done when it stopped, is finished by calls.
func TestCallsFinishPassesOnceStopped(t *testing.T) {
	s := newStore[expiresAt]()
	const n = 4000
	for i := range n {
		k := strconv.Itoa(i)
		sh := s.shard(k)
		sh.put(k, sh.get(k, t0), expiresAt{t0 + 1})
	}
	s.beginAll() // as the sweeper would, calls not helping
	s.stopSweeper()
	for i := range n {
		k := strconv.Itoa(i)
		if e := s.shard(k).get(k, t0+1); e != nil {
			t.Fatalf("key %s expired at %d, read at %d: entry %v", k, t0+1, t0+1, e)
		}
	}
	if got := s.len(); got != 0 {
		t.Errorf("holds %d expired keys, want none", got)
	}
}

// TestCallsAloneBoundMemory: with the sweeper stopped, a limiter that gets
// new short-lived keys all the time keeps about those live within one TTL
// (as TestIdleKeysAreEvicted, which lets the sweeper run).
func TestCallsAloneBoundMemory(t *testing.T) {
	l, err := NewFixedWindow(FixedWindowParams{Limit: 10, WindowMs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	l.StopSweeper()
	const perSecond, seconds = 1000, 300
	for s := int64(0); s < seconds; s++ {
		for k := int64(0); k < perSecond; k++ {
			if _, err := l.Allow(fmt.Sprint(s, "/", k), t0+s*1000, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	live := 62 * perSecond // keys written within the last TTL
	if n := l.states.len(); n > 3*live {
		t.Errorf("store holds %d keys, want at most %d (about 2x the %d live ones)", n, 3*live, live)
	}
}

// TestDue: a pass is due when a sample of the shard's keys has expired,
// not when none has.
func TestDue(t *testing.T) {
	tests := []struct {
		name string
		exps []int64
		want bool
	}{
		{"empty", nil, false},
		{"none expired", []int64{t0 + 1, t0 + 2, t0 + 3}, false},
		{"all expired", []int64{t0 - 1, t0, t0 - 5}, true},
		{"many keys, all expired", slices.Repeat([]int64{t0}, 100), true},
	}
	for _, tt := range tests {
		var sh shard[expiresAt]
		sh.cur = newGeneration[expiresAt]()
		for i, x := range tt.exps {
			sh.cur.add(strconv.Itoa(i), expiresAt{x})
		}
		if got := sh.due(t0); got != tt.want {
			t.Errorf("%s: due = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// smallParams are parameters under which a few requests reach the limit.
var smallParams = map[string]map[string]int64{
	"fixed_window":   {"limit": 3, "window_ms": 1000},
	"token_bucket":   {"capacity": 3, "refill_tokens": 1, "refill_ms": 1000},
	"gcra":           {"burst": 3, "rate": 1, "period_ms": 1000},
	"leaky_bucket":   {"capacity": 3, "rate": 1, "period_ms": 1000},
	"sliding_window": {"limit": 3, "window_ms": 1000},
	"sliding_log":    {"limit": 3, "window_ms": 1000},
	"bucket_window":  {"limit": 3, "window_ms": 1000, "bucket_ms": 100},
	"meta_window":    {"limit": 3, "window_ms": 1000},
}

// decide runs one request, with a meta for the limiters that take one,
// and the views of the limiters that have them; it returns all they gave
// and whether the request was admitted.
func decide(l Limiter, key string, nowMs, cost int64, meta string) (string, bool) {
	var r Result
	var err error
	if il, ok := l.(InputLimiter); ok {
		r, err = il.AllowInputs(key, nowMs, cost, meta)
	} else {
		r, err = l.Allow(key, nowMs, cost)
	}
	out := fmt.Sprintf("%+v %v", r, err)
	if v, ok := l.(Viewer); ok {
		recs, err := v.View("entries", key, nowMs)
		out += fmt.Sprintf(" %v %v", recs, err)
	}
	return out, r.Allowed
}

// both decides a request on subject and on reference, fails the test
// unless they agree, and returns whether it was admitted.
func both(t *testing.T, step int, subject, reference Limiter, key string, nowMs, cost int64, meta string) bool {
	t.Helper()
	a, ok := decide(subject, key, nowMs, cost, meta)
	if b, _ := decide(reference, key, nowMs, cost, meta); a != b {
		t.Fatalf("step %d (%s at %d, cost %d): %s, never reclaiming: %s", step, key, nowMs, cost, a, b)
	}
	return ok
}

// TestSweepingKeepsDecisions: a limiter whose keys are reclaimed by calls
// and by sweeper rounds, with passes started at random, decides exactly
// as one that never reclaims a key, and holds every key live at the
// caller's time; and it does reclaim.
func TestSweepingKeepsDecisions(t *testing.T) {
	for _, name := range Algorithms() {
		t.Run(name, func(t *testing.T) {
			subject, err1 := New(name, smallParams[name])
			reference, err2 := New(name, smallParams[name])
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			ss, rs := storeOf(t, subject), storeOf(t, reference)
			ss.stopSweeper() // rounds run by hand
			rs.stopSweeper()
			rs.setSweepAt(math.MaxInt)
			var clock manualClock // follows the caller's time
			ss.setSweeper(clock.read, time.Hour)
			rng := rand.New(rand.NewPCG(7, uint64(len(name))))
			now := int64(t0)
			admitted := 0
			const steps = 20000
			for i := range steps {
				switch r := rng.IntN(100); {
				case r < 2:
					now += 30000 + rng.Int64N(60000)
				case r < 4:
					ss.beginAll()
				case r < 6:
					ss.sweepOnce()
					if got, want := ss.liveKeys(now), rs.liveKeys(now); !slices.Equal(got, want) {
						t.Fatalf("step %d: live keys %v, want %v", i, got, want)
					}
				default:
					now += rng.Int64N(10)
				}
				clock.set(time.Duration(now-t0) * time.Millisecond)
				key, cost, meta := "k"+strconv.Itoa(rng.IntN(40)), rng.Int64N(3), "m"+strconv.Itoa(i)
				if both(t, i, subject, reference, key, now, cost, meta) {
					admitted++
				}
				// Many more keys, seldom used, so that passes take a while.
				both(t, i, subject, reference, "c"+strconv.Itoa(rng.IntN(3000)), now, 1, meta)
			}
			if admitted < steps/10 || admitted > steps*9/10 {
				t.Errorf("%d of %d requests admitted: too few denials or admissions to compare", admitted, steps)
			}
			if ss.len() >= rs.len() {
				t.Errorf("holds %d keys, as many as the %d of a limiter that never reclaims", ss.len(), rs.len())
			}
		})
	}
}

// TestEveryLimiterStopsItsSweeper: every limiter New makes has a
// StopSweeper, which ends its sweeper, before or after its first key.
func TestEveryLimiterStopsItsSweeper(t *testing.T) {
	for _, name := range Algorithms() {
		for _, first := range []bool{false, true} {
			l := mustNew(t, name)
			stopper, ok := l.(SweepStopper)
			if !ok {
				t.Fatalf("%s: %T has no StopSweeper", name, l)
			}
			if first {
				if _, err := l.Allow("k", t0, 1); err != nil {
					t.Fatal(err)
				}
			}
			stopper.StopSweeper()
			stopper.StopSweeper() // a second stop is harmless
			if _, err := l.Allow("k2", t0, 1); err != nil {
				t.Fatal(err)
			}
			select {
			case <-storeOf(t, l).sweeperOf().done:
			default:
				t.Errorf("%s (key first: %v): the sweeper runs after StopSweeper", name, first)
			}
		}
	}
}

// TestSweeperEndsWithItsLimiter: once nothing refers to a limiter, its
// sweeper ends.
func TestSweeperEndsWithItsLimiter(t *testing.T) {
	w := func() *sweeper {
		l, err := NewGCRA(GCRAParams{Burst: 1, Rate: 1, PeriodMs: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Allow("k", t0, 1); err != nil {
			t.Fatal(err)
		}
		return l.states.sw
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		runtime.GC()
		select {
		case <-w.done:
			return
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the sweeper of a collected limiter still runs")
		}
	}
}

// TestIdleMemoryReturns: once an idle limiter's keys have expired by the
// sweeper's reckoning, the sweeper drops them all and the heap they took
// is free again.
func TestIdleMemoryReturns(t *testing.T) {
	l, err := NewGCRA(GCRAParams{Burst: 1, Rate: 1, PeriodMs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var clock manualClock // stands still while the keys are written
	l.states.setSweeper(clock.read, time.Millisecond)
	const n = 100000
	base := heapAlloc()
	for i := range n {
		if _, err := l.Allow("user:"+strconv.Itoa(i), t0, 1); err != nil {
			t.Fatal(err)
		}
	}
	filled := heapAlloc()
	// Then an hour passes at each look: the keys live a minute.
	deadline := time.Now().Add(20 * time.Second)
	for hours := time.Duration(1); l.states.len() > 0; hours++ {
		if time.Now().After(deadline) {
			t.Fatalf("the sweeper left %d of %d expired keys", l.states.len(), n)
		}
		clock.set(hours * time.Hour)
		time.Sleep(time.Millisecond)
	}
	idle := heapAlloc()
	if grew, kept := int64(filled)-int64(base), int64(idle)-int64(base); kept > grew/10 {
		t.Errorf("an idle limiter keeps %d of the %d heap bytes its %d keys took", kept, grew, n)
	}
	l.StopSweeper()
	runtime.KeepAlive(l)
}

// TestConcurrentSweeping: goroutines deciding for their own keys while
// the sweeper and the calls reclaim expired ones get exactly the limit
// admitted in every window (run with -race). They move from window to
// window together, as callers sharing a clock do.
func TestConcurrentSweeping(t *testing.T) {
	const limit, goroutines, keys, windows = 5, 4, 300, 10
	l, err := NewFixedWindow(FixedWindowParams{Limit: limit, WindowMs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	l.states.setSweeper(l.states.sw.clock, time.Millisecond)
	errs := make(chan string, goroutines*windows)
	for w := range int64(windows) {
		now := t0 + w*120000 // the last window's keys have expired
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for k := range keys {
					key := fmt.Sprintf("w%d/g%d/k%d", w, g, k)
					for i := range limit + 1 {
						r, err := l.Allow(key, now, 1)
						if err != nil || r.Allowed != (i < limit) {
							errs <- fmt.Sprintf("%s window %d request %d: %+v %v", key, w, i, r, err)
							return
						}
					}
				}
			})
		}
		wg.Wait()
	}
	l.StopSweeper()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
