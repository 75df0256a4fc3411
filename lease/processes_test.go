package lease_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/lease"
)

// charging wraps a primary and sums the cost it admitted (or forced):
// what it counts, as the test sees it, not as package lease says.
type charging struct {
	limitspec.Limiter
	charged atomic.Int64
}

func (c *charging) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	res, err := c.Limiter.Limit(ctx, req)
	if err == nil && (res.Allowed || req.Force) {
		c.charged.Add(req.Cost)
	}
	return res, err
}

// held is the cost l holds in leases now.
func held(l *lease.Limiter) int64 {
	st := l.Stats()
	return int64(st.Leased - st.Spent - st.Lapsed)
}

// TestProcessesFixedWindow: three processes, each with leases of 4, on
// one fixed window of 20 per second, with requests at random times (0
// to 69 ms apart, about 30 per window). Each window admits at most 20 (a
// lease is spent in the window that counted it), every window but the
// last is used up on the primary (near the limit, requests go to it one
// by one), and what was admitted is exactly what the primary counted
// less what the leases let lapse or still hold.
func TestProcessesFixedWindow(t *testing.T) {
	const L, n = 20, 3
	p := &charging{Limiter: newPrimary(t)}
	var procs [n]*lease.Limiter
	for i := range procs {
		procs[i] = newLease(t, p, lease.Options{Size: 4, For: time.Hour})
	}
	limit := limitspec.FixedWindow{Limit: L, Window: time.Second}
	rng := rand.New(rand.NewPCG(1, 2))
	admitted := map[int64]int64{} // by window number
	var total int64
	now := base
	for range 2000 {
		now = now.Add(time.Duration(rng.IntN(70)) * time.Millisecond)
		res, err := procs[rng.IntN(n)].Limit(t.Context(), limitspec.Request{Key: "k", Limit: limit, Cost: 1, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if res.Allowed {
			admitted[now.Sub(base).Milliseconds()/1000]++
			total++
		}
	}
	last := now.Sub(base).Milliseconds() / 1000
	for w := int64(0); w <= last; w++ {
		if admitted[w] > L {
			t.Errorf("window %d admitted %d, above %d", w, admitted[w], L)
		}
	}
	var lapsed, holding int64
	for _, l := range procs {
		lapsed += int64(l.Stats().Lapsed)
		holding += held(l)
	}
	if got := p.charged.Load(); total != got-lapsed-holding {
		t.Errorf("admitted %d; the primary counted %d, %d lapsed, %d held: want %d", total, got, lapsed, holding, got-lapsed-holding)
	}
	if got, min := p.charged.Load(), L*last; got < min {
		t.Errorf("the primary counted %d in %d windows; want at least %d (each used up)", got, last+1, min)
	}
	t.Logf("%d windows: %d admitted, %d lapsed, %d held", last+1, total, lapsed, holding)
}

// TestProcessesSlidingLog: the same on a sliding log of 20 per second,
// leases of 4 spent within 300 ms: over every window of a second, the
// processes admit at most 20 + 3·4, the bound of the package
// documentation.
func TestProcessesSlidingLog(t *testing.T) {
	const L, n, size = 20, 3, 4
	p := newPrimary(t)
	var procs [n]*lease.Limiter
	for i := range procs {
		procs[i] = newLease(t, p, lease.Options{Size: size, For: 300 * time.Millisecond})
	}
	limit := limitspec.SlidingLog{Limit: L, Window: time.Second}
	rng := rand.New(rand.NewPCG(3, 4))
	var times []time.Time
	now := base
	for range 2000 {
		now = now.Add(time.Duration(rng.IntN(30)) * time.Millisecond)
		res, err := procs[rng.IntN(n)].Limit(t.Context(), limitspec.Request{Key: "k", Limit: limit, Cost: 1, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if res.Allowed {
			times = append(times, now)
		}
	}
	worst := 0
	for i, start := range times {
		in := 0
		for _, at := range times[i:] {
			if at.Sub(start) >= time.Second {
				break
			}
			in++
		}
		worst = max(worst, in)
	}
	if worst > L+n*size {
		t.Errorf("a window of a second admitted %d, above %d + %d·%d", worst, L, n, size)
	}
	t.Logf("most admitted in a second: %d (limit %d, bound %d)", worst, L, L+n*size)
}

// TestConcurrent: 64 goroutines of three processes on one key, on the
// clock: the primary's count less what lapsed or is held is what was
// admitted, and the limit, 1000, is used up.
func TestConcurrent(t *testing.T) {
	const L = 1000
	p := &charging{Limiter: newPrimary(t)}
	var procs [3]*lease.Limiter
	for i := range procs {
		procs[i] = newLease(t, p, lease.Options{Size: 7})
	}
	limit := limitspec.FixedWindow{Limit: L, Window: 1000 * time.Hour}
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			for range 50 {
				res, err := procs[g%3].Limit(t.Context(), limitspec.Request{Key: "k", Limit: limit, Cost: 1})
				if err != nil {
					t.Error(err)
					return
				}
				if res.Allowed {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	var lapsed, holding int64
	for _, l := range procs {
		lapsed += int64(l.Stats().Lapsed)
		holding += held(l)
	}
	if got := p.charged.Load(); got != L || admitted.Load() != got-lapsed-holding {
		t.Errorf("admitted %d; the primary counted %d (want %d), %d lapsed, %d held", admitted.Load(), got, L, lapsed, holding)
	}
}
