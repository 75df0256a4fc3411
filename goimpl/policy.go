package goimpl

import (
	"errors"
	"slices"
	"sort"
)

// Policy decides one request by several limits at once, all or nothing,
// as the policy's Lua script does (docs/semantics.md, "Policies"): the
// request is admitted only when every limit admits it, and only then does
// any limit consume. Make one with NewPolicy; it is safe for concurrent
// use.
type Policy struct {
	name       string
	identities []string
	limits     []policyLimit
}

// PolicyResult is a policy's decision: the binding limit's Result (when
// admitted, with DelayMs the largest of all limits'), the binding limit's index from 1,
// and every limit's own Result, in order.
type PolicyResult struct {
	Result
	Index  int
	Limits []Result
}

// policyLimit is one limit of a Policy and the limiter that decides it.
type policyLimit struct {
	name, identity, constant string
	m                        policyMember
}

// policyMember is what every generated limiter offers a Policy: deciding
// a key under a lock the policy holds, writing only with commit (and,
// with force, even when it denies).
type policyMember interface {
	Windowed
	lockKey(key string)
	unlockKey(key string)
	decideLocked(key string, nowMs, cost int64, commit, force bool) Result
	resetKey(key string)
}

// policyDef is a policy of spec/policies.yaml; the generated
// policies_gen.go lists them.
type policyDef struct {
	name   string
	limits []limitDef
}

// limitDef is one limit of a policyDef.
type limitDef struct {
	name, algorithm, identity, constant string
	fixed                               map[string]int64
	perCall                             []string // parameter names
}

// NewPolicy returns the named policy of spec/policies.yaml. params are
// its per-call parameters, named limit.param as in the script's ARGV (for
// burst_quota, "daily.limit"). An unknown policy, a missing or unknown
// parameter and one its algorithm refuses: an error matching ErrBadInput.
func NewPolicy(name string, params map[string]int64) (*Policy, error) {
	def, ok := policyDefs[name]
	if !ok {
		return nil, badInput("unknown policy %q (known: %v)", name, Policies())
	}
	if err := knownPolicyParams(def, params); err != nil {
		return nil, err
	}
	p := &Policy{name: name}
	for _, ld := range def.limits {
		all := map[string]int64{}
		for k, v := range ld.fixed {
			all[k] = v
		}
		for _, prm := range ld.perCall {
			v, ok := params[ld.name+"."+prm]
			if !ok {
				return nil, badInput("%s: missing parameter %s.%s", name, ld.name, prm)
			}
			all[prm] = v
		}
		l, err := New(ld.algorithm, all)
		if err != nil {
			var ie *InputError
			if errors.As(err, &ie) {
				return nil, badInput("%s.%s: %s", name, ld.name, ie.Msg)
			}
			return nil, err
		}
		p.limits = append(p.limits, policyLimit{name: ld.name, identity: ld.identity, constant: ld.constant, m: l.(policyMember)})
		if ld.identity != "" && !slices.Contains(p.identities, ld.identity) {
			p.identities = append(p.identities, ld.identity)
		}
	}
	return p, nil
}

func knownPolicyParams(def policyDef, params map[string]int64) error {
	var names []string
	for _, ld := range def.limits {
		for _, prm := range ld.perCall {
			names = append(names, ld.name+"."+prm)
		}
	}
	for k := range params {
		if !slices.Contains(names, k) {
			return badInput("%s: unknown parameter %q (parameters: %v)", def.name, k, names)
		}
	}
	return nil
}

