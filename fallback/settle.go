package fallback

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limiters"
)

// The commits and releases of holds that the primary did not answer
// (docs/semantics.md, "Holds behind the fallback"). A holder commits or
// releases a hold the primary granted while the primary fails: the call
// cannot end the hold there, and the local limiter does not have it. It
// is kept, with the hold's id, and sent to the primary again once the
// primary answers a call: an operation on a hold is idempotent by its
// id, so that a commit the primary did run (its reply lost) gets its
// first reply and charges nothing twice, and one it did not run ends
// the hold and charges what was spent. Without it the hold would hold
// its amount until its end (HoldFor, a minute by default), refusing its
// tenant the slots its holders had given back, and a commit's spent
// amount would never be counted.
//
// A reserve whose outcome is unknown (its reply lost or late: the
// primary may hold it) and which was decided without the primary owes
// it a release of its id, kept and sent the same way (holds.go,
// undoReserve): its holder, if admitted, holds it locally and ends it
// there, so that nothing else would end the primary's hold. The release
// is due undoAfter after the reserve failed, not at once: a reserve that
// timed out may still be waiting to run (in a socket's buffers, or for
// a busy Redis's turn), and a release that ran before it would find
// nothing and leave it to hold until its end (measured on a loaded host:
// 1 slot of 4 held for two minutes, its request counted, though
// released). Until then it holds its amount on the primary, and the
// operations owed after it wait too.
//
// A renew is not kept: its hold ends at its first end. The owed
// operations are sent in the order they failed, at most
// settlesPerCall after each call the primary answers (the caller's
// call then takes that much longer), and at most maxOwedSettles are
// kept: beyond, the oldest is dropped (Stats.SettlesLost), its hold
// ending by itself. A retry the primary refuses as bad input, or
// answers NOHOLD (the hold ended meanwhile, or was ended by a call
// whose reply was lost), is done with.

// maxOwedSettles bounds the operations kept; settlesPerCall bounds those
// sent after one call; undoAfter is how long after its reserve failed a
// release of it is due.
const (
	maxOwedSettles = 10_000
	settlesPerCall = 16
	undoAfter      = time.Second
)

// settle is a commit or release the primary did not answer: its request
// (Now as the caller gave it) and its operation; or, decision set, a
// decision with a request id whose outcome is unknown, admitted
// locally, to send again forced (sendOwed).
type settle struct {
	req      limitspec.Request
	h        limitspec.Hold
	decision bool
	// due is when it may be sent: zero for at once.
	due time.Time
}

// owedSettles are the operations owed to the primary, oldest first.
type owedSettles struct {
	mu   sync.Mutex
	list []settle
	// n is len(list), read without the lock: nothing owed, nothing to do.
	n              atomic.Int64
	replayed, lost atomic.Uint64
	replaying      atomic.Bool // one call sends them at a time
}

// owe keeps s, a commit or release the primary failed to answer; the
// oldest is dropped when maxOwedSettles are kept.
func (o *owedSettles) owe(s settle) {
	if !s.decision && s.h.Op != limitspec.Commit && s.h.Op != limitspec.Release {
		return
	}
	// the caller's maps may change once its call has returned
	s.req.IDs, s.req.Costs, s.req.Inputs = maps.Clone(s.req.IDs), maps.Clone(s.req.Costs), maps.Clone(s.req.Inputs)
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.list) == maxOwedSettles {
		o.list = o.list[1:]
		o.lost.Add(1)
	}
	o.list = append(o.list, s)
	o.n.Store(int64(len(o.list)))
}

// first returns the oldest operation owed, if any is, and due at now.
func (o *owedSettles) first(now time.Time) (settle, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.list) == 0 || o.list[0].due.After(now) {
		return settle{}, false
	}
	return o.list[0], true
}

// done removes s, the oldest operation owed, once the primary answered
// it: taken (err nil) or refused for good.
func (o *owedSettles) done(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.list) == 0 {
		return
	}
	o.list[0] = settle{}
	o.list = o.list[1:]
	o.n.Store(int64(len(o.list)))
	if err == nil || errors.Is(err, limitspec.ErrNoHold) {
		o.replayed.Add(1)
	} else {
		o.lost.Add(1)
	}
}

// settleOwed sends the primary, which just answered a call, the
// operations on holds it is owed, oldest first, up to settlesPerCall,
// until it fails or ctx is done; one call sends them at a time.
func (l *Limiter) settleOwed(ctx context.Context) {
	o := &l.owed
	if o.n.Load() == 0 || !o.replaying.CompareAndSwap(false, true) {
		return
	}
	defer o.replaying.Store(false)
	for range settlesPerCall {
		s, ok := o.first(l.now())
		if !ok || ctx.Err() != nil {
			return
		}
		start := l.now()
		pctx, cancel := context.WithTimeout(ctx, l.timeout)
		err := l.sendOwed(pctx, s)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && limiters.Outage(err):
			l.lastErr.Store(&err)
			l.br.failed(false, start, l.now())
			return // the primary fails again: it is kept
		}
		o.done(err)
	}
}

// sendOwed sends the primary s again. A decision goes forced, with its
// request id: a primary that charged the first (it ran, and admitted)
// remembers the id, and refuses the forced one as another request under
// the same id (bad input), charging nothing; one that did not charge it
// (it never ran it, or denied it) charges it now, as the local limiter
// admitted it. Either way the primary counts it once (docs/semantics.md,
// "Request ids"), within REQUEST_MS (a minute) of the first.
func (l *Limiter) sendOwed(ctx context.Context, s settle) error {
	if !s.decision {
		_, err := runHold(ctx, l.primary, s.req, &s.h)
		return err
	}
	req := s.req
	req.Force = true
	_, err := l.primary.Limit(ctx, req)
	if errors.Is(err, limitspec.ErrBadInput) && !s.req.Force {
		return nil // charged by the first: remembered, of another force
	}
	return err
}
