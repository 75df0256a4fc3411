package limitspec

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// Policy decides one request by several limits at once, all or nothing:
// the request is admitted only when every limit admits it, and only then
// does any limit consume, so that a request denied by an hourly limit
// uses none of its per-second allowance (docs/semantics.md, "Policies").
// Each limit counts an identity whose value each request passes in
// Request.IDs (an IP, a user), or one constant shared by every caller (a
// global limit).
//
// A Policy is a value, made by NewPolicy from a Go literal or by
// package policyfile from a YAML or JSON file, and checked then; it does
// not change afterwards and is safe to share. The limiters of packages
// goimpl and redislimit decide it in one step each (one Redis round trip, by
// one script). IPUserPolicy, BurstQuotaPolicy and UserGlobalPolicy are
// ready-made ones, from spec/policies.yaml.
type Policy struct {
	name       string
	limits     []PolicyLimit
	identities []string
	holds      bool
}

// PolicyLimit is one limit of a Policy.
type PolicyLimit struct {
	// Name names the limit in the policy (lower_case, unique): in errors,
	// in Result.Limits, and in its keys, so that no two limits of a
	// policy share state, and limits of one name in several policies do
	// (see NewPolicy).
	Name string
	// Limit is the limit: a typed limit of this package or of a package
	// cmd/gen wrote.
	Limit Limit
	// Identity names what the limit counts (lower_case): each request
	// passes its value in Request.IDs. Give an Identity or a Constant.
	Identity string
	// Constant is the value the limit counts for every caller (such as
	// "global"): one state that every request shares.
	Constant string
	// Unit names what the limit counts (lower_case: "tokens", "slots",
	// "bytes"), when it is not the request's Cost: a request's amount of
	// the unit in Request.Costs is this limit's cost (docs/semantics.md,
	// "Units"). Several limits may count one unit.
	Unit string
}

// nameRE is what a policy, limit and identity name looks like: it goes
// into key names, between colons.
var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// NewPolicy returns the policy name of limits, checked: a name, at least
// one limit, limits of unique names, each a valid limit (Limit.Validate)
// counting either an identity or a constant. An error matches
// ErrBadInput and names the limit at fault.
//
// Which limits share a state: a limit's state is named by the limit's
// name, its algorithm, the value it counts and the parameters its state
// is measured in (a window, a rate), never by its amounts nor by the
// policy's name. So the policies of a service's plans (free, pro), each
// with a limit per_ip of one algorithm and window, count one IP once,
// whatever each plan allows it: a user moving from a plan to another
// keeps what it has spent. Limits that must count apart are named apart
// (login_ip, api_ip), or differ in algorithm or window.
func NewPolicy(name string, limits ...PolicyLimit) (*Policy, error) {
	if !nameRE.MatchString(name) {
		return nil, badInputf("policy %q: names are lower_case (a-z, 0-9, _), starting with a letter", name)
	}
	if len(limits) == 0 {
		return nil, badInputf("%s: a policy needs at least one limit", name)
	}
	p := &Policy{name: name, limits: slices.Clone(limits)}
	for i, l := range p.limits {
		if err := checkPolicyLimit(name, l, p.limits[:i]); err != nil {
			return nil, err
		}
		if l.Identity != "" && !slices.Contains(p.identities, l.Identity) {
			p.identities = append(p.identities, l.Identity)
		}
	}
	return p, nil
}

// checkPolicyLimit checks limit l of policy name, given those before it.
func checkPolicyLimit(name string, l PolicyLimit, before []PolicyLimit) error {
	what := name + "." + l.Name
	switch {
	case !nameRE.MatchString(l.Name):
		return badInputf("%s: limit %q: names are lower_case (a-z, 0-9, _), starting with a letter", name, l.Name)
	case slices.ContainsFunc(before, func(b PolicyLimit) bool { return b.Name == l.Name }):
		return badInputf("%s: limit %s is given twice", name, l.Name)
	case noLimit(l.Limit):
		return badInputf("%s: no limit", what)
	case (l.Identity == "") == (l.Constant == ""):
		return badInputf("%s: give an Identity (a name each request passes a value for) or a Constant (one value for every caller)", what)
	case l.Identity != "" && !nameRE.MatchString(l.Identity):
		return badInputf("%s: identity %q: names are lower_case (a-z, 0-9, _), starting with a letter", what, l.Identity)
	case l.Constant != "" && strings.ContainsAny(l.Constant, "{}"):
		return badInputf("%s: constant %q must not contain '{' or '}' (it is a hash tag)", what, l.Constant)
	case l.Unit != "" && !nameRE.MatchString(l.Unit):
		return badInputf("%s: unit %q: names are lower_case (a-z, 0-9, _), starting with a letter", what, l.Unit)
	}
	if err := l.Limit.Validate(); err != nil {
		return badInputf("%s: %s", what, err.Error())
	}
	return nil
}

