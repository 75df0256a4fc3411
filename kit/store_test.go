package kit

import (
	"fmt"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

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
			s.StopSweeper() // rounds run by hand
			var clock manualClock
			s.setSweeper(clock.read, time.Hour)
			exp := func(i int) int64 { return t0 + int64(i)*100 }
			all := fill(s, 2000, t0, exp)
			for _, now := range tt.calls {
				s.touchAll(now)
			}
			clock.set(tt.seen)
			s.sweepOnce()
			s.beginAll()
			clock.set(tt.at)
			s.sweepOnce()
			var want []string
			for i, k := range all {
				if exp(i) > tt.want {
					want = append(want, k)
				}
			}
			slices.Sort(want)
			if got := s.liveKeys(math.MinInt64); !slices.Equal(got, want) {
				t.Errorf("holds %d keys, want the %d expiring after %d", len(got), len(want), tt.want)
			}
			if n := s.passes(); n != 0 {
				t.Errorf("%d passes left under way after a round", n)
			}
		})
	}
}

// TestSweeperBeforeAnyCall: a shard no call has reached has no time, so
// the sweeper starts no pass in it, however far its clock has run.
func TestSweeperBeforeAnyCall(t *testing.T) {
	s := newStore[expiresAt]()
	s.StopSweeper()
	var clock manualClock
	s.setSweeper(clock.read, time.Hour)
	// Entries added without a call (as a pass copies them): no shard has
	// seen a time.
	for i := range 1000 {
		k := key(strconv.Itoa(i))
		h := s.Hash(k)
		sh := s.Shard(s.Index(h))
		sh.Lock()
		sh.Put(k, h, nil, expiresAt{1})
		sh.Unlock()
	}
	clock.set(1000 * time.Hour)
	s.sweepOnce()
	if got := s.Len(); got != 1000 {
		t.Errorf("holds %d keys after a round before any call, want all 1000", got)
	}
}

// TestLookupsDuringPasses: while passes move a shard's keys a few at a
// time from its old generation to its new one, every live key is found,
// with its state; an expired key found there has its own.
func TestLookupsDuringPasses(t *testing.T) {
	s := newStore[expiresAt]()
	s.StopSweeper()
	// About 60 keys a shard, so that a pass takes several calls; a third
	// expire at t0-1, a third at t0, a third at t0+1: live when read at t0.
	const n = 4000
	exp := func(i int) int64 { return t0 + int64(i%3) - 1 }
	keys := fill(s, n, t0-1000, exp)
	s.beginAll()
	for i, k := range keys {
		st, ok := s.get(key(k), t0)
		if !ok && exp(i) > t0 || ok && st.exp != exp(i) {
			t.Fatalf("key %s, expiring at %d, read at %d: found %v, state %v", k, exp(i), t0, ok, st)
		}
	}
	if got, live := s.Len(), len(s.liveKeys(t0)); live != n/3 || got > n {
		t.Errorf("holds %d keys, %d of them live; want the %d live ones and at most all %d", got, live, n/3, n)
	}
}

// TestCallsFinishPassesOnceStopped: a pass the sweeper began, left half
// done when it stopped, is finished by calls, which drop what expired.
func TestCallsFinishPassesOnceStopped(t *testing.T) {
	s := newStore[expiresAt]()
	const n = 4000
	keys := fill(s, n, t0, func(int) int64 { return t0 + 1 })
	s.beginAll() // as the sweeper would, calls not helping
	s.StopSweeper()
	for _, k := range keys {
		if st, ok := s.get(key(k), t0+1); ok {
			t.Fatalf("key %s expired at %d, read at %d: state %v", k, t0+1, t0+1, st)
		}
	}
	if got := s.Len(); got != 0 {
		t.Errorf("holds %d expired keys, want none", got)
	}
	if n := s.passes(); n != 0 {
		t.Errorf("%d passes left under way", n)
	}
}

