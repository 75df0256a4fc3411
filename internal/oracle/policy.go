package oracle

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The policies of docs/semantics.md, "Policies": several limits decide one
// request all or nothing. Each limit is a model of its own, built by New, so
// its parameter checks, its state and its clock rule are its algorithm's.

// PolicyLimit is one limit of a policy.
type PolicyLimit struct {
	Name      string // e.g. "ip_second"
	Algorithm string // an algorithm name accepted by New
	// Identity is the identity name whose value the caller passes (e.g.
	// "ip"); "" when Constant is set.
	Identity string
	// Constant is a constant identity value (e.g. "global"); "" when
	// Identity is set.
	Constant string
	// Params holds every parameter of the algorithm, fixed and per-call
	// alike.
	Params map[string]int64
	// Unit names what the limit counts ("tokens", "slots"; "" for a
	// request's cost): a request's amount of that unit, when it gives
	// one, is the limit's cost (Policy.Amounts).
	Unit string
}

// PolicyResult is a policy's decision.
type PolicyResult struct {
	// Result is the policy's result: the binding limit's, with DelayMs
	// the largest of all limits'.
	Result
	// Index is the 1-based index of the binding limit.
	Index int
	// Limits holds every limit's own result, in order.
	Limits []Result
}

// Policy is the model of one policy. Each limit keeps its own state,
// shared with no other limit, under the value of the identity it counts
// (or its constant).
type Policy struct {
	name   string
	limits []policyLimit
	ids    []string // the identity names, in order of first use
}

// policyLimit is one limit and the model holding its state.
type policyLimit struct {
	name, identity, constant, unit string
	m                              *model
}

// key is the limit's state key for the request's identity values.
func (l policyLimit) key(ids map[string]string) string {
	if l.constant != "" {
		return l.constant
	}
	return ids[l.identity]
}

// NewPolicy returns the model of a policy named name; an error matching
// ErrBadInput when a limit's algorithm or parameters are refused (its
// message names the policy and the limit), or when limits is empty, or a
// limit has both or neither of Identity and Constant, or a Constant that
// is refused as a key.
func NewPolicy(name string, limits []PolicyLimit) (*Policy, error) {
	if len(limits) == 0 {
		return nil, bad("%s: a policy needs at least one limit", name)
	}
	p := &Policy{name: name}
	seen := map[string]bool{}
	for _, l := range limits {
		m, err := newLimit(name, l)
		if err != nil {
			return nil, err
		}
		if l.Unit != "" && !isName(l.Unit) {
			return nil, bad("%s.%s: unit %q: names are lower_case, starting with a letter", name, l.Name, l.Unit)
		}
		p.limits = append(p.limits, policyLimit{name: l.Name, identity: l.Identity, constant: l.Constant, unit: l.Unit, m: m})
		if l.Identity != "" && !seen[l.Identity] {
			seen[l.Identity] = true
			p.ids = append(p.ids, l.Identity)
		}
	}
	return p, nil
}

// newLimit checks one limit of policy and returns the model of its state.
func newLimit(policy string, l PolicyLimit) (*model, error) {
	where := policy + "." + l.Name
	m, err := New(l.Algorithm, l.Params)
	if err != nil {
		return nil, named(where, err)
	}
	if (l.Identity == "") == (l.Constant == "") {
		return nil, bad("%s: exactly one of identity and constant must be set: %q, %q", where, l.Identity, l.Constant)
	}
	if l.Constant != "" {
		if err := checkKeyNow(l.Constant, 0); err != nil {
			return nil, named(where+": constant", err)
		}
	}
	switch m := m.(type) {
	case *model:
		return m, nil
	case entryModel:
		return m.model, nil
	}
	panic("oracle: New returned an unknown model")
}

// isName reports whether s is a name: a lower-case letter, then letters,
// digits and '_'.
func isName(s string) bool {
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_'):
		default:
			return false
		}
	}
	return s != ""
}

// named is err, a refusal, with its message prefixed by where.
func named(where string, err error) error {
	return bad("%s: %s", where, strings.TrimPrefix(err.Error(), ErrBadInput.Error()+": "))
}

// Identities returns the identity names the policy's limits count, in
// order of first use.
func (p *Policy) Identities() []string {
	return append([]string(nil), p.ids...)
}

// Decide decides a request of cost at nowMs for the given identity values
// (name -> value): DecideCosts with cost on every limit.
func (p *Policy) Decide(ids map[string]string, nowMs, cost int64) (PolicyResult, error) {
	return p.DecideCosts(ids, nowMs, p.Every(cost))
}