// Name is the policy's name.
func (p *Policy) Name() string { return p.name }

// WithHolds returns the policy as a holding policy (docs/semantics.md,
// "Holds"): each of its limits keeps, beside its state, the holds its
// callers reserve, which count toward admission like charges until they
// are committed, released or end. Every call of a holding policy counts
// them, its decisions included, and the limiters that implement Holder
// reserve, commit, release and renew on it. Its decisions take no Force
// nor ID: a commit charges work already done, and a hold's id makes its
// operations idempotent.
func (p *Policy) WithHolds() *Policy {
	q := *p
	q.holds = true
	return &q
}

// Holds reports whether p is a holding policy (WithHolds).
func (p *Policy) Holds() bool { return p.holds }

// Limits returns the policy's limits, in order (a copy).
func (p *Policy) Limits() []PolicyLimit { return slices.Clone(p.limits) }

// Identities names the identities whose values a request passes in IDs,
// in the order of their first limit.
func (p *Policy) Identities() []string { return slices.Clone(p.identities) }

// Units names the units the policy's limits count (PolicyLimit.Unit),
// each once, in the order of their first limit; none when every limit
// counts the request's Cost.
func (p *Policy) Units() []string {
	var out []string
	for _, l := range p.limits {
		if l.Unit != "" && !slices.Contains(out, l.Unit) {
			out = append(out, l.Unit)
		}
	}
	return out
}

// Costs writes into costs (grown as needed, and returned) each limit's
// cost of req (docs/semantics.md, "Units"): req.Costs[its unit] when
// req.Costs gives the limit's unit, else req.Cost as it is (the limiters
// first make a Cost left 0 into 1, unless req is a Peek: "Amounts in
// Go"). A unit of req.Costs
// that no limit counts is refused with an error matching ErrBadInput (a
// misspelt unit would charge nothing); the limiters check each cost's
// domain after.
func (p *Policy) Costs(req Request, costs []int64) ([]int64, error) {
	costs = costs[:0]
	for _, l := range p.limits {
		c := req.Cost
		if l.Unit != "" {
			if v, ok := req.Costs[l.Unit]; ok {
				c = v
			}
		}
		costs = append(costs, c)
	}
	if len(req.Costs) > 0 {
		if u, ok := p.unknownUnit(req.Costs); ok {
			if u == "" {
				u = `""`
			}
			return costs, badInputf("%s: no limit counts the unit %s", p.name, u)
		}
	}
	return costs, nil
}

// unknownUnit is the first unit of byUnit, in order, that no limit
// counts; "" names no unit (the limits without one count Cost).
func (p *Policy) unknownUnit(byUnit map[string]int64) (string, bool) {
	var unknown []string
	for u := range byUnit {
		if u == "" || !slices.ContainsFunc(p.limits, func(l PolicyLimit) bool { return l.Unit == u }) {
			unknown = append(unknown, u)
		}
	}
	if len(unknown) == 0 {
		return "", false
	}
	slices.Sort(unknown)
	return unknown[0], true
}

// OneSlot reports whether every key of a request lies in one Redis
// Cluster slot: every limit counts the same identity, whose value is the
// hash tag of every key. A policy over several identities, or with a
// constant, may not be decided atomically on a Redis Cluster or Ring.
func (p *Policy) OneSlot() bool {
	for _, l := range p.limits {
		if l.Identity == "" || l.Identity != p.limits[0].Identity {
			return false
		}
	}
	return true
}

// Shapes reports whether one of the policy's limits is a Shaper.
func (p *Policy) Shapes() bool {
	for _, l := range p.limits {
		if Shapes(l.Limit) {
			return true
		}
	}
	return false
}

// noLimit reports whether l is nil or a nil pointer, whose value
// methods may not be called (the generated limits have value methods).
func noLimit(l Limit) bool {
	if l == nil {
		return true
	}
	v := reflect.ValueOf(l)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

func badInputf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}
