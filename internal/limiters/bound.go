package limiters

import (
	"reflect"

	"github.com/limitspec/limitspec"
)

// The refusals of the handles bound to one limit or one policy (the
// limiters' Bind and BindPolicy, and the fallback's), the same from
// every limiter.

// CheckBindHolds refuses to bind a holding policy: its calls count its
// holds, which a bound policy's decisions would pass by.
func CheckBindHolds(p *limitspec.Policy) error {
	if p.Holds() {
		return badInput("%s: a holding policy is not bound: call the limiter with it", p.Name())
	}
	return nil
}

// CheckBound refuses a request to a limit's bound handle, of limit lim
// and policy p, that names a policy, or another limit than the bound one
// (given, as it was bound, or value, its value); a nil lim names the
// bound one. A refusal names the algorithm as its scripts do.
func CheckBound(lim limitspec.Limit, p *limitspec.Policy, given, value limitspec.Limit) error {
	switch {
	case p != nil:
		return badInput("%s: a request to a bound limit names no Policy", value.Algorithm().Name)
	case !IsNil(lim) && lim != given && lim != value:
		return badInput("%s: a request to a bound limit names it or no Limit, not %+v", value.Algorithm().Name, lim)
	}
	return nil
}

// CheckBoundPolicy refuses a request to a policy's bound handle, of
// limit lim and policy p, that names a limit, or another policy than the
// bound one; a nil p names the bound one.
func CheckBoundPolicy(lim limitspec.Limit, p, bound *limitspec.Policy) error {
	switch {
	case !IsNil(lim):
		return badInput("%s: a request to a bound policy names no Limit", bound.Name())
	case p != nil && p != bound:
		return badInput("%s: a request to a bound policy names it or no Policy, not %s", bound.Name(), p.Name())
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
