package lease_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/lease"
)

// primary is a memory limiter that counts the calls it gets, records
// their costs, fails while down is set, and holds each call until gate
// is closed when gate is not nil.
type primary struct {
	lim   *goimpl.Limiter
	down  atomic.Bool
	gate  chan struct{}
	calls atomic.Int64
	mu    sync.Mutex
	costs []int64
}

func newPrimary(t *testing.T) *primary {
	t.Helper()
	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lim.Close() })
	return &primary{lim: lim}
}

func (p *primary) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	p.calls.Add(1)
	p.mu.Lock()
	p.costs = append(p.costs, req.Cost)
	p.mu.Unlock()
	if p.gate != nil {
		<-p.gate
	}
	if p.down.Load() {
		return limitspec.Result{}, fmt.Errorf("primary down: %w", limitspec.ErrUnavailable)
	}
	return p.lim.Limit(ctx, req)
}

func (p *primary) Reset(ctx context.Context, req limitspec.Request) error {
	return p.lim.Reset(ctx, req)
}

func newLease(t *testing.T, p limitspec.Limiter, opts lease.Options) *lease.Limiter {
	t.Helper()
	l, err := lease.New(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// base is a time at the start of a minute: a fixed window of a minute
// opened by a request at base ends a minute later.
var base = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }

// TestFixedWindow works a fixed window of 10 per minute with leases of
// 3, one process, by hand: leases at the 1st, 4th and 7th request (9
// used), the 10th finds 1 left, is denied a lease and is decided alone
// (10 used), the 11th and 12th too (denied). Each Remaining is what the
// contract says of ten requests of one on a fixed window of 10: 10 − i.
func TestFixedWindow(t *testing.T) {
	p := newPrimary(t)
	l := newLease(t, p, lease.Options{Size: 3, For: time.Hour})
	limit := limitspec.FixedWindow{Limit: 10, Window: time.Minute}
	for i := 1; i <= 12; i++ {
		res, err := l.Limit(t.Context(), limitspec.Request{Key: "k", Limit: limit, Cost: 1, Now: at(i)})
		if err != nil {
			t.Fatal(err)
		}
		want := i <= 10
		if res.Allowed != want {
			t.Fatalf("request %d: allowed %v, want %v", i, res.Allowed, want)
		}
		if rem := res.Limits[0].Remaining; want && rem != int64(10-i) {
			t.Errorf("request %d: remaining %d, want %d", i, rem, 10-i)
		}
		if ra := res.Limits[0].ResetAfter; ra != time.Minute-time.Duration(i)*time.Millisecond {
			t.Errorf("request %d: reset after %v, want the window's end", i, ra)
		}
	}
	want := lease.Stats{Leases: 3, Denied: 1, Leased: 9, Spent: 9, Direct: 3}
	if got := l.Stats(); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
	if got := p.calls.Load(); got != 7 {
		t.Errorf("%d calls of the primary for 12 requests, want 7 (3 leases, 1 denied, 3 alone)", got)
	}
}

// TestWindowEnd: a lease taken 2 ms before a fixed window ends is not
// spent in the next window, where the primary no longer counts it: the
// next window's first request takes a new lease, and the lease's 2
// units left lapse.
func TestWindowEnd(t *testing.T) {
	p := newPrimary(t)
	l := newLease(t, p, lease.Options{Size: 3, For: time.Hour})
	limit := limitspec.FixedWindow{Limit: 10, Window: time.Minute}
	for _, ms := range []int{59_998, 60_000} {
		if res, err := l.Limit(t.Context(), limitspec.Request{Key: "k", Limit: limit, Cost: 1, Now: at(ms)}); err != nil || !res.Allowed {
			t.Fatalf("at %d ms: %+v, %v", ms, res, err)
		}
	}
	want := lease.Stats{Leases: 2, Leased: 6, Spent: 2, Lapsed: 2}
	if got := l.Stats(); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
}

// TestDirect: the requests a lease cannot stand for reach the primary as
// they are. A shaper's (a leaky bucket's) requests are among them: each
// waits for the work queued before it, which a lease of several units
// queued at once would misstate.
func TestDirect(t *testing.T) {
	limit := limitspec.FixedWindow{Limit: 100, Window: time.Minute}
	queue := limitspec.LeakyBucket{Capacity: 10, Rate: 1, Period: 100 * time.Millisecond}
	shaping, err := limitspec.NewPolicy("shaping",
		limitspec.PolicyLimit{Name: "per_minute", Limit: limit, Identity: "user"},
		limitspec.PolicyLimit{Name: "queue", Limit: queue, Identity: "user"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  limitspec.Request
	}{
		{"a cost above Size", limitspec.Request{Cost: 6}},
		{"a peek", limitspec.Request{Peek: true}},
		{"a forced request", limitspec.Request{Cost: 1, Force: true}},
		{"a request with inputs", limitspec.Request{Cost: 1, Inputs: map[string]string{"meta": "x"}}},
		{"a shaper", limitspec.Request{Cost: 1, Limit: queue}},
		{"a policy with a shaper", limitspec.Request{Cost: 1, Policy: shaping, IDs: map[string]string{"user": "u"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPrimary(t)
			l := newLease(t, p, lease.Options{Size: 5})
			req := tt.req
			req.Key, req.Now = "k", at(0)
			if req.Limit == nil && req.Policy == nil {
				req.Limit = limit
			}
			for range 2 {
				if _, err := l.Limit(t.Context(), req); err != nil {
					t.Fatal(err)
				}
			}
			if want := []int64{req.Cost, req.Cost}; fmt.Sprint(p.costs) != fmt.Sprint(want) {
				t.Errorf("the primary got costs %v, want %v", p.costs, want)
			}
			if st := l.Stats(); st.Direct != 2 || st.Leases != 0 {
				t.Errorf("stats %+v, want 2 direct, no lease", st)
			}
		})
	}
}

// TestOutage: 25 requests on leases of 10 (30 charged on the primary),
// then the primary fails. The 5 units held are spent without it; the
// next request asks for a lease and gets the primary's error. Behind a
// lease that has ended (For has passed), nothing more is admitted: 30
// charged, 30 admitted at most, and the units left lapse.
func TestOutage(t *testing.T) {
	for _, tt := range []struct {
		name             string
		afterMS          int
		admitted, lapsed int
	}{
		{"within For", 100, 5, 0},
		{"after For", 1_001, 0, 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newPrimary(t)
			l := newLease(t, p, lease.Options{Size: 10, For: time.Second})
			req := limitspec.Request{Key: "k", Limit: limitspec.FixedWindow{Limit: 100, Window: time.Minute}, Cost: 1, Now: at(0)}
			for i := range 25 {
				if res, err := l.Limit(t.Context(), req); err != nil || !res.Allowed {
					t.Fatalf("request %d: %+v, %v", i, res, err)
				}
			}
			p.down.Store(true)
			req.Now = at(tt.afterMS)
			admitted := 0
			for range 10 {
				res, err := l.Limit(t.Context(), req)
				if err != nil {
					if !errors.Is(err, limitspec.ErrUnavailable) {
						t.Fatalf("error %v, want the primary's", err)
					}
					continue
				}
				if res.Allowed {
					admitted++
				}
			}
			if admitted != tt.admitted {
				t.Errorf("admitted %d while the primary was down, want %d", admitted, tt.admitted)
			}
			if st := l.Stats(); st.Lapsed != uint64(tt.lapsed) || st.Leased != 30 {
				t.Errorf("stats %+v, want 30 leased, %d lapsed", st, tt.lapsed)
			}
		})
	}
}

// TestWaitForLease: requests of a key arriving while its lease is being
// taken wait for it and are decided from it: one call of the primary for
// four requests. When the lease fails instead, each waiting request
// tries the primary on its own.
func TestWaitForLease(t *testing.T) {
	for _, down := range []bool{false, true} {
		t.Run(fmt.Sprintf("down=%v", down), func(t *testing.T) {
			p := newPrimary(t)
			p.gate = make(chan struct{})
			p.down.Store(down)
			l := newLease(t, p, lease.Options{Size: 4})
			// At the start of a minute: a lease of the fixed window lasts
			// For, not until the wall clock's minute ends (a test run in
			// the last ms of one took a second lease for a latecomer).
			req := limitspec.Request{Key: "k", Limit: limitspec.FixedWindow{Limit: 100, Window: time.Minute}, Cost: 1, Now: base}
			var wg sync.WaitGroup
			var admitted, failed atomic.Int64
			for range 4 {
				wg.Go(func() {
					res, err := l.Limit(t.Context(), req)
					if err != nil {
						failed.Add(1)
					} else if res.Allowed {
						admitted.Add(1)
					}
				})
			}
			for p.calls.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond) // the three others reach the wait
			close(p.gate)
			wg.Wait()
			if down {
				if failed.Load() != 4 || p.calls.Load() != 4 {
					t.Errorf("%d failed, %d calls; want 4 and 4 (each request tried the primary)", failed.Load(), p.calls.Load())
				}
				return
			}
			if admitted.Load() != 4 || p.calls.Load() != 1 {
				t.Errorf("%d admitted, %d calls; want 4 and 1", admitted.Load(), p.calls.Load())
			}
		})
	}
}

// TestReset drops the key's lease: after it, the key starts from a whole
// limit.
func TestReset(t *testing.T) {
	p := newPrimary(t)
	l := newLease(t, p, lease.Options{Size: 5})
	req := limitspec.Request{Key: "k", Limit: limitspec.FixedWindow{Limit: 10, Window: time.Minute}, Cost: 1, Now: at(0)}
	if _, err := l.Limit(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if err := l.Reset(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	res, err := l.Limit(t.Context(), req)
	if err != nil || res.Limits[0].Remaining != 9 {
		t.Fatalf("after a reset: %+v, %v; want remaining 9", res, err)
	}
	if st := l.Stats(); st.Lapsed != 4 || st.Leases != 2 {
		t.Errorf("stats %+v, want 2 leases, 4 lapsed", st)
	}
}

// TestNewRefuses what cannot work.
func TestNewRefuses(t *testing.T) {
	p := newPrimary(t)
	var typedNil *goimpl.Limiter
	tests := []struct {
		name    string
		primary limitspec.Limiter
		opts    lease.Options
		want    string
	}{
		{"a nil primary", nil, lease.Options{Size: 1}, "the primary limiter is nil"},
		{"a typed nil primary", typedNil, lease.Options{Size: 1}, "the primary limiter is nil"},
		{"no Size", p, lease.Options{}, "Options.Size must be in [1, 2^53−1], got 0"},
		{"a Size past 2^53", p, lease.Options{Size: 1 << 53}, "Options.Size must be in [1, 2^53−1], got 9007199254740992"},
		{"a negative For", p, lease.Options{Size: 1, For: -time.Second}, "Options.For must be ≥ 0, got -1s"},
		{"negative Keys", p, lease.Options{Size: 1, Keys: -1}, "Options.Keys must be ≥ 0, got -1"},
	}
	for _, tt := range tests {
		_, err := lease.New(tt.primary, tt.opts)
		if want := "lease: misconfigured: " + tt.want; !errors.Is(err, limitspec.ErrMisconfigured) || err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q, matching ErrMisconfigured", tt.name, err, want)
		}
	}
}