// Every is cost for every limit of the policy, as DecideCosts takes costs.
func (p *Policy) Every(cost int64) []int64 {
	costs := make([]int64, len(p.limits))
	for i := range costs {
		costs[i] = cost
	}
	return costs
}

// Amounts are the costs of a request for each limit (docs/semantics.md,
// "Units"): a limit counts byUnit[its unit] when the request gives that
// unit, else cost. A unit that no limit counts is refused (ErrBadInput),
// so that a misspelt unit charges nothing silently.
func (p *Policy) Amounts(cost int64, byUnit map[string]int64) ([]int64, error) {
	costs := p.Every(cost)
	for _, u := range sortedUnits(byUnit) {
		found := false
		for i, l := range p.limits {
			if l.unit == u {
				costs[i], found = byUnit[u], true
			}
		}
		if !found || u == "" { // "" names no unit: the limits without one count cost
			return nil, bad("%s: no limit counts the unit %s", p.name, unitName(u))
		}
	}
	return costs, nil
}

// unitName is unit u as a refusal names it: "" for none.
func unitName(u string) string {
	if u == "" {
		return `""`
	}
	return u
}

// sortedUnits are the units of byUnit in order, so that the first refused
// is always the same.
func sortedUnits(byUnit map[string]int64) []string {
	out := make([]string, 0, len(byUnit))
	for u := range byUnit {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

// DecideCosts decides a request at nowMs for the given identity values,
// costs[i] the cost of limit i. Missing or unknown identity names, an
// identity value refused as a key (empty, or beginning with '}'), now or
// a cost out of their domains, or not one cost per limit: an error
// matching ErrBadInput, nothing changed.
//
// Every limit decides its cost on its own state, writing nothing; the
// policy admits the request iff all limits do, and then every limit
// commits its decision as its algorithm alone would. When the policy
// denies, nothing is written, and a limit that would have admitted
// reports a peek (cost 0) at nowMs instead.
func (p *Policy) DecideCosts(ids map[string]string, nowMs int64, costs []int64) (PolicyResult, error) {
	if err := p.withoutHolds(); err != nil {
		return PolicyResult{}, err
	}
	out, allowed, err := p.decideEach(ids, nowMs, costs, func(i int, l policyLimit) Result { return l.m.try(l.key(ids), nowMs, costs[i]) })
	if err != nil {
		return out, err
	}
	for i, l := range p.limits {
		switch {
		case allowed:
			// Nothing has changed since the try: Decide decides alike and
			// writes what the algorithm alone would.
			if r, err := l.m.Decide(l.key(ids), nowMs, costs[i], nil); err != nil || r != out.Limits[i] {
				panic("oracle: a limit's commit differs from its try")
			}
		case out.Limits[i].Allowed:
			out.Limits[i] = l.m.try(l.key(ids), nowMs, 0)
		}
	}
	return p.compose(out, allowed), nil
}

// compose completes a decision from its limits' results: the binding
// limit's result, and DelayMs: an admitted request waits for every
// shaper, a denied one for none (the contract's delay_ms is 0 when
// denied).
func (p *Policy) compose(out PolicyResult, allowed bool) PolicyResult {
	out.Index = binding(out.Limits, allowed)
	out.Result = out.Limits[out.Index-1]
	for _, r := range out.Limits {
		if allowed {
			out.DelayMs = max(out.DelayMs, r.DelayMs)
		}
	}
	return out
}

// decideEach checks a request as Decide and Force take it, and decides
// it on every limit by each: the results, and whether every limit
// admitted.
// withoutHolds refuses the decision of a policy, without holds, of an
// in-flight limit (a HoldingPolicy counts its holds).
func (p *Policy) withoutHolds() error {
	for _, l := range p.limits {
		if err := l.m.alone(); err != nil {
			return fmt.Errorf("%s.%s: %w", p.name, l.name, err)
		}
	}
	return nil
}

func (p *Policy) decideEach(ids map[string]string, nowMs int64, costs []int64, each func(int, policyLimit) Result) (PolicyResult, bool, error) {
	if err := p.check(ids, nowMs, costs); err != nil {
		return PolicyResult{}, false, err
	}
	out := PolicyResult{Limits: make([]Result, len(p.limits))}
	allowed := true
	for i, l := range p.limits {
		out.Limits[i] = each(i, l)
		allowed = allowed && out.Limits[i].Allowed
	}
	return out, allowed, nil
}

// Force forces a request of cost at nowMs on every limit: ForceCosts
// with cost on every limit.
func (p *Policy) Force(ids map[string]string, nowMs, cost int64) (PolicyResult, error) {
	return p.ForceCosts(ids, nowMs, p.Every(cost))
}

// ForceCosts forces a request at nowMs, costs[i] on limit i, for the
// given identity values (docs/semantics.md, "Force"): each limit decides
// its cost on its own state and charges it even when it denies, whatever
// the others decide. Its input is refused as DecideCosts's, nothing
// changed.
//
// The policy's Allowed is true iff every limit admitted; each limit's
// result is its forced result; the binding limit is chosen from those as
// for Decide; DelayMs is the largest of all limits', allowed or not
// (every shaper has queued the work).
func (p *Policy) ForceCosts(ids map[string]string, nowMs int64, costs []int64) (PolicyResult, error) {
	if err := p.withoutHolds(); err != nil {
		return PolicyResult{}, err
	}
	out, allowed, err := p.decideEach(ids, nowMs, costs, func(i int, l policyLimit) Result {
		r, err := l.m.Force(l.key(ids), nowMs, costs[i], nil)
		if err != nil {
			panic("oracle: a limit refused a forced request the policy accepted: " + err.Error())
		}
		return r
	})
	if err != nil {
		return out, err
	}
	out.Index = binding(out.Limits, allowed)
	out.Result = out.Limits[out.Index-1]
	for _, r := range out.Limits {
		out.DelayMs = max(out.DelayMs, r.DelayMs)
	}
	return out, nil
}

// Reset deletes the state of every limit of the policy for the identity
// values ids (a limit with a constant identity included: it is every
// caller's); ids are refused as Decide refuses them.
func (p *Policy) Reset(ids map[string]string) error {
	if err := p.check(ids, 0, p.Every(0)); err != nil {
		return err
	}
	for _, l := range p.limits {
		l.m.Reset(l.key(ids))
	}
	return nil
}

// check refuses a request's input in the order of docs/semantics.md: the
// identity names (the arguments), their values as keys, now, the costs
// (one per limit, each in its domain).
func (p *Policy) check(ids map[string]string, now int64, costs []int64) error {
	for _, id := range p.ids {
		if _, ok := ids[id]; !ok {
			return bad("%s: missing identity %s", p.name, id)
		}
	}
	if len(ids) > len(p.ids) {
		var unknown []string
		for id := range ids {
			if !slices.Contains(p.ids, id) {
				unknown = append(unknown, id)
			}
		}
		sort.Strings(unknown)
		return bad("%s: unknown identity %s", p.name, unknown[0])
	}
	for _, id := range p.ids {
		if err := checkKeyNow(ids[id], 0); err != nil { // the key alone: now 0 is in range
			return named(p.name+": identity "+id, err)
		}
	}
	if now < 0 || now > nowMax {
		return bad("%s: now_ms out of range: %d", p.name, now)
	}
	if len(costs) != len(p.limits) {
		return bad("%s: %d costs for %d limits", p.name, len(costs), len(p.limits))
	}
	for _, cost := range costs {
		if cost < 0 || cost > costMax {
			return bad("%s: cost out of range: %d", p.name, cost)
		}
	}
	return nil
}

// peek reports whether every cost is 0: a peek, which charges nothing.
func peek(costs []int64) bool {
	for _, c := range costs {
		if c != 0 {
			return false
		}
	}
	return true
}

// try is the result of a valid request for key at now, as Decide would
// return it, writing nothing. Its string inputs are "" (meta_window in a
// policy records none); the deciders never modify the state they are given.
func (m *model) try(key string, now, cost int64) Result {
	r, _ := m.d.decide(m.trusted(key, now), now, cost, nil, false)
	return r
}

// binding is the 1-based index of the binding limit of the limits'
// results. When the policy denies: among the limits that deny, the longest
// retry_after_ms, -1 (never) longer than any wait. When it admits: the
// smallest remaining/limit, compared exactly. Ties go to the first.
func binding(rs []Result, allowed bool) int {
	best := -1
	for i, r := range rs {
		if !allowed && r.Allowed {
			continue
		}
		if best < 0 || binds(r, rs[best], allowed) {
			best = i
		}
	}
	return best + 1
}

// binds reports whether r binds strictly before b.
func binds(r, b Result, allowed bool) bool {
	if allowed {
		return ratFrac(r.Remaining, r.Limit).Cmp(ratFrac(b.Remaining, b.Limit)) < 0
	}
	switch {
	case b.RetryAfterMs == -1:
		return false
	case r.RetryAfterMs == -1:
		return true
	}
	return r.RetryAfterMs > b.RetryAfterMs
}
