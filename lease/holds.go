package lease

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitspec/limitspec"
)

// A lease of a holding policy (limitspec.Policy.WithHolds) from a primary
// that keeps holds (limitspec.Holder) is taken as a hold: the primary
// reserves Size for the lease's id, which counts there as a charge would
// but is not one. When the lease ends (its time is up, it is too small
// for a request, or it is dropped), what was spent of it is committed
// and the rest given back (Stats.Returned), so that an idle process
// under-admits nothing. The hold lasts twice For, so that the commit,
// made when the lease ends, at most For after it began, finds it.

// heldLease is a lease taken as a hold.
type heldLease struct {
	req   limitspec.Request // the key's, to commit on
	id    string
	spent int64 // the cost decided from it; under the key's lock
	timer *time.Timer
	done  atomic.Bool // committed, or being committed
}

// holds reports whether req's leases are taken as holds.
func (l *Limiter) holds(req limitspec.Request) (limitspec.Holder, bool) {
	h, ok := l.primary.(limitspec.Holder)
	return h, ok && req.Policy != nil && req.Policy.Holds()
}

// ask asks the primary for a lease of req's key: a decision of Size on
// every limit, or a reserve of Size when req's leases are taken as holds
// (its id then returned). req has no Costs (see leases).
func (l *Limiter) ask(ctx context.Context, req limitspec.Request) (limitspec.Result, string, error) {
	req.Cost = l.size
	holder, ok := l.holds(req)
	if !ok {
		res, err := l.primary.Limit(ctx, req)
		return res, "", err
	}
	id := l.ids.Next()
	res, err := holder.Hold(ctx, req, limitspec.Hold{Op: limitspec.Reserve, ID: id, For: 2 * l.hold})
	return res, id, err
}

// keep starts the commit of a held lease at its end, lasting d.
func (l *Limiter) keep(req limitspec.Request, id string, spent int64, d time.Duration) *heldLease {
	h := &heldLease{req: req, id: id, spent: spent}
	l.open.Store(h, struct{}{})
	h.timer = time.AfterFunc(d, func() { l.settle(h) })
	return h
}

// end ends a held lease now, from under its key's lock: its commit runs
// at once, on its timer's goroutine.
func (h *heldLease) end() { h.timer.Reset(0) }

// settle commits what was spent of h, once, and counts the rest as given
// back. A commit that fails leaves the hold to end by itself on the
// primary, where it then charges nothing: what was spent of it is not
// counted (Stats.Unsettled).
func (l *Limiter) settle(h *heldLease) {
	if !h.done.CompareAndSwap(false, true) {
		return
	}
	defer l.open.Delete(h)
	var spent int64
	l.leases.With(h.req, false, func(e *lease) {
		if e != nil && e.held == h {
			e.held, e.units = nil, 0
		}
		spent = h.spent
	})
	ctx, cancel := context.WithTimeout(context.Background(), l.hold)
	defer cancel()
	req := h.req
	req.Cost, req.Peek, req.Now = spent, spent == 0, time.Time{} // a commit of nothing spent
	holder, _ := l.holds(req)
	if _, err := holder.Hold(ctx, req, limitspec.Hold{Op: limitspec.Commit, ID: h.id}); err != nil {
		l.c.unsettled.Add(uint64(spent))
		return
	}
	l.c.returned.Add(uint64(l.size - spent))
}

// Close commits every lease held as a hold now (see holds.go), giving
// back what was not spent, and waits for the commits; the Limiter goes
// on deciding afterwards. It returns nil.
func (l *Limiter) Close() error {
	var wg sync.WaitGroup
	l.open.Range(func(k, _ any) bool {
		h := k.(*heldLease)
		h.timer.Stop()
		wg.Go(func() { l.settle(h) })
		return true
	})
	wg.Wait()
	return nil
}
