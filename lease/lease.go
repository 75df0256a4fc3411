package lease

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/keyed"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/internal/refusal"
)

const (
	// DefaultFor is the longest a lease is spent when Options.For is 0.
	DefaultFor = time.Second
	// DefaultKeys is the number of keys holding a lease when Options.Keys
	// is 0.
	DefaultKeys = 100_000
)

// maxExact is 2^53−1, the largest cost the limiters take.
const maxExact = 1<<53 - 1

// Options configure a Limiter. Size has no default and must be given;
// every other zero field is its default: DefaultFor, DefaultKeys and
// time.Now.
type Options struct {
	// Size is the cost a lease takes from the primary, 1 to 2^53−1: the
	// most this process holds of a key's limit at a time. Required.
	Size int64
	// For is the longest a lease is spent after it was asked for; 0
	// means DefaultFor. A lease ends sooner when the primary reports its
	// limits whole again sooner (the least ResetAfter of the lease's
	// decision: a fixed window's end).
	For time.Duration
	// Keys is the most keys holding a lease at a time; 0 means
	// DefaultKeys. Past it, a lease is dropped at random to make room.
	Keys int
	// Now is the clock of the leases; nil means time.Now. A request whose
	// Now is set is spent at that time instead.
	Now func() time.Time
}

// Limiter decides with leases taken from a primary limiter. It
// implements limitspec.Limiter, limitspec.Resetter and limitspec.Checker
// and is safe for concurrent use. Make one with New.
type Limiter struct {
	primary limitspec.Limiter
	size    int64
	hold    time.Duration
	now     func() time.Time
	leases  *keyed.Map[lease]
	resets  atomic.Uint64 // calls of Reset, so that a lease taken meanwhile is dropped
	c       counters
	ids     *limiters.IDs // the ids of leases held as holds
	open    sync.Map      // *heldLease: the leases held as holds not yet committed
}

// lease is one key's lease: units left to spend, from start (when the
// call that took it was sent) until until, and the primary's decision
// that granted it; or, until direct, no lease (the primary denied one:
// requests go to it as they are); taking is not nil while a call takes a
// lease.
type lease struct {
	units  int64
	start  time.Time
	until  time.Time
	res    limitspec.Result
	direct time.Time
	taking *taking
	held   *heldLease // the lease is a hold (holds.go); nil otherwise
}

// taking is a call taking a lease: done is closed when it has returned,
// failed set before if it failed.
type taking struct {
	done   chan struct{}
	failed bool
}

// New returns a Limiter taking leases from primary, configured by opts,
// each zero field standing for its default. It refuses a nil primary and
// options out of their domains with an error reading "lease:
// misconfigured: ..." that names the field, matching
// limitspec.ErrMisconfigured. The Limiter starts no goroutine and has
// nothing to close.
func New(primary limitspec.Limiter, opts Options) (*Limiter, error) {
	switch {
	case limiters.IsNil(primary):
		return nil, misconfigured("the primary limiter is nil")
	case opts.Size < 1 || opts.Size > maxExact:
		return nil, misconfigured("Options.Size must be in [1, 2^53−1], got %d", opts.Size)
	case opts.For < 0:
		return nil, misconfigured("Options.For must be ≥ 0, got %v", opts.For)
	case opts.Keys < 0:
		return nil, misconfigured("Options.Keys must be ≥ 0, got %d", opts.Keys)
	}
	l := &Limiter{primary: primary, size: opts.Size, hold: opts.For, now: opts.Now, ids: limiters.NewIDs("lease")}
	if l.hold == 0 {
		l.hold = DefaultFor
	}
	if l.now == nil {
		l.now = time.Now
	}
	keys := opts.Keys
	if keys == 0 {
		keys = DefaultKeys
	}
	l.leases = keyed.New(keys, func(gone *lease) { l.lapse(gone) })
	return l, nil
}

