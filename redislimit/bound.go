package redislimit

import (
	"context"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/internal/limiters"
)

// Bound decides requests by one limit, checked once when it was bound
// (Limiter.Bind): its scripts, its keys' names after the hash tag and its
// parameters are prepared then, so that a call builds only the key, now_ms
// and cost. It keeps every guarantee of its Limiter's Limit (batching,
// deadlines, at most once, NOSCRIPT, Functions, Cluster redirections, the
// error classes), and is safe for concurrent use.
type Bound struct {
	l *Limiter
	p *plan
	// given is the limit as Bind was given it, value its value (the
	// Limit of the results): a request may name either.
	given, value limitspec.Limit
}

// Bind returns a handle that decides requests by lim, which it checks
// now, as Limit checks a request's limit: errors match
// limitspec.ErrBadInput, with Limit's words. The handle decides by lim as
// it is now: a pointer's later changes do not reach it.
func (l *Limiter) Bind(lim limitspec.Limit) (*Bound, error) {
	if err := limitcall.CheckBind(lim); err != nil {
		return nil, err
	}
	value := limiters.LimitValue(lim)
	p, err := limitPlan(value)
	if err != nil {
		return nil, err
	}
	return &Bound{l: l, p: p, given: lim, value: value}, nil
}

// Allow decides a request of cost 1 for key.
func (b *Bound) Allow(ctx context.Context, key string) (limitspec.LimitResult, error) {
	return b.Limit(ctx, limitspec.Request{Key: key, Cost: 1})
}

// Limit decides req for req.Key by the bound limit: req.Cost, req.Now
// (zero: the limiter's clock, or the server's with Options.ServerClock),
// req.Force and req.Inputs as Limiter.Limit takes them. req.Limit is nil
// or the bound limit (as Bind was given it, or its value), req.Policy
// nil; anything else is refused (limitspec.ErrBadInput). The result's
// Limit is the bound limit's value.
func (b *Bound) Limit(ctx context.Context, req limitspec.Request) (limitspec.LimitResult, error) {
	if err := limiters.CheckBound(req.Limit, req.Policy, b.given, b.value); err != nil {
		return limitspec.LimitResult{}, err
	}
	var one [1]limitspec.LimitResult
	_, _, limits, err := b.l.decide(ctx, b.p, req, one[:0])
	if err != nil {
		return limitspec.LimitResult{}, err
	}
	return limits[0], nil
}

// BoundPolicy decides requests by one policy, checked once when it was
// bound (Limiter.BindPolicy), as Bound does a limit's. It is safe for
// concurrent use.
type BoundPolicy struct {
	l *Limiter
	p *plan
}

// BindPolicy returns a handle that decides requests by p, which it
// checks now, as Limit checks a request's policy (on a Cluster or a Ring,
// a policy whose keys may lie in several slots is refused): errors match
// limitspec.ErrBadInput, with Limit's words.
func (l *Limiter) BindPolicy(p *limitspec.Policy) (*BoundPolicy, error) {
	if err := limitcall.CheckBindPolicy(p); err != nil {
		return nil, err
	}
	if err := l.checkSlots(p); err != nil {
		return nil, err
	}
	pl, err := policyPlan(p)
	if err != nil {
		return nil, err
	}
	return &BoundPolicy{l: l, p: pl}, nil
}

// Limit decides req for req.IDs by the bound policy: req.Cost, req.Now
// and req.Force as Limiter.Limit takes them. req.Policy is nil or the
// bound policy, req.Limit nil; anything else is refused
// (limitspec.ErrBadInput).
func (b *BoundPolicy) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	return limitcall.Into(ctx, req, b.LimitInto)
}

// LimitInto decides req as Limit does and writes its result to *res,
// leaving it as it was on an error. The result's Limits reuse the array
// of res.Limits (they are appended to res.Limits[:0]), so that a caller
// that decides into one Result again and again allocates nothing for
// them; whatever refers to the Limits of a Result decided into again
// sees the new decision's.
func (b *BoundPolicy) LimitInto(ctx context.Context, req limitspec.Request, res *limitspec.Result) error {
	if err := limiters.CheckBoundPolicy(req.Limit, req.Policy, b.p.policy); err != nil {
		return err
	}
	limits := res.Limits[:0]
	if cap(limits) < len(b.p.limits) {
		limits = make([]limitspec.LimitResult, 0, len(b.p.limits))
	}
	decision, binding, limits, err := b.l.decide(ctx, b.p, req, limits)
	if err != nil {
		return err
	}
	*res = limitcall.Result(decision, binding, limits)
	return nil
}
