package fallback

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/limitspec/limitspec"
)

// losing is a primary, an in-process limiter, that is down while down
// is set (it decides nothing), and that applies the next payments it is
// told to lose and answers them as a lost reply.
type losing struct {
	limitspec.Limiter
	down atomic.Bool
	lose atomic.Int64
	ids  []string // the ids of the payments received
}

func (p *losing) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	if p.down.Load() {
		return limitspec.Result{}, fmt.Errorf("%w: down", limitspec.ErrUnavailable)
	}
	if req.Force {
		p.ids = append(p.ids, req.ID)
	}
	res, err := p.Limiter.Limit(ctx, req)
	if err == nil && req.Force && p.lose.Add(-1) >= 0 {
		return limitspec.Result{}, fmt.Errorf("%w: %w: the reply was lost", limitspec.ErrUnavailable, limitspec.ErrOutcomeUnknown)
	}
	return res, err
}

// TestPaymentLostIsPaidOnce: after a request the primary decides, 4
// requests admitted locally while it is down are owed to it; the payment's reply is lost (the
// primary applied it), so the 5th request is decided locally too, and
// owed; the 6th pays again: the lost payment first, with its request
// id (the primary replays it and charges nothing), then the 5th's
// under an id of its own, then the primary decides the 6th. The
// primary counts 7, one per admission; without the id it would count
// the lost payment twice.
func TestPaymentLostIsPaidOnce(t *testing.T) {
	primary := &losing{Limiter: local(t)}
	c := newClock()
	l := mustNew(t, primary, local(t), Options{Failures: 1000}, c)
	r := req(fixedWindow(10), "k", 1)
	if res := limit(t, l, r); res.Side != limitspec.Primary {
		t.Fatalf("request 0: %+v; want decided by the primary", res)
	}
	primary.down.Store(true)
	for i := range 4 {
		if res := limit(t, l, r); !res.Allowed || res.Side != limitspec.Fallback {
			t.Fatalf("request %d: %+v; want admitted locally", i+1, res)
		}
	}
	primary.down.Store(false)
	primary.lose.Store(1)
	if res := limit(t, l, r); !res.Allowed || res.Side != limitspec.Fallback {
		t.Fatalf("request 5: %+v; want admitted locally (the payment's reply lost)", res)
	}
	if res := limit(t, l, r); !res.Allowed || res.Side != limitspec.Primary {
		t.Fatalf("request 6: %+v; want admitted by the primary", res)
	}
	peek := r
	peek.Cost, peek.Peek = 0, true
	res, err := primary.Limiter.Limit(context.Background(), peek)
	if err != nil {
		t.Fatal(err)
	}
	if used := res.Limits[0].Quota - res.Limits[0].Remaining; used != 7 {
		t.Errorf("the primary counts %d; want 7, one per admission", used)
	}
	if len(primary.ids) != 3 || primary.ids[0] != primary.ids[1] || primary.ids[1] == primary.ids[2] ||
		!strings.HasPrefix(primary.ids[0], "fallback-payment:") {
		t.Errorf("payment ids %q; want the lost one twice, then another", primary.ids)
	}
}

// TestPaymentKeepsTheCallersID: a payment is a request of its own, under
// its own id, never the id of the request it comes before (whose retry
// would then get the payment's reply).
func TestPaymentKeepsTheCallersID(t *testing.T) {
	primary := &losing{Limiter: local(t)}
	l := mustNew(t, primary, local(t), Options{Failures: 1000}, newClock())
	r := req(fixedWindow(10), "k", 1)
	limit(t, l, r)
	primary.down.Store(true)
	limit(t, l, r)
	primary.down.Store(false)
	r.ID = "caller-1"
	first := limit(t, l, r)
	again, err := l.Limit(context.Background(), r)
	if err != nil || again.Allowed != first.Allowed || again.Limits[0].Remaining != first.Limits[0].Remaining {
		t.Fatalf("the caller's retry: %+v, %v; want its first reply, %+v", again, err, first)
	}
	if len(primary.ids) != 1 || primary.ids[0] == "caller-1" {
		t.Errorf("payment ids %q; want one of the fallback's own", primary.ids)
	}
}

// TestUnreportedKeyPaid: a key the primary never answered for (it failed
// from the first call, as a busy host's first calls may) starts locally
// from what the local limiter holds; what the local limiter admits is
// owed to the primary all the same, so that once the primary answers,
// it counts those admissions and denies past the limit: over the window
// the key is admitted its limit once, not twice. A later outage keeps
// the local state (it is not reset from a report that never saw those
// admissions).
func TestUnreportedKeyPaid(t *testing.T) {
	primary := &losing{Limiter: local(t)}
	c := newClock()
	l := mustNew(t, primary, local(t), Options{Failures: 1000}, c)
	r := req(fixedWindow(5), "k", 1)
	admitted := 0
	decide := func(down bool, n int) {
		primary.down.Store(down)
		for range n {
			if res := limit(t, l, r); res.Allowed {
				admitted++
			}
		}
	}
	decide(true, 3)  // locally: 3 of 5, no report
	decide(false, 1) // the primary, told of the 3 first: 4 of 5
	decide(true, 3)  // locally again: the 5th, then denied
	decide(false, 3) // the primary, told of the 5th: denied
	if admitted != 5 {
		t.Errorf("%d admitted; want 5, the limit, once", admitted)
	}
	peek := r
	peek.Cost, peek.Peek = 0, true
	res, err := primary.Limiter.Limit(context.Background(), peek)
	if err != nil || res.Limits[0].Remaining != 0 {
		t.Errorf("the primary: %+v, %v; want its 5 counted", res, err)
	}
}