// misconfigured is New's refusal of what it cannot work with, as every
// constructor's refusal: "lease: misconfigured: ...", matching
// limitspec.ErrMisconfigured.
func misconfigured(format string, args ...any) error {
	return refusal.Config("lease", format, args...)
}

// Limit decides req from its key's lease, taking one from the primary
// when there is none left (see the package documentation). Its errors
// are the primary's, and the caller's ctx's while it waits for another
// call taking the key's lease.
func (l *Limiter) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	if err := limiters.Defaults(&req, true); err != nil {
		return limitspec.Result{}, err
	}
	if !leases(req, l.size) {
		return l.direct(ctx, req)
	}
	for {
		now := req.Now
		if now.IsZero() {
			now = l.now()
		}
		res, next, t := l.spend(req, now)
		switch next {
		case done:
			return res, nil
		case direct:
			return l.direct(ctx, req)
		case take:
			return l.take(ctx, req, now, t)
		}
		select {
		case <-t.done:
		case <-ctx.Done():
			return limitspec.Result{}, ctx.Err()
		}
		if t.failed {
			// The primary failed to grant the lease: each waiting
			// request tries it on its own, at once, not one after another.
			return l.direct(ctx, req)
		}
	}
}

// leases reports whether req may be decided from a lease of size: a
// request of a cost of 1 to size on every limit. A peek, a forced
// request, a request with Inputs, one with amounts by unit (Costs: a
// lease holds size of every limit, and such a request spends other
// amounts on some) and one on a shaper are sent to the primary as they
// are.
func leases(req limitspec.Request, size int64) bool {
	return req.Cost >= 1 && req.Cost <= size && !req.Force && len(req.Inputs) == 0 &&
		len(req.Costs) == 0 && !shapes(req)
}

// shapes reports whether req is decided by a shaper (limitspec.Shaper).
func shapes(req limitspec.Request) bool {
	if req.Policy != nil {
		return req.Policy.Shapes()
	}
	return limitspec.Shapes(req.Limit)
}

// What Limit does next, after spend.
const (
	done   = iota // decided from the lease
	direct        // ask the primary, as the request is
	take          // take a lease
	wait          // wait for another call taking the lease
)

// spend decides req at now from its key's lease, if it can, and
// otherwise says what to do.
func (l *Limiter) spend(req limitspec.Request, now time.Time) (res limitspec.Result, next int, t *taking) {
	l.leases.With(req, true, func(e *lease) {
		switch {
		case e.units >= req.Cost && !now.Before(e.start) && now.Before(e.until):
			e.units -= req.Cost
			if e.held != nil {
				e.held.spent += req.Cost
			}
			l.c.spent.Add(uint64(req.Cost))
			res, next = e.result(now), done
		case now.Before(e.direct):
			next = direct
		case e.taking != nil:
			next, t = wait, e.taking
		default:
			l.lapse(e)
			e.taking = &taking{done: make(chan struct{})}
			next, t = take, e.taking
		}
	})
	return res, next, t
}

// take asks the primary for a lease of req's key, at now, and decides
// req from it; t is done when the lease is taken or refused. A lease
// denied sends req to the primary as it is, and the requests of the
// key until the denial's RetryAfter (For at most) too. A lease granted
// while a key was reset is dropped: its cost may no longer count on the
// primary.
func (l *Limiter) take(ctx context.Context, req limitspec.Request, now time.Time, t *taking) (limitspec.Result, error) {
	defer close(t.done)
	resets := l.resets.Load()
	got, id, err := l.ask(ctx, req)
	t.failed = err != nil
	var res limitspec.Result
	l.leases.With(req, true, func(e *lease) {
		if e.taking == t {
			e.taking = nil
		}
		switch {
		case err != nil:
		case got.Allowed:
			l.c.leases.Add(1)
			l.c.leased.Add(uint64(l.size))
			l.c.spent.Add(uint64(req.Cost))
			l.lapse(e) // another call's lease, if this entry was dropped and made again meanwhile
			e.units, e.start, e.until, e.res = l.size-req.Cost, now, now.Add(l.lasts(got)), got
			if id != "" {
				e.held = l.keep(req, id, req.Cost, l.lasts(got))
			}
			res = e.result(now)
			if l.resets.Load() != resets {
				l.lapse(e)
			}
		default:
			l.c.denied.Add(1)
			e.direct = now.Add(min(got.RetryAfter, l.hold))
		}
	})
	if err != nil || got.Allowed {
		return res, err
	}
	return l.direct(ctx, req)
}