// Policies lists the policy names NewPolicy accepts, sorted.
func Policies() []string {
	names := make([]string, 0, len(policyDefs))
	for n := range policyDefs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Name is the policy's name.
func (p *Policy) Name() string { return p.name }

// Identities names the identities whose values Allow takes, in order of
// first use.
func (p *Policy) Identities() []string { return append([]string(nil), p.identities...) }

// LimitNames names the policy's limits, in the order of
// PolicyResult.Limits.
func (p *Policy) LimitNames() []string {
	names := make([]string, len(p.limits))
	for i, l := range p.limits {
		names[i] = l.name
	}
	return names
}

// LimitWindowsMs gives each limit's window in ms, its limiter's WindowMs
// (see Windowed; 0 for a limit that declares none), in the order of
// LimitNames: with each limit's Result.Limit, the w of its
// RateLimit-Policy.
func (p *Policy) LimitWindowsMs() []int64 {
	ws := make([]int64, len(p.limits))
	for i, l := range p.limits {
		ws[i] = l.m.WindowMs()
	}
	return ws
}

// StopSweeper stops the sweepers of every limit; see SweepStopper.
func (p *Policy) StopSweeper() {
	for _, l := range p.limits {
		if s, ok := l.m.(SweepStopper); ok {
			s.StopSweeper()
		}
	}
}

// Allow decides a request of cost at nowMs (or Now) for the identity
// values ids (name → value, one for each of Identities). Refused input is
// an error matching ErrBadInput, and changes nothing.
func (p *Policy) Allow(ids map[string]string, nowMs, cost int64) (PolicyResult, error) {
	return p.call(ids, nowMs, cost, false)
}

// Force decides as Allow, but every limit consumes the cost even when the
// policy denies, as the policy's forced script does (docs/semantics.md,
// "Force"): Allowed says whether the request would have been admitted.
func (p *Policy) Force(ids map[string]string, nowMs, cost int64) (PolicyResult, error) {
	return p.call(ids, nowMs, cost, true)
}

// call checks the input, locks every limit's key and decides.
func (p *Policy) call(ids map[string]string, nowMs, cost int64, force bool) (PolicyResult, error) {
	if p == nil || p.limits == nil {
		return PolicyResult{}, badInput("a zero Policy has no limits: make it with NewPolicy")
	}
	keys, err := p.keys(ids)
	if err != nil {
		return PolicyResult{}, err
	}
	if nowMs == Now {
		nowMs = processNow()
	}
	if nowMs < 0 || nowMs > nowMax {
		return PolicyResult{}, badInput("%s: %s%d", p.name, nowRefused, nowMs)
	}
	if cost < 0 || cost > costMax {
		return PolicyResult{}, badInput("%s: %s%d", p.name, costRefused, cost)
	}
	// Every call locks the limits' shards in the limits' order, so that
	// two calls never wait for each other in a cycle.
	for i, l := range p.limits {
		l.m.lockKey(keys[i])
	}
	defer func() {
		for i := len(p.limits) - 1; i >= 0; i-- {
			p.limits[i].m.unlockKey(keys[i])
		}
	}()
	return p.decide(keys, nowMs, cost, force), nil
}

// Reset deletes every limit's state for the identity values ids, as the
// policy's reset script does; it refuses ids as Allow does.
func (p *Policy) Reset(ids map[string]string) error {
	if p == nil || p.limits == nil {
		return badInput("a zero Policy has no limits: make it with NewPolicy")
	}
	keys, err := p.keys(ids)
	if err != nil {
		return err
	}
	for i, l := range p.limits {
		l.m.resetKey(keys[i])
	}
	return nil
}

// decide decides every limit, writing nothing, then applies every
// decision when all admit; a limit that would admit a denied request
// reports a peek. With force, every limit writes as its forced call does,
// whatever the others decide: limits never share state, so each may
// decide and write in turn.
func (p *Policy) decide(keys []string, nowMs, cost int64, force bool) PolicyResult {
	res := make([]Result, len(p.limits))
	all := true
	for i, l := range p.limits {
		res[i] = l.m.decideLocked(keys[i], nowMs, cost, force, force)
		all = all && res[i].Allowed
	}
	for i, l := range p.limits {
		switch {
		case force: // each limit has written already
		case all:
			l.m.decideLocked(keys[i], nowMs, cost, true, false)
		case res[i].Allowed:
			res[i] = l.m.decideLocked(keys[i], nowMs, 0, false, false)
		}
	}
	b := binding(res, all)
	out := PolicyResult{Result: res[b], Index: b + 1, Limits: res}
	out.DelayMs = 0 // denied: a denial waits for nothing
	if all || force {
		for _, r := range res {
			out.DelayMs = max(out.DelayMs, r.DelayMs)
		}
	}
	return out
}

// binding is the index of the binding limit: when denied, the longest
// wait (-1, never, the longest); when admitted, the least remaining
// relative to its limit; ties to the first.
func binding(res []Result, all bool) int {
	b := -1
	for i, r := range res {
		switch {
		case all:
			if b < 0 || ratioLess(r.Remaining, r.Limit, res[b].Remaining, res[b].Limit) {
				b = i
			}
		case !r.Allowed && (b < 0 || longer(r.RetryAfterMs, res[b].RetryAfterMs)):
			b = i
		}
	}
	return b
}

// ratioLess reports whether a/b < c/d exactly, for a, c >= 0 and
// b, d >= 1.
func ratioLess(a, b, c, d int64) bool {
	for {
		qa, qc := a/b, c/d
		if qa != qc {
			return qa < qc
		}
		a, c = a-qa*b, c-qc*d
		if a == 0 || c == 0 {
			return a == 0 && c != 0
		}
		a, b, c, d = d, c, b, a // a/b < c/d when d/c < b/a
	}
}

// longer reports whether the wait a is longer than b, where -1 is never.
func longer(a, b int64) bool { return a != b && (a == -1 || (b != -1 && a > b)) }

// keys returns each limit's key: its identity's value, or its constant.
func (p *Policy) keys(ids map[string]string) ([]string, error) {
	for name := range ids {
		if !slices.Contains(p.identities, name) {
			return nil, badInput("%s: unknown identity %q (identities: %v)", p.name, name, p.identities)
		}
	}
	keys := make([]string, len(p.limits))
	for i, l := range p.limits {
		if l.constant != "" {
			keys[i] = l.constant
			continue
		}
		v, ok := ids[l.identity]
		switch {
		case !ok:
			return nil, badInput("%s: missing identity %s", p.name, l.identity)
		case v == "":
			return nil, badInput("%s: "+identityEmpty, p.name, l.identity)
		case v[0] == '}':
			return nil, badInput("%s: "+identityBrace, p.name, l.identity)
		}
		keys[i] = v
	}
	return keys, nil
}

// policyDefs are the policies of spec/policies.yaml by name; the
// generated policies_gen.go fills it in.
var policyDefs = map[string]policyDef{}
