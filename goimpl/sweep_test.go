package goimpl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/kit"
)

// The sweeper of a limiter's tables runs on its own clock, every second;
// these tests let it run, and tell it the caller's time by calls in every
// shard (storeProbe.touch). Its rounds and passes by hand, on a clock the
// test sets, are tested in package kit.

// TestMemoryBounded: a limiter that gets new short-lived keys all the
// time keeps about those live within one TTL, whether calls alone reclaim
// the expired ones (Options.NoSweeper) or the sweeper helps.
func TestMemoryBounded(t *testing.T) {
	for _, opts := range []Options{{NoSweeper: true}, {}} {
		l := newLimiter(t, opts)
		fw := limitspec.FixedWindow{Limit: 10, Window: time.Second}
		// Each key lives at most window (1 s) + margin (60 s); 1000 new keys
		// a second for 5 minutes would be 300000 keys without reclaiming.
		const perSecond, seconds = 1000, 300
		for s := range int64(seconds) {
			for k := range perSecond {
				decide(t, l, limitspec.Request{Key: fmt.Sprint(s, "/", k), Limit: fw, Cost: 1, Now: at(t0 + s*1000)})
			}
		}
		live := 62 * perSecond // keys written within the last TTL
		store := probeOf(t, l, fw)
		if n := store.Len(); n > 3*live {
			t.Errorf("%+v: the store holds %d keys, want at most %d (about 2x the %d live ones)", opts, n, 3*live, live)
		}
		store.StopSweeper()
	}
}

// sweepCase is a limit of TestSweepingKeepsDecisions and its keys.
type sweepCase struct {
	alg      string
	lim      limitspec.Limit
	calls    []*kit.Call // the keys' calls, prepared: they name their states
	subject  storeProbe
	ref      storeProbe
	admitted int
	decided  int
}

// TestSweepingKeepsDecisions: a limiter whose sweeper reclaims expired
// keys while requests are decided (rounds every second, in passes
// interleaved with the calls) decides exactly as one that never reclaims
// a key (NoSweeper, with too few keys for calls to start a pass),
// on every algorithm, and holds every state that matters with the same
// expiry; and it does reclaim. The caller's time runs ahead of the
// process clock, never behind, so that the sweeper's reckoning of it
// (the latest call's time plus the time since) never passes it.
func TestSweepingKeepsDecisions(t *testing.T) {
	const hot = 20
	subject, reference := newLimiter(t, Options{}), newLimiter(t, Options{NoSweeper: true})
	cases := make([]*sweepCase, len(algorithms))
	for i, alg := range algorithms {
		c := &sweepCase{alg: alg, lim: limitOf(alg, smallParams[alg])}
		for k := range hot + 3000 { // hot keys used often, 3000 seldom
			c.calls = append(c.calls, stateCall(t, subject, c.lim, sweepKey(k)))
		}
		c.subject, c.ref = probeOf(t, subject, c.lim), probeOf(t, reference, c.lim)
		cases[i] = c
	}
	rng := rand.New(rand.NewPCG(7, 9))
	began, checked := time.Now(), time.Now()
	var ahead int64 // the caller's time is t0 + ahead + twice the ms elapsed
	for step := 0; step < 20000 || time.Since(began) < 2200*time.Millisecond; step++ {
		// Each hot key of a limit comes every 8 × hot steps, about 80 ms,
		// and a jump past every TTL once in a few hundred steps.
		if rng.IntN(1000) < 3 {
			ahead += 30000 + rng.Int64N(60000)
		} else {
			ahead += rng.Int64N(2)
		}
		now := t0 + ahead + 2*(time.Since(began).Milliseconds()+1)
		c := cases[rng.IntN(len(cases))]
		if time.Since(checked) > 100*time.Millisecond {
			for _, c := range cases {
				compareStates(t, step, c, now)
			}
			checked = time.Now()
		}
		if both(t, step, subject, reference, c, sweepKey(rng.IntN(hot)), now, rng.Int64N(3)) {
			c.admitted++
		}
		c.decided++
		// Many more keys, seldom used, so that passes take a while.
		both(t, step, subject, reference, c, sweepKey(hot+rng.IntN(3000)), now, 1)
	}
	for _, c := range cases {
		if c.admitted < c.decided/10 || c.admitted > c.decided*9/10 {
			t.Errorf("%s: %d of %d requests admitted: too few denials or admissions to compare", c.alg, c.admitted, c.decided)
		}
		s, r := c.subject.Len(), c.ref.Len()
		if s >= r {
			t.Errorf("%s: holds %d keys, as many as the %d of a limiter that never reclaims", c.alg, s, r)
		}
		t.Logf("%s: %d of %d admitted; %d keys held, %d never reclaiming", c.alg, c.admitted, c.decided, s, r)
		c.subject.StopSweeper()
	}
}

// sweepKey is the name of TestSweepingKeepsDecisions's key k.
func sweepKey(k int) string { return "k" + strconv.Itoa(k) }

