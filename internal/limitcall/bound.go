package limitcall

import (
	"context"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limiters"
)

// The refusals of the handles bound to one limit or one policy (the
// limiters' Bind and BindPolicy), the same from every limiter.

// CheckBind refuses a limit no handle can be bound to: none (nil, or a
// typed nil), as a request naming none is refused (CheckRuleOf), and an
// in-flight limit, which decides nothing alone (CheckCounts). The
// limiter then checks the limit itself, as it checks a request's.
func CheckBind(lim limitspec.Limit) error {
	if err := CheckRuleOf(lim, nil); err != nil {
		return err
	}
	return CheckCounts(lim, nil)
}

// CheckBindPolicy refuses a policy no handle can be bound to: none, or
// one not made by NewPolicy, as a request naming it is refused.
// A holding policy is not bound: its calls count its holds, which a
// bound policy's decisions would pass by.
func CheckBindPolicy(p *limitspec.Policy) error {
	if err := CheckRuleOf(nil, p); err != nil {
		return err
	}
	if err := limiters.CheckBindHolds(p); err != nil {
		return err
	}
	return CheckCounts(nil, p)
}

// Into is the Limit of a handle whose LimitInto (into) decides into a
// Result: a new Result, the zero one on an error.
func Into(ctx context.Context, req limitspec.Request, into func(context.Context, limitspec.Request, *limitspec.Result) error) (limitspec.Result, error) {
	var res limitspec.Result
	if err := into(ctx, req, &res); err != nil {
		return limitspec.Result{}, err
	}
	return res, nil
}