// lapse ends e's lease: a hold's is committed (holds.go), giving its
// units back; else they lapse.
func (l *Limiter) lapse(e *lease) {
	if e.held != nil {
		e.held.end()
		e.held = nil
	} else {
		l.c.lapsed.Add(uint64(e.units))
	}
	e.units = 0
}

// lasts is how long a lease the primary granted in res may be spent:
// For, or less when one of its limits is whole again sooner.
func (l *Limiter) lasts(res limitspec.Result) time.Duration {
	d := l.hold
	for _, lr := range res.Limits {
		d = min(d, lr.ResetAfter)
	}
	return d
}

// direct sends req to the primary as it is.
func (l *Limiter) direct(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	l.c.direct.Add(1)
	return l.primary.Limit(ctx, req)
}

// result is the decision of a request spent from e at now, e.units left:
// the lease's decision, admitted, with each limit's Remaining counting
// the units left as this process's, and its ResetAfter shortened by the
// time since the lease was taken. (No lease is taken for a shaper, whose
// requests wait: each one's Delay is 0.)
func (e *lease) result(now time.Time) limitspec.Result {
	res := keyed.Aged(e.res, now.Sub(e.start))
	res.Allowed, res.RetryAfter = true, 0
	for i := range res.Limits {
		lr := &res.Limits[i]
		lr.Allowed, lr.RetryAfter = true, 0
		lr.Remaining = min(lr.Remaining+e.units, lr.Quota)
	}
	return res
}

// Reset drops req's lease (its units lapse) and resets the key on the
// primary, which must implement limitspec.Resetter.
func (l *Limiter) Reset(ctx context.Context, req limitspec.Request) error {
	return l.leases.ResetThrough(ctx, l.primary, req, "lease", &l.resets)
}

// Check answers as the primary would (limitspec.Checker: its own verdict, else the limit's Validate).
func (l *Limiter) Check(req limitspec.Request) error {
	return limiters.Check(l.primary, req)
}

// Stats are a Limiter's counters since New; each only grows. Leased −
// Spent − Lapsed is the cost held in leases now.
type Stats struct {
	// Leases counts the leases the primary granted, Denied those it
	// denied.
	Leases, Denied uint64
	// Leased is the cost the granted leases took; Spent, the cost of the
	// requests decided from them; Lapsed, the cost that ended unspent (a
	// lease that ran out of time or was too small for a request, a key
	// reset, a lease dropped to make room for another key's).
	Leased, Spent, Lapsed uint64
	// Direct counts the requests sent to the primary as they are.
	Direct uint64
	// Returned is the cost of leases held as holds (holds.go) given
	// back unspent when they ended; Unsettled, the cost spent of such
	// leases whose commit failed (their holds end on the primary, which
	// then does not count it).
	Returned, Unsettled uint64
}

// Stats returns the counters, each read atomically.
func (l *Limiter) Stats() Stats {
	return Stats{Leases: l.c.leases.Load(), Denied: l.c.denied.Load(), Leased: l.c.leased.Load(),
		Spent: l.c.spent.Load(), Lapsed: l.c.lapsed.Load(), Direct: l.c.direct.Load(),
		Returned: l.c.returned.Load(), Unsettled: l.c.unsettled.Load()}
}

type counters struct {
	leases, denied, leased, spent, lapsed, direct, returned, unsettled atomic.Uint64
}