// both decides a request of c's limit on subject and on reference, with a
// meta, and reads its entries back where the algorithm has a view; it
// fails the test unless the two agree, and returns whether it was
// admitted.
func both(t *testing.T, step int, subject, reference *Limiter, c *sweepCase, key string, nowMs, cost int64) bool {
	t.Helper()
	req := limitspec.Request{Key: key, Limit: c.lim, Cost: cost, Peek: cost == 0, Now: at(nowMs), Inputs: map[string]string{"meta": "m" + strconv.Itoa(step)}}
	run := func(l *Limiter) (string, bool) {
		res, err := l.Limit(context.Background(), req)
		out := fmt.Sprintf("%+v %v", res, err)
		if c.alg == "meta_window" {
			recs, err := l.View(context.Background(), "entries", req)
			out += fmt.Sprintf(" %v %v", recs, err)
		}
		return out, res.Allowed
	}
	a, ok := run(subject)
	if b, _ := run(reference); a != b {
		t.Fatalf("step %d (%s, %s at %d, cost %d): %s\n never reclaiming: %s", step, c.alg, key, nowMs, cost, a, b)
	}
	return ok
}

// compareStates fails the test unless the subject and the reference of c
// hold every state that lives past nowMs + 1 s with the same expiry. (The
// sweeper may drop a state expiring up to a few ms after nowMs, if it
// reckons the caller's time while the caller is held up.)
func compareStates(t *testing.T, step int, c *sweepCase, nowMs int64) {
	t.Helper()
	for _, k := range c.calls {
		s, r := c.subject.expires(k, nowMs), c.ref.expires(k, nowMs)
		if (s > nowMs+1000 || r > nowMs+1000) && s != r {
			t.Fatalf("step %d: %s: %s expires at %d, at %d in a limiter that never reclaims (now %d)", step, c.alg, k.Key, s, r, nowMs)
		}
	}
}

