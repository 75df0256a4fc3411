package limitcall

import (
	"slices"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/kit"
)

// Millis is ms as a Duration; a wait longer than a Duration holds (about
// 292 years) is limitspec.Never.
func Millis(ms int64) time.Duration {
	if ms > int64(limitspec.Never/time.Millisecond) {
		return limitspec.Never
	}
	return time.Duration(ms) * time.Millisecond
}

// retryAfter is a reply's retry_after_ms as a wait: 0 when allowed, Never
// when the request never will be (-1 on a denial). It takes the two
// fields rather than the reply, which its inlined callers would copy.
func retryAfter(allowed bool, ms int64) time.Duration {
	switch {
	case allowed:
		return 0
	case ms < 0:
		return limitspec.Never
	}
	return Millis(ms)
}

// LimitResult is a limit's part in a decision, from its reply.
func LimitResult(name string, lim limitspec.Limit, r kit.Reply) limitspec.LimitResult {
	res := limitspec.LimitResult{Name: name, Limit: lim}
	WriteReply(&res, &r)
	return res
}

// WriteReply writes r's fields to a limit's part in a decision, *res
// (all but its Name and Limit), field by field where it is: cheaper than
// building a LimitResult apart and copying it (a kit.Reply or a
// LimitResult passed by value is copied whole).
func WriteReply(res *limitspec.LimitResult, r *kit.Reply) {
	res.Allowed, res.Quota, res.Remaining = r.Allowed, r.Limit, r.Remaining
	res.RetryAfter = retryAfter(r.Allowed, r.RetryAfterMs)
	res.ResetAfter, res.Delay, res.Tier = Millis(r.ResetAfterMs), Millis(r.DelayMs), int(r.Tier)
}

// Result is a decision: its own reply (a policy's is its binding limit's,
// with the delay of all), the index of the binding limit, and each
// limit's part.
func Result(decision kit.Reply, binding int, limits []limitspec.LimitResult) limitspec.Result {
	return limitspec.Result{Allowed: decision.Allowed, RetryAfter: retryAfter(decision.Allowed, decision.RetryAfterMs),
		Delay: Millis(decision.DelayMs), Limits: limits, Binding: binding}
}

// The refusals of a key the scripts refuse, after the algorithm's name
// and ": " (the scripts' own words).
const (
	KeyEmpty = "key must not be empty"
	KeyBrace = "key must not begin with '}' (its hash tag would be empty)"
)

// CheckRule refuses a request without a limit or a policy, or with both,
// or with a policy not made by NewPolicy (the zero Policy: no name, no
// limits).
func CheckRule(req limitspec.Request) error { return CheckRuleOf(req.Limit, req.Policy) }

// CheckRuleOf is CheckRule of a request's limit and policy, lim and p,
// with no Request to copy.
func CheckRuleOf(lim limitspec.Limit, p *limitspec.Policy) error {
	hasLimit := !limiters.IsNil(lim)
	switch {
	case p != nil && hasLimit:
		return kit.BadInput("a request names a Limit or a Policy, not both")
	case p == nil && !hasLimit:
		return kit.BadInput("a request needs a Limit or a Policy (none was given)")
	case p != nil && p.Name() == "":
		return kit.BadInput("a policy needs a name and limits: make it with limitspec.NewPolicy")
	}
	return nil
}

// CheckCounts refuses the decision of an in-flight limit
// (limitspec.InFlight: concurrency) alone, or in a policy without holds:
// its decision writes nothing, so that it would admit every request; its
// quota counts the holds of a holding policy alone. The scripts refuse
// it alike (kit.MsgInFlight). A reset is not refused.
func CheckCounts(lim limitspec.Limit, p *limitspec.Policy) error {
	pl, found := limiters.InFlightAlone(lim, p)
	switch {
	case !found:
		return nil
	case pl.Name == "":
		return kit.BadInput("%s: %s", lim.Algorithm(), kit.MsgInFlight)
	}
	return kit.BadInput("%s.%s: %s: %s", p.Name(), pl.Name, pl.Limit.Algorithm(), kit.MsgInFlight)
}

// PolicyKeys returns the hash tag of each limit of p for the identity
// values ids: its identity's value, or its constant. An unknown or
// missing identity, or a value the scripts refuse as a key, is refused.
func PolicyKeys(p *limitspec.Policy, ids map[string]string) ([]string, error) {
	idents := p.Identities()
	for name := range ids {
		if !slices.Contains(idents, name) {
			return nil, kit.BadInput("%s: unknown identity %q (identities: %v)", p.Name(), name, idents)
		}
	}
	limits := p.Limits()
	keys := make([]string, len(limits))
	for i, pl := range limits {
		if pl.Constant != "" {
			keys[i] = pl.Constant
			continue
		}
		v, ok := ids[pl.Identity]
		switch {
		case !ok:
			return nil, kit.BadInput("%s: missing identity %s", p.Name(), pl.Identity)
		case v == "":
			return nil, kit.BadInput("%s: identity %s must not be empty", p.Name(), pl.Identity)
		case v[0] == '}':
			return nil, kit.BadInput("%s: identity %s must not begin with '}' (its hash tag would be empty)", p.Name(), pl.Identity)
		}
		keys[i] = kit.StoredKey(v)
	}
	return keys, nil
}
