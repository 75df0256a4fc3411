package limitcall

import (
	"context"
	"reflect"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/kit"
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
	if p.Holds() {
		return kit.BadInput("%s: a holding policy is not bound: call the limiter with it", p.Name())
	}
	return CheckCounts(nil, p)
}

// CheckBound refuses a request to a limit's bound handle, of limit lim
// and policy p, that names a policy, or another limit than the bound one
// (given, as it was bound, or value, its value); a nil lim names the
// bound one. A refusal names the algorithm as its scripts do.
func CheckBound(lim limitspec.Limit, p *limitspec.Policy, given, value limitspec.Limit) error {
	switch {
	case p != nil:
		return kit.BadInput("%s: a request to a bound limit names no Policy", value.Algorithm().Name)
	case !limiters.IsNil(lim) && lim != given && lim != value:
		return kit.BadInput("%s: a request to a bound limit names it or no Limit, not %+v", value.Algorithm().Name, lim)
	}
	return nil
}

// CheckBoundPolicy refuses a request to a policy's bound handle, of
// limit lim and policy p, that names a limit, or another policy than the
// bound one; a nil p names the bound one.
func CheckBoundPolicy(lim limitspec.Limit, p, bound *limitspec.Policy) error {
	switch {
	case !limiters.IsNil(lim):
		return kit.BadInput("%s: a request to a bound policy names no Limit", bound.Name())
	case p != nil && p != bound:
		return kit.BadInput("%s: a request to a bound policy names it or no Policy, not %s", bound.Name(), p.Name())
	}
	return nil
}

// LimitValue is lim's value: the limit a pointer points to (generated
// limits are values with value methods), or lim itself. A handle keeps it
// so that a pointer changed after Bind does not change the bound limit.
func LimitValue(lim limitspec.Limit) limitspec.Limit {
	v := reflect.ValueOf(lim)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		if l, ok := v.Elem().Interface().(limitspec.Limit); ok {
			return l
		}
	}
	return lim
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
