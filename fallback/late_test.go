package fallback

import (
	"context"
	"fmt"
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
