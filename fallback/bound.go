package fallback

import (
	"context"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limiters"
)

// Bound decides requests by one limit through its Limiter, as the
// handles of package goimpl and redislimit (Bind) do, so that a service
// that binds its limits swaps either limiter for a fallback pair of them
// without changing its calls. Each call is the Limiter's Limit: the
// primary, or without it as the mode says. It is safe for concurrent
// use.
type Bound struct {
	l *Limiter
	// given is the limit as Bind was given it, value its value: a
	// request may name either.
	given, value limitspec.Limit
}

// Bind checks lim now, as Limit checks a request's limit, by the Check
// of the limiters it wraps (errors match limitspec.ErrBadInput, with
// their words), and returns a handle that
// decides requests by it. The handle decides by lim as it is now: a
// pointer's later changes do not reach it.
func (l *Limiter) Bind(lim limitspec.Limit) (*Bound, error) {
	if limiters.IsNil(lim) {
		return nil, badInput("fallback: Bind needs a Limit (none was given)")
	}
	value := limiters.LimitValue(lim)
	if err := l.Check(limitspec.Request{Key: "bind", Limit: value, Peek: true}); err != nil {
		return nil, err
	}
	return &Bound{l: l, given: lim, value: value}, nil
}

// Allow decides a request of cost 1 for key.
func (b *Bound) Allow(ctx context.Context, key string) (limitspec.LimitResult, error) {
	return b.Limit(ctx, limitspec.Request{Key: key, Cost: 1})
}

// Limit decides req for req.Key by the bound limit, as the Limiter's
// Limit decides it, and returns the limit's part of the Result (its
// Side, which says who decided, is in the Limiter's Stats). req.Limit is
// nil or the bound limit (as Bind was given it, or its value),
// req.Policy nil; anything else is refused (limitspec.ErrBadInput).
func (b *Bound) Limit(ctx context.Context, req limitspec.Request) (limitspec.LimitResult, error) {
	if err := limiters.CheckBound(req.Limit, req.Policy, b.given, b.value); err != nil {
		return limitspec.LimitResult{}, err
	}
	req.Limit = b.value
	res, err := b.l.Limit(ctx, req)
	switch {
	case err != nil:
		return limitspec.LimitResult{}, err
	case len(res.Limits) == 0: // FailOpen and FailClosed decide with no limit's part
		return limitspec.LimitResult{Name: b.value.Algorithm().Name, Limit: b.value, Allowed: res.Allowed, RetryAfter: res.RetryAfter}, nil
	}
	return res.Limits[0], nil
}

// BoundPolicy decides requests by one policy through its Limiter, as
// Bound does a limit's. It is safe for concurrent use.
type BoundPolicy struct {
	l *Limiter
	p *limitspec.Policy
}

// BindPolicy checks p now, as Limit checks a request's policy (a
// holding policy is not bound; errors match limitspec.ErrBadInput), and
// returns a handle that decides requests by it.
func (l *Limiter) BindPolicy(p *limitspec.Policy) (*BoundPolicy, error) {
	if p == nil {
		return nil, badInput("fallback: BindPolicy needs a Policy (none was given)")
	}
	if err := limiters.CheckBindHolds(p); err != nil {
		return nil, err
	}
	if err := l.Check(limitspec.Request{Policy: p, Peek: true}); err != nil {
		return nil, err
	}
	return &BoundPolicy{l: l, p: p}, nil
}

// Limit decides req for req.IDs by the bound policy, as the Limiter's
// Limit decides it. req.Policy is nil or the bound policy, req.Limit
// nil; anything else is refused (limitspec.ErrBadInput).
func (b *BoundPolicy) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	if err := limiters.CheckBoundPolicy(req.Limit, req.Policy, b.p); err != nil {
		return limitspec.Result{}, err
	}
	req.Policy = b.p
	return b.l.Limit(ctx, req)
}

// LimitInto decides req as Limit does and writes its result to *res,
// leaving it as it was on an error.
func (b *BoundPolicy) LimitInto(ctx context.Context, req limitspec.Request, res *limitspec.Result) error {
	r, err := b.Limit(ctx, req)
	if err != nil {
		return err
	}
	*res = r
	return nil
}
