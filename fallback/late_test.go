package fallback

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
)

// lagging is a primary whose every call fails for want of a reply in
// time, and returns lag after it started, on the test's clock: the
// whole Timeout for a primary that is slow, more for a process that ran
// late (a busy host).
type lagging struct {
	c   *clock
	lag time.Duration
}

func (p lagging) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	p.c.advance(p.lag)
	return limitspec.Result{}, fmt.Errorf("%w: %w: i/o timeout", limitspec.ErrUnavailable, limitspec.ErrOutcomeUnknown)
}

// TestBusyHostIsNoOutage: a call that fails for want of a reply, seen
// more than half the Timeout after its deadline, is this process's
// lateness (a busy host), not the primary's: the breaker does not count
// it, but for Failures of them in a row, so that a primary that never
// answers a busy host still opens it, after twice the failures. A
// failure seen at its deadline counts at once.
func TestBusyHostIsNoOutage(t *testing.T) {
	const timeout = 50 * time.Millisecond
	for _, tc := range []struct {
		name      string
		lag       time.Duration
		opensAt   int // the call after which the breaker opens
		lateCalls int // the calls counted late
	}{
		{"a slow primary, seen at the deadline", timeout, DefaultFailures, 0},
		{"seen a little late", timeout + timeout/2, DefaultFailures, 0},
		{"seen late: a busy host", 3 * timeout, 2 * DefaultFailures, DefaultFailures},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			l := mustNew(t, lagging{c: c, lag: tc.lag}, local(t), Options{Timeout: timeout, OpenFor: time.Hour}, c)
			for i := 1; i <= tc.opensAt; i++ {
				res := limit(t, l, req(gcra(10), "k", 1))
				if res.Side != limitspec.Fallback {
					t.Fatalf("call %d: %+v; want decided locally", i, res)
				}
				if st := l.Stats(); (st.State == Open) != (i == tc.opensAt) {
					t.Fatalf("call %d: breaker %v, %d opens; want it open after call %d", i, st.State, st.Opens, tc.opensAt)
				}
			}
			if st := l.Stats(); st.PrimaryLate != uint64(tc.lateCalls) || st.PrimarySlow != uint64(tc.opensAt) || st.Opens != 1 {
				t.Errorf("%+v; want %d late of %d slow, 1 open", st, tc.lateCalls, tc.opensAt)
			}
		})
	}
}

// stalled is a primary whose every call fails for want of a reply in
// time: the calls started before release is closed wait until then
// (entered counts them), those after it take lag on the test's clock.
type stalled struct {
	entered *sync.WaitGroup
	release chan struct{}
	c       *clock
	lag     time.Duration
}

func (p stalled) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	select {
	case <-p.release:
		p.c.advance(p.lag)
	default:
		p.entered.Done()
		<-p.release
	}
	return limitspec.Result{}, fmt.Errorf("%w: %w: i/o timeout", limitspec.ErrUnavailable, limitspec.ErrOutcomeUnknown)
}

// TestStallIsOneFailure: 20 calls in flight together when the primary
// stalls all fail at its Timeout: one stall, counted once, which does
// not open the breaker (Failures 5), where 20 failures in a row would.
// A primary that keeps failing opens it after Failures rounds of calls,
// each started after the previous round failed: 4 calls one after the
// other, each a Timeout, open it.
func TestStallIsOneFailure(t *testing.T) {
	const timeout, burst = 50 * time.Millisecond, 20
	c := newClock()
	var entered sync.WaitGroup
	entered.Add(burst)
	p := stalled{entered: &entered, release: make(chan struct{}), c: c, lag: timeout}
	l := mustNew(t, p, local(t), Options{Timeout: timeout, OpenFor: time.Hour}, c)
	var done sync.WaitGroup
	for range burst {
		done.Go(func() {
			if res, err := l.Limit(context.Background(), req(gcra(100), "k", 1)); err != nil || res.Side != limitspec.Fallback {
				t.Errorf("a call of the stall: %+v, %v; want decided locally", res, err)
			}
		})
	}
	entered.Wait()
	c.advance(timeout)
	close(p.release)
	done.Wait()
	if st := l.Stats(); st.PrimarySlow != burst || st.State != Closed {
		t.Fatalf("after the stall: %d slow failures, breaker %v; want %d, closed", st.PrimarySlow, st.State, burst)
	}
	for i := 1; i < DefaultFailures; i++ {
		limit(t, l, req(gcra(100), "k", 1))
		if st := l.Stats(); (st.State == Open) != (i == DefaultFailures-1) {
			t.Fatalf("the %dth failure after the stall: breaker %v; want open after %d", i, st.State, DefaultFailures-1)
		}
	}
}