// TestCallsStartPasses: with the sweeper stopped, a shard that has
// reached its size for a pass starts one at a call, and calls alone,
// callBatch entries each, reclaim the keys that expired; below 1024 keys a
// shard, no call starts one.
func TestCallsStartPasses(t *testing.T) {
	s := newStore[expiresAt]()
	s.StopSweeper()
	const n = 10 * Shards
	fill(s, n, t0, func(int) int64 { return t0 + 1 })
	s.touchAll(t0 + 2)
	if got := s.Len(); got != n {
		t.Fatalf("holds %d keys, want all %d: calls started a pass below %d keys a shard", got, n, minSweep)
	}
	s.setSweepAt(1) // every shard holding a key has reached it
	for range n/callBatch + 1 {
		s.touchAll(t0 + 2)
	}
	if got := s.Len(); got != 0 {
		t.Errorf("holds %d expired keys after the calls' passes, want none", got)
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
		{"many keys, none expired", slices.Repeat([]int64{t0 + 1}, 1000), false},
		// 2% expired: a sample of 32 holds 8 of them once in millions.
		{"a few expired", append(slices.Repeat([]int64{t0}, 20), slices.Repeat([]int64{t0 + 1}, 980)...), false},
		{"most expired", append(slices.Repeat([]int64{t0}, 980), slices.Repeat([]int64{t0 + 1}, 20)...), true},
	}
	for _, tt := range tests {
		var sh Shard[[0]int64, expiresAt]
		sh.cur = newGeneration[[0]int64, expiresAt]()
		for i, x := range tt.exps {
			sh.cur.add(key(strconv.Itoa(i)), uint64(i), expiresAt{x})
		}
		for range 20 { // a fresh sample each time
			if got := sh.due(t0); got != tt.want {
				t.Errorf("%s: due = %v, want %v", tt.name, got, tt.want)
				break
			}
		}
	}
}

// TestResetForgets: a reset key reads as absent (the zero state expires
// at 0) and is reclaimed as expired by the next pass; other keys keep
// their state.
func TestResetForgets(t *testing.T) {
	s := newStore[expiresAt]()
	s.StopSweeper()
	s.put(key("a"), t0, expiresAt{t0 + 100})
	s.put(key("b"), t0, expiresAt{t0 + 100})
	s.Reset(key("a"))
	s.Reset(key("never-seen")) // harmless
	if st, _ := s.get(key("a"), t0); st.Expires() > t0 {
		t.Errorf("a reset key reads as %v, live at %d", st, t0)
	}
	if st, ok := s.get(key("b"), t0); !ok || st.exp != t0+100 {
		t.Errorf("the other key reads as %v, %v; want its state", st, ok)
	}
	s.beginAll()
	s.touchAll(t0) // the calls of a stopped sweeper finish its passes
	if got := s.liveKeys(math.MinInt64); !slices.Equal(got, []string{"b"}) {
		t.Errorf("after a pass the store holds %v, want [b]", got)
	}
}

// TestSweepingKeepsLiveKeys: a store whose keys are reclaimed by calls
// and by sweeper rounds, with passes started at random, finds every key
// with the state last put while it is live, and holds exactly the keys
// live at the caller's time after each round; a map that never forgets
// is the reference. It does reclaim. It does so too when keys share
// hashes: a hash of 97 values.
func TestSweepingKeepsLiveKeys(t *testing.T) {
	poor := func(seed maphash.Seed, k name) uint64 { return nameHash(seed, k) % 97 }
	for _, hash := range []func(maphash.Seed, name) uint64{nameHash, poor} {
		sweepKeepsLiveKeys(t, NewStore[[0]int64, expiresAt](hash))
	}
}

// sweepKeepsLiveKeys is TestSweepingKeepsLiveKeys on the empty store s.
func sweepKeepsLiveKeys(t *testing.T, s *Store[[0]int64, expiresAt]) {
	s.StopSweeper()       // rounds run by hand
	var clock manualClock // follows the caller's time
	s.setSweeper(clock.read, time.Hour)
	ref := map[string]int64{} // the expiry last put, by key
	rng := rand.New(rand.NewPCG(7, 11))
	now := int64(t0)
	for i := range 50000 {
		switch r := rng.IntN(100); {
		case r < 2:
			now += 30000 + rng.Int64N(60000)
		case r < 4:
			s.beginAll()
		case r < 6:
			s.sweepOnce()
			checkLive(t, i, s, ref, now)
		default:
			now += rng.Int64N(10)
		}
		clock.set(time.Duration(now-t0) * time.Millisecond)
		k := "k" + strconv.Itoa(rng.IntN(3000))
		st, ok := s.get(key(k), now)
		if want, held := ref[k]; want > now && (!ok || st.exp != want) || ok && (!held || st.exp != want) {
			t.Fatalf("step %d: %s at %d reads %v, %v; last put expiring at %d (held %v)", i, k, now, st, ok, want, held)
		}
		if rng.IntN(3) > 0 {
			exp := now + 1 + rng.Int64N(90000)
			s.put(key(k), now, expiresAt{exp})
			ref[k] = exp
		}
	}
	if s.Len() >= len(ref) {
		t.Errorf("holds %d keys, as many as the %d ever put", s.Len(), len(ref))
	}
}

