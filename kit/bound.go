package kit

import "github.com/limitspec/limitspec"

// The refusals of the handles bound to one limit or one policy (the
// limiters' Bind and BindPolicy), the same from every limiter.

// CheckBind refuses a limit no handle can be bound to: none (nil, or a
// typed nil). The limiter then checks the limit itself, as it checks a
// request's.
func CheckBind(lim limitspec.Limit) error {
	if limitspec.IsNil(lim) {
		return BadInput("Bind needs a limit (none was given)")
	}
	return nil
}

// CheckBindPolicy refuses a policy no handle can be bound to: none, or
// one not made by NewPolicy.
func CheckBindPolicy(p *limitspec.Policy) error {
	if p == nil || p.Name() == "" {
		return BadInput("BindPolicy needs a policy made with limitspec.NewPolicy (none was given)")
	}
	return nil
}

// CheckBound refuses a request to a handle bound to lim: one that names
// a Policy, or a Limit other than lim (a request names none, or lim).
func CheckBound(req limitspec.Request, lim limitspec.Limit) error {
	switch {
	case req.Policy != nil:
		return BadInput("a request to a bound limit names a Policy (it names none)")
	case req.Limit != nil && req.Limit != lim && !limitspec.IsNil(req.Limit):
		return BadInput("a request to a bound limit names another Limit (it names none, or the bound one)")
	}
	return nil
}

// CheckBoundPolicy refuses a request to a handle bound to p: one that
// names a Limit, or a Policy other than p (a request names none, or p).
func CheckBoundPolicy(req limitspec.Request, p *limitspec.Policy) error {
	switch {
	case !limitspec.IsNil(req.Limit):
		return BadInput("a request to the bound policy %s names a Limit (it names none)", p.Name())
	case req.Policy != nil && req.Policy != p:
		return BadInput("a request to the bound policy %s names another Policy (it names none, or the bound one)", p.Name())
	}
	return nil
}
