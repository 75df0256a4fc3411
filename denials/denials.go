// Package denials answers without a round trip the requests a primary
// limiter has already denied for certain: a denial's RetryAfter is exact
// (docs/semantics.md), and only admissions and forced calls change a
// key's state, both by consuming, so until it passes the same key and
// limit deny the same cost whatever other callers do.
// Under attack, the Redis cost of a hot denied key falls to nothing. It
// knows only the contract, package limitspec.
//
//	remote, _ := redislimit.New(ctx, rdb, redislimit.Options{})
//	lim, err := denials.New(remote, denials.Options{})
//
// A request is answered from the cache when its key and limit (or policy
// and identities) were denied less than RetryAfter ago for the same
// cost: it gets that denial, its RetryAfter and each limit's ResetAfter
// shortened by the time since (exact if nothing else happened meanwhile,
// as the contract's are), each limit's Remaining as of the denial (the
// binding limit's is below the cost: 0 for a cost of 1). Every other
// request goes to the primary: an admission clears the key's denial, a
// denial replaces it. Forced calls, peeks (every amount 0:
// limitspec.Request.Peek) and requests with amounts by unit (Costs)
// always go to the primary, and their denials are not kept: a denial is
// kept for one Cost on every limit, which a request with Costs is not.
// A forced call clears the key's denial too (its waits would now be
// longer), and so does an admitted request with Costs, unless it is a
// peek. A limit raised is another limit (another entry); a Reset
// through this Limiter clears the key's denial, but a reset made
// elsewhere (another process, redis-cli) is not seen: the cache denies
// until the RetryAfter it holds, at most.
//
// Only the primary's own denials are kept (Side limitspec.Primary): one
// made without it, by a fallback.Limiter's local limiter or failing
// closed, is not certain. Put the cache between a fallback.Limiter and
// its Redis limiter: fallback.New(denials.New(remote, ...), local, ...).
package denials

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/keyed"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/internal/refusal"
)

// DefaultKeys is the number of denials held when Options.Keys is 0.
const DefaultKeys = 100_000

// Options configure a Limiter. The zero value is the default:
// DefaultKeys denials held, on time.Now's clock.
type Options struct {
	// Keys is the most denials held; 0 means DefaultKeys. Past it, one is
	// forgotten at random to make room (its next request asks the
	// primary).
	Keys int
	// Now is the cache's clock; nil means time.Now. A request whose Now
	// is set is answered at that time instead.
	Now func() time.Time
}

// Limiter is a primary limiter behind a cache of its denials. It
// implements limitspec.Limiter, limitspec.Resetter and limitspec.Checker
// and is safe for concurrent use. Make one with New.
type Limiter struct {
	primary limitspec.Limiter
	now     func() time.Time
	denied  *keyed.Map[denial]
	resets  atomic.Uint64 // calls of Reset: a denial decided across one is not kept
	hits    atomic.Uint64
	misses  atomic.Uint64
}

// denial is a key's last denial: of cost, at (the time the call was
// sent), valid until at + its RetryAfter (the zero until: none).
type denial struct {
	cost      int64
	at, until time.Time
	never     bool // the cost can never be admitted (RetryAfter is limitspec.Never)
	res       limitspec.Result
}

// New returns a Limiter caching primary's denials, configured by opts,
// each zero field standing for its default. It refuses a nil primary and
// negative Keys with an error reading "denials: misconfigured: ..." that
// names the field, matching limitspec.ErrMisconfigured. The Limiter
// starts no goroutine and has nothing to close.
func New(primary limitspec.Limiter, opts Options) (*Limiter, error) {
	switch {
	case limiters.IsNil(primary):
		return nil, refusal.Config("denials", "the primary limiter is nil")
	case opts.Keys < 0:
		return nil, refusal.Config("denials", "Options.Keys must be ≥ 0, got %d", opts.Keys)
	}
	l := &Limiter{primary: primary, now: opts.Now}
	if l.now == nil {
		l.now = time.Now
	}
	keys := opts.Keys
	if keys == 0 {
		keys = DefaultKeys
	}
	l.denied = keyed.New[denial](keys, nil)
	return l, nil
}

// Limit answers req from the key's denial when it can, and asks the
// primary otherwise (see the package documentation). Its errors are the
// primary's.
func (l *Limiter) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	if err := limiters.Defaults(&req, true); err != nil {
		return limitspec.Result{}, err
	}
	if req.Cost < 1 || req.Force || len(req.Costs) > 0 {
		return l.pass(ctx, req)
	}
	now := req.Now
	if now.IsZero() {
		now = l.now()
	}
	var res limitspec.Result
	hit := false
	l.denied.With(req, false, func(d *denial) {
		if d != nil && req.Cost == d.cost && !now.Before(d.at) && (d.never || now.Before(d.until)) {
			res, hit = d.answer(now), true
		}
	})
	if hit {
		l.hits.Add(1)
		return res, nil
	}
	l.misses.Add(1)
	resets := l.resets.Load()
	res, err := l.primary.Limit(ctx, req)
	if err != nil {
		return res, err
	}
	l.denied.With(req, !res.Allowed, func(d *denial) {
		switch {
		case d == nil:
		case res.Allowed || res.RetryAfter <= 0 || res.Side != limitspec.Primary || l.resets.Load() != resets:
			*d = denial{}
		default:
			*d = denial{cost: req.Cost, at: now, until: now.Add(res.RetryAfter), never: res.RetryAfter == limitspec.Never, res: res}
		}
	})
	return res, nil
}

// pass sends req to the primary, uncached: a peek, a forced call, or a
// request with amounts by unit (Costs), whose denial is not kept. One
// that is no peek (some amount is not 0) and consumes, forced or
// admitted, clears the key's denial: its waits may be longer now.
func (l *Limiter) pass(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	l.misses.Add(1)
	consumes := !limiters.IsPeek(req)
	if req.Force && consumes {
		l.denied.Delete(req)
	}
	res, err := l.primary.Limit(ctx, req)
	if err == nil && res.Allowed && !req.Force && consumes {
		l.denied.Delete(req)
	}
	return res, err
}

// Check answers as the primary would (limitspec.Checker: its own verdict, else the limit's Validate).
func (l *Limiter) Check(req limitspec.Request) error {
	return limiters.Check(l.primary, req)
}

// answer is the denial d as of now: its waits shortened by the time
// since it was made (its RetryAfter ends at until).
func (d *denial) answer(now time.Time) limitspec.Result {
	return keyed.Aged(d.res, now.Sub(d.at))
}

// Reset clears req's denial and resets the key on the primary, which
// must implement limitspec.Resetter.
func (l *Limiter) Reset(ctx context.Context, req limitspec.Request) error {
	return l.denied.ResetThrough(ctx, l.primary, req, "denials", &l.resets)
}

// Stats are a Limiter's counters since New; each only grows.
type Stats struct {
	// Hits counts the requests answered from a denial; Misses, those
	// sent to the primary.
	Hits, Misses uint64
}

// Stats returns the counters, each read atomically.
func (l *Limiter) Stats() Stats { return Stats{Hits: l.hits.Load(), Misses: l.misses.Load()} }