// sweepers returns the number of sweeper goroutines running.
func sweepers() int {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "created by github.com/limitspec/limitspec/kit.(*sweeper).start")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// waitSweepers collects garbage until want sweepers run, and fails the
// test if that takes more than 20 s.
func waitSweepers(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for n := sweepers(); n != want; n = sweepers() {
		if time.Now().After(deadline) {
			t.Fatalf("%d sweepers run, want %d", n, want)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSweepers: a limiter runs a sweeper per algorithm it has decided,
// launched with its first key; NoSweeper runs none; and a limiter's
// sweepers end once it has been collected. (It counts the sweepers of the
// whole process: those of the other tests' limiters end first.)
func TestSweepers(t *testing.T) {
	waitSweepers(t, 0)
	quiet := newLimiter(t, Options{NoSweeper: true})
	decideEach(t, quiet, t0)
	if n := sweepers(); n != 0 {
		t.Errorf("a limiter with NoSweeper runs %d sweepers", n)
	}
	loud, err := New(Options{}) // not closed: collected
	if err != nil {
		t.Fatal(err)
	}
	for _, alg := range algorithms { // tables without keys: no sweeper yet
		tableOf(t, loud, limitOf(alg, smallParams[alg]))
	}
	if n := sweepers(); n != 0 {
		t.Errorf("a limiter without keys runs %d sweepers", n)
	}
	decideEach(t, loud, t0)
	if n := sweepers(); n != len(algorithms) {
		t.Errorf("a limiter that decided %d algorithms runs %d sweepers", len(algorithms), n)
	}
	runtime.KeepAlive(loud)
	waitSweepers(t, 0) // loud has been collected
	runtime.KeepAlive(quiet)
}

// TestCloseStopsSweepers: Close ends the sweepers of a limiter that is
// still alive (held by the test's cleanup, so that no collection ends
// them); after it, the limiter decides as before, every algorithm's table
// made later included, and runs no sweeper; a second Close does nothing.
func TestCloseStopsSweepers(t *testing.T) {
	waitSweepers(t, 0)
	l := newLimiter(t, Options{})
	first := limitOf(algorithms[0], smallParams[algorithms[0]])
	before := decide(t, l, limitspec.Request{Key: "k", Limit: first, Cost: 1, Now: at(t0)})
	if n := sweepers(); n != 1 {
		t.Fatalf("a limiter that decided one algorithm runs %d sweepers, want 1", n)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitSweepers(t, 0)
	// The state survives Close: the same key's next request sees the first.
	after := decide(t, l, limitspec.Request{Key: "k", Limit: first, Cost: 1, Now: at(t0)})
	if after.Limits[0].Remaining != before.Limits[0].Remaining-1 {
		t.Errorf("after Close, remaining %d after %d, want %d", after.Limits[0].Remaining, before.Limits[0].Remaining, before.Limits[0].Remaining-1)
	}
	decideEach(t, l, t0+1000)
	if n := sweepers(); n != 0 {
		t.Errorf("a closed limiter that decided every algorithm runs %d sweepers, want 0", n)
	}
	if err := l.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	runtime.KeepAlive(l)
}

// decideEach decides a request of every algorithm for one key at now.
func decideEach(t *testing.T, l *Limiter, now int64) {
	t.Helper()
	for _, alg := range algorithms {
		decide(t, l, limitspec.Request{Key: "k", Limit: limitOf(alg, smallParams[alg]), Cost: 1, Now: at(now)})
	}
}

// TestIdleMemoryReturns: once an idle limiter's keys have expired by the
// sweeper's reckoning, the sweeper drops them all and the heap they took
// is free again.
func TestIdleMemoryReturns(t *testing.T) {
	base := heapAlloc()
	l := newLimiter(t, Options{})
	gcra := limitspec.GCRA{Burst: 1, Rate: 1, Period: time.Second}
	const n = 100000
	for i := range n {
		decide(t, l, limitspec.Request{Key: "user:" + strconv.Itoa(i), Limit: gcra, Cost: 1, Now: at(t0)})
	}
	filled := heapAlloc()
	// An hour later the keys, which live a minute, have all expired: a
	// call in every shard tells the sweeper so.
	store := probeOf(t, l, gcra)
	store.touch(t0 + 3600000)
	deadline := time.Now().Add(20 * time.Second)
	for store.Len() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the sweeper left %d of %d expired keys", store.Len(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	idle := heapAlloc()
	if grew, kept := int64(filled)-int64(base), int64(idle)-int64(base); kept > grew/10 {
		t.Errorf("an idle limiter keeps %d of the %d heap bytes its %d keys took", kept, grew, n)
	}
	store.StopSweeper()
	runtime.KeepAlive(l)
}

// heapAlloc returns the bytes of live heap after a full collection.
func heapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestConcurrentSweeping: goroutines deciding for their own keys while
// the sweeper and the calls reclaim expired ones get exactly the limit
// admitted in every window (run with -race). They move from window to
// window together, as callers sharing a clock do, for long enough that
// the sweeper's rounds run among them.
func TestConcurrentSweeping(t *testing.T) {
	const limit, goroutines, keys = 5, 4, 300
	l := newLimiter(t, Options{})
	fw := limitspec.FixedWindow{Limit: limit, Window: time.Second}
	errs := make(chan string, goroutines)
	began := time.Now()
	for w := int64(0); w < 3 || time.Since(began) < 1500*time.Millisecond; w++ {
		now := t0 + w*120000 // the last window's keys have expired
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for k := range keys {
					key := fmt.Sprintf("w%d/g%d/k%d", w, g, k)
					for i := range limit + 1 {
						res, err := l.Limit(context.Background(), limitspec.Request{Key: key, Limit: fw, Cost: 1, Now: at(now)})
						if err != nil || res.Allowed != (i < limit) {
							errs <- fmt.Sprintf("%s window %d request %d: %+v %v", key, w, i, res, err)
							return
						}
					}
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			break
		}
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	probeOf(t, l, fw).StopSweeper()
}

// TestDecisionAllocations: a decision on an existing key of an algorithm
// whose state is a few integers allocates as much in a store of 10000
// keys as in a store of one (nothing grows with the keys): nothing when
// decided into a Result used again (LimitInto), and by Limit only its
// result's Limits. The limit is held as a limitspec.Limit; no key name is
// built, and the call stays on the stack. BenchmarkExistingKey measures
// the same.
func TestDecisionAllocations(t *testing.T) {
	for _, alg := range []string{"fixed_window", "gcra", "leaky_bucket", "sliding_window", "token_bucket"} {
		lim := limitOf(alg, largeParams[alg])
		var into, limit [2]float64
		for i, keys := range []int{1, 10000} {
			l := newLimiter(t, Options{NoSweeper: true})
			for k := range keys {
				decide(t, l, limitspec.Request{Key: "user" + strconv.Itoa(k), Limit: lim, Cost: 1, Now: at(t0)})
			}
			req := limitspec.Request{Key: "user0", Limit: lim, Cost: 1, Now: at(t0)}
			now := int64(t0)
			var res limitspec.Result
			into[i] = testing.AllocsPerRun(1000, func() {
				now++
				req.Now = at(now)
				if err := l.LimitInto(context.Background(), req, &res); err != nil {
					t.Fatal(err)
				}
			})
			limit[i] = testing.AllocsPerRun(1000, func() {
				now++
				req.Now = at(now)
				if _, err := l.Limit(context.Background(), req); err != nil {
					t.Fatal(err)
				}
			})
		}
		if into != [2]float64{0, 0} {
			t.Errorf("%s: LimitInto: %.1f allocations per decision among 1 key, %.1f among 10000; want none", alg, into[0], into[1])
		}
		if limit != [2]float64{1, 1} {
			t.Errorf("%s: Limit: %.1f allocations per decision among 1 key, %.1f among 10000; want 1 (the result's Limits)", alg, limit[0], limit[1])
		}
	}
}
