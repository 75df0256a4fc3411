package limiters

import (
	"fmt"
	"maps"
	"slices"

	"github.com/limitspec/limitspec"
)

// Defaults applies a request's default amount (docs/semantics.md,
// "Amounts in Go"), in place: a request that is no Peek and leaves Cost 0 costs
// 1, unless takes is false (a hold's release or renew, which take no
// amount); a Peek must ask for nothing, and keeps Cost 0. Every limiter
// applies it first to each request it is given, so that past it Cost 0
// means nothing asked; it is idempotent, so a limiter that wraps another
// passes the request on as it is.
func Defaults(req *limitspec.Request, takes bool) error {
	if req.Peek {
		if req.Cost != 0 {
			return badInput("%s: a peek asks for nothing: cost must be 0, got %d", ruleName(req), req.Cost)
		}
		for _, u := range slices.Sorted(maps.Keys(req.Costs)) { // the first in order, as Policy.Costs names units
			if c := req.Costs[u]; c != 0 {
				return badInput("%s: a peek asks for nothing: costs[%q] must be 0, got %d", ruleName(req), u, c)
			}
		}
		return nil
	}
	if req.Cost == 0 && takes {
		req.Cost = 1
	}
	return nil
}

// TakesAmount reports whether a hold's op takes an amount: a reserve (what
// it holds) and a commit (what was spent) do, a release and a renew do
// not.
func TakesAmount(op limitspec.HoldOp) bool { return op == limitspec.Reserve || op == limitspec.Commit }

// ruleName names req's policy or limit in a refusal.
func ruleName(req *limitspec.Request) string {
	switch {
	case req.Policy != nil:
		return req.Policy.Name()
	case !IsNil(req.Limit):
		return req.Limit.Algorithm().Name
	}
	return "limitspec"
}

// IsPeek reports whether req, its defaults applied (Defaults), consumes
// nothing: its every amount is 0. A Limit's amount is Cost; a Policy's
// are its limits' (Policy.Costs); an amount of a unit no limit counts,
// which the limiters refuse, is not looked at. Without a Policy, every
// amount of Costs counts too.
func IsPeek(req limitspec.Request) bool {
	if req.Peek {
		return true
	}
	if req.Policy == nil {
		for _, c := range req.Costs {
			if c != 0 {
				return false
			}
		}
		return req.Cost == 0
	}
	for _, l := range req.Policy.Limits() {
		c := req.Cost
		if v, ok := req.Costs[l.Unit]; ok && l.Unit != "" {
			c = v
		}
		if c != 0 {
			return false
		}
	}
	return true
}

// badInput is a refusal of a request's input, matching
// limitspec.ErrBadInput.
func badInput(format string, args ...any) error {
	return &limitspec.InputError{Msg: fmt.Sprintf(format, args...)}
}

// AsksNothing reports whether req gives no amount at all: its Cost and
// every amount of its Costs 0. A caller that means such a request to
// charge nothing sends it as a Peek, since a Cost left 0 is 1
// (Defaults).
func AsksNothing(req limitspec.Request) bool {
	for _, c := range req.Costs {
		if c != 0 {
			return false
		}
	}
	return req.Cost == 0
}

// InFlightAlone returns the in-flight limit (limitspec.InFlight: its
// decision writes nothing, only holds count it) that lim is, or that p,
// a policy without holds, counts, as a policy limit (a lone lim's has no
// name); found is false when there is none. Such a limit would admit
// every request, and is refused where it is decided.
func InFlightAlone(lim limitspec.Limit, p *limitspec.Policy) (pl limitspec.PolicyLimit, found bool) {
	switch {
	case !IsNil(lim) && limitspec.InFlight(lim):
		return limitspec.PolicyLimit{Limit: lim}, true
	case p == nil || p.Holds():
		return pl, false
	}
	for _, pl := range p.Limits() {
		if limitspec.InFlight(pl.Limit) {
			return pl, true
		}
	}
	return pl, false
}