// checkLive fails the test unless s holds live at nowMs exactly the keys
// ref says are.
func checkLive(t *testing.T, step int, s *Store[[0]int64, expiresAt], ref map[string]int64, nowMs int64) {
	t.Helper()
	var want []string
	for k, exp := range ref {
		if exp > nowMs {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	if got := s.liveKeys(nowMs); !slices.Equal(got, want) {
		t.Fatalf("step %d: %d live keys at %d, want %d", step, len(got), nowMs, len(want))
	}
}

// TestStopSweeper: StopSweeper ends the sweeper before or after the first
// key, a second stop is harmless, a nil store may be stopped, and keys
// added afterwards launch no sweeper.
func TestStopSweeper(t *testing.T) {
	for _, first := range []bool{false, true} {
		s := newStore[expiresAt]()
		if first {
			s.put(key("k"), t0, expiresAt{t0 + 1000})
			if s.sw.isDone() {
				t.Fatal("the sweeper ended before it was stopped")
			}
		}
		s.StopSweeper()
		s.StopSweeper()
		s.put(key("k2"), t0, expiresAt{t0 + 1000})
		if !s.sw.isDone() {
			t.Errorf("key first: %v: the sweeper runs after StopSweeper", first)
		}
		if !s.sw.stopped.Load() {
			t.Errorf("key first: %v: the sweeper is not marked stopped", first)
		}
	}
	var none *Store[[0]int64, expiresAt]
	none.StopSweeper()
}

// TestSweeperStartsWithTheFirstKey: a store launches its sweeper with its
// first key, not before.
func TestSweeperStartsWithTheFirstKey(t *testing.T) {
	s := newStore[expiresAt]()
	defer s.StopSweeper()
	if s.sw.started.Load() {
		t.Fatal("an empty store launched its sweeper")
	}
	s.put(key("k"), t0, expiresAt{t0 + 1})
	if !s.sw.started.Load() || s.sw.isDone() {
		t.Error("the first key did not launch the sweeper")
	}
}

// TestSweeperEndsWithItsStore: once nothing refers to a store, its
// sweeper ends: it holds the store by a weak pointer only, so the store
// is collected, and the store's cleanup ends it at once, not at its next
// round (an hour away here).
func TestSweeperEndsWithItsStore(t *testing.T) {
	w := func() *sweeper {
		s := newStore[expiresAt]()
		s.setSweeper(s.sw.clock, time.Hour)
		s.put(key("k"), t0, expiresAt{t0 + 1})
		return s.sw
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !w.isDone() {
		if time.Now().After(deadline) {
			t.Fatal("the sweeper of a collected store still runs")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIdleMemoryReturns: once an idle store's keys have expired by the
// sweeper's reckoning, the sweeper drops them all and the heap they took
// is free again.
func TestIdleMemoryReturns(t *testing.T) {
	s := newStore[expiresAt]()
	var clock manualClock // stands still while the keys are written
	s.setSweeper(clock.read, time.Millisecond)
	const n = 100000
	base := heapAlloc()
	fill(s, n, t0, func(int) int64 { return t0 + 60000 })
	filled := heapAlloc()
	// Then an hour passes at each look: the keys live a minute.
	deadline := time.Now().Add(20 * time.Second)
	for hours := time.Duration(1); s.Len() > 0; hours++ {
		if time.Now().After(deadline) {
			t.Fatalf("the sweeper left %d of %d expired keys", s.Len(), n)
		}
		clock.set(hours * time.Hour)
		time.Sleep(time.Millisecond)
	}
	idle := heapAlloc()
	if grew, kept := int64(filled)-int64(base), int64(idle)-int64(base); kept > grew/10 {
		t.Errorf("an idle store keeps %d of the %d heap bytes its %d keys took", kept, grew, n)
	}
	s.StopSweeper()
	runtime.KeepAlive(s)
}

// heapAlloc returns the bytes of live heap after a full collection.
func heapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// window is the state of a fixed window counter of TestConcurrentSweeping.
type window struct{ start, n, exp int64 }

// Expires is when the window's state expires (see Expirer).
func (w *window) Expires() int64 { return w.exp }

// admit decides one request for key at nowMs by a fixed window of limit
// per second, as generated code decides: the shard locked, its state read
// and, when admitted, written.
func admit(s *Store[[0]int64, window], k name, nowMs, limit int64) bool {
	h := s.Hash(k)
	sh := s.Shard(s.Index(h))
	sh.Lock()
	defer sh.Unlock()
	e := sh.Get(k, h, nowMs)
	var st window
	if e != nil && e.State.exp > nowMs {
		st = e.State
	}
	if start := nowMs - nowMs%1000; st.start != start {
		st = window{start: start}
	}
	if st.n >= limit {
		return false
	}
	st.n++
	st.exp = st.start + 1000 + 60000
	sh.Put(k, h, e, st)
	return true
}

// TestConcurrentSweeping: goroutines deciding for their own keys while a
// sweeper running every millisecond and the calls reclaim expired ones
// get exactly the limit admitted in every window (run with -race). They
// move from window to window together, as callers sharing a clock do.
func TestConcurrentSweeping(t *testing.T) {
	const limit, goroutines, keys, windows = 5, 4, 300, 10
	s := newStore[window]()
	s.setSweeper(s.sw.clock, time.Millisecond)
	defer s.StopSweeper()
	errs := make(chan string, goroutines*windows)
	for w := range int64(windows) {
		now := t0 + w*120000 // the last window's keys have expired
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for k := range keys {
					k := key(fmt.Sprintf("w%d/g%d/k%d", w, g, k))
					for i := range limit + 1 {
						if got := admit(s, k, now, limit); got != (i < limit) {
							errs <- fmt.Sprintf("%s window %d request %d: admitted %v", k.Name, w, i, got)
							return
						}
					}
				}
			})
		}
		wg.Wait()
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	// Every earlier window's keys have expired by the sweeper's estimate,
	// which runs from the last window's time. A shard holding a quarter or
	// more of expired keys is due, and its pass drops them all, so the
	// store comes down to at most about 4/3 of the last window's keys.
	live := goroutines * keys
	deadline := time.Now().Add(10 * time.Second)
	for s.Len() > 2*live && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := s.Len(); got > 2*live {
		t.Errorf("holds %d keys, want at most twice the last window's %d", got, live)
	}
}

// TestHashCollisions: keys of one hash, whether they differ in their
// name or in their parameters, each keep their own state, before, during
// and after a pass that moves them; a key is found by its name and
// parameters together, never by its hash alone.
func TestHashCollisions(t *testing.T) {
	type twoParams = Key[[2]int64]
	s := NewStore[[2]int64, expiresAt](func(_ maphash.Seed, k twoParams) uint64 {
		return uint64(len(k.Name)) // "a", "b", ... collide, and every set of parameters
	})
	s.StopSweeper()
	var keys []twoParams
	for _, n := range []string{"a", "b", "c", "dd", "ee"} {
		for p := range int64(3) {
			keys = append(keys, twoParams{Name: n, Params: [2]int64{p, 1000}}, twoParams{Name: n, Params: [2]int64{1000, p}})
		}
	}
	expOf := func(i int) int64 { return t0 + 1 + int64(i) }
	check := func(when string) {
		t.Helper()
		for i, k := range keys {
			if st, ok := s.get(k, t0); !ok || st.exp != expOf(i) {
				t.Fatalf("%s: %+v reads %v, %v; want its own expiry %d", when, k, st, ok, expOf(i))
			}
		}
		if st, ok := s.get(twoParams{Name: "a", Params: [2]int64{7, 7}}, t0); ok {
			t.Fatalf("%s: a key never put reads %v", when, st)
		}
	}
	for i, k := range keys {
		s.put(k, t0, expiresAt{expOf(i)})
	}
	check("before a pass")
	s.beginAll()
	check("during a pass")
	for i, k := range keys[:len(keys)/2] { // written while in the old generation
		s.put(k, t0, expiresAt{expOf(i)})
	}
	for range len(keys) {
		s.touchAll(t0) // with the sweeper stopped, each call moves a few entries
	}
	if n := s.passes(); n != 0 {
		t.Fatalf("%d passes left under way", n)
	}
	check("after a pass")
	s.Reset(keys[1])
	if st, _ := s.get(keys[1], t0); st.exp != 0 {
		t.Errorf("a reset key reads %v", st)
	}
	if st, _ := s.get(keys[0], t0); st.exp != expOf(0) {
		t.Errorf("the key of the same hash as a reset one reads %v, want expiry %d", st, expOf(0))
	}
}
