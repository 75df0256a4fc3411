package redislimit

import (
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/kit"
)

// A plan is the script call of one limit or one policy with everything
// no request changes prepared once: its scripts, each key's name after
// its hash tag, and ARGV after the request's own arguments, boxed as
// go-redis takes them. A request's call then builds only its keys' hash
// tags, now_ms, cost, force and inputs (see call.go). A plan does not
// change once made, and is shared by concurrent calls.
type plan struct {
	decide, reset *script
	// scripts are a limit's (for its views); nil for a policy.
	scripts *kit.Scripts
	// tails are the keys' names after "{" and the hash tag
	// (kit.Scripts.KeyTails); of[i] is the index of key i's hash tag
	// among the call's (see tags), nil for a limit, whose keys share
	// one.
	tails []string
	of    []int
	// tailBytes is the length of the tails together; numKeys is
	// len(tails), boxed.
	tailBytes int
	numKeys   any
	// inputs name a limit's per-call inputs, ARGV after force.
	inputs []string
	// params are ARGV after the inputs: a limit's parameters, or a
	// policy's limits (limitcall.PolicyTemplate.Limits); a reset's whole ARGV,
	// a view's after now_ms.
	params []any
	// names and limits are each limit's, for Result.Limits; alg is a
	// limit's algorithm's name, which its key's refusals begin with.
	names  []string
	limits []limitspec.Limit
	units  []string // a policy's limits' (PolicyLimit.Unit)
	// counts refuses every decision of an in-flight limit alone, or of a
	// policy without holds that holds one (limitcall.CheckCounts).
	counts error
	alg    string
	// A policy's plan: the policy, its identities, and the constants of
	// its limits that count one: a call's hash tags are the identities'
	// values, then the constants.
	policy     *limitspec.Policy
	identities []string
	constants  []string
	// holds: a holding policy's plan, whose calls run the holds script
	// (holds.go); resets is the plan of its reset, the policy's without
	// holds: a reset deletes the limits' state, not their holds.
	holds  bool
	resets *plan
	// composed is a policy's own script, composed for it (limitcall.Composed):
	// the same decisions as decide's, its parameters written in, taking no
	// ARGV after the request's own. Calls by EVALSHA run it; by FCALL,
	// the library's decide, with params.
	composed *script
}

// limitPlan is lim's plan, lim checked (Limit.Validate, and an
// algorithm whose scripts are linked in).
func limitPlan(lim limitspec.Limit) (*plan, error) {
	s, args, err := scriptsOf(lim)
	if err != nil {
		return nil, err
	}
	params := kit.Decimal(args)
	p := &plan{decide: scriptOf(s.Library, s.Decide), reset: scriptOf(s.Library, s.Reset), scripts: s,
		tails: s.KeyTails("", params), inputs: s.Inputs, params: boxed(params),
		names: []string{lim.Algorithm().String()}, limits: []limitspec.Limit{lim}, alg: lim.Algorithm().Name}
	p.count()
	p.counts = limitcall.CheckCounts(lim, nil)
	return p, nil
}

// scriptsOf returns the scripts of lim's algorithm and lim's parameters
// as they take them, lim checked.
func scriptsOf(lim limitspec.Limit) (*kit.Scripts, []int64, error) {
	s, ok := kit.LookupScripts(lim.Algorithm())
	if !ok {
		return nil, nil, kit.BadInput("%s: no scripts of this algorithm are linked in (%T is not a limit of a generated package)", lim.Algorithm(), lim)
	}
	args, err := s.Args(lim)
	return s, args, err
}

// policyPlan is p's plan (limitcall.NewPolicyTemplate), p checked: the policy
// script of its library, every limit's keys, and ARGV for each limit its
// algorithm, name (:<policy>:<limit>), number of parameters and parameters.
func policyPlan(p *limitspec.Policy) (*plan, error) {
	t, err := limitcall.NewPolicyTemplate(p)
	if err != nil {
		return nil, err
	}
	pl := &plan{decide: scriptOf(t.Library.Name, t.Library.Policy), reset: scriptOf(t.Library.Name, t.Library.PolicyReset),
		tails: t.Tails, params: boxed(t.Limits), policy: p, identities: p.Identities(), counts: limitcall.CheckCounts(nil, p)}
	c := t.Composed(p)
	pl.composed = &script{name: c.Name, lib: t.Library.Name, sha: c.SHA1, source: c.Source}
	if p.Holds() {
		pl.decide, pl.holds = scriptOf(t.Library.Name, t.Library.Holds), true
		plain, err := limitspec.NewPolicy(p.Name(), p.Limits()...)
		if err != nil {
			return nil, err
		}
		if pl.resets, err = policyPlan(plain); err != nil {
			return nil, err
		}
	}
	tag := make([]int, 0, len(p.Limits())) // each limit's
	for _, l := range p.Limits() {
		pl.names, pl.limits, pl.units = append(pl.names, l.Name), append(pl.limits, l.Limit), append(pl.units, l.Unit)
		if l.Identity != "" {
			tag = append(tag, slices.Index(pl.identities, l.Identity))
			continue
		}
		tag = append(tag, len(pl.identities)+len(pl.constants))
		pl.constants = append(pl.constants, l.Constant)
	}
	for _, limit := range t.Of {
		pl.of = append(pl.of, tag[limit])
	}
	pl.count()
	return pl, nil
}

// count sets the plan's tailBytes and numKeys.
func (p *plan) count() {
	for _, t := range p.tails {
		p.tailBytes += len(t)
	}
	p.numKeys = len(p.tails)
}

// boxed is strs as go-redis arguments, each boxed once.
func boxed(strs []string) []any {
	out := make([]any, len(strs))
	for i, s := range strs {
		out[i] = s
	}
	return out
}

// script is a script a call runs, with its second argument for each way
// of running it boxed once: EVALSHA's SHA1, EVAL's source, FCALL's
// function (the library's name, "_", the script's).
type script struct {
	name                  string
	lib                   string
	sha, source, function any
}

// scripts holds the script of each library's kit.Script (a scriptKey),
// made once: the registered scripts are few, and never change.
var scripts sync.Map

type scriptKey struct{ lib, name, sha string }

// scriptOf is the script s of the library lib.
func scriptOf(lib string, s kit.Script) *script {
	key := scriptKey{lib, s.Name, s.SHA1}
	if sc, ok := scripts.Load(key); ok {
		return sc.(*script)
	}
	sc, _ := scripts.LoadOrStore(key, &script{name: s.Name, lib: lib, sha: s.SHA1, source: s.Source, function: lib + "_" + s.Name})
	return sc.(*script)
}

// rememberedPlans is the most plans of limits, and of policies, a
// Limiter remembers.
const rememberedPlans = 16

// plans remembers the plans of the first rememberedPlans distinct
// limits, and policies, a Limiter decides, for good (a service decides
// by a few plans), and never more, so that it never allocates again nor
// makes callers write to one place in turn; any other limit or policy
// is planned at each call. A limit is remembered by its value, a
// generated limit being a plain value whose plan depends on that value
// alone (a pointer to one is not remembered: what it points to may
// change); a policy by its pointer, a Policy never changing once made.
type plans struct {
	limits   remembered[limitspec.Limit]
	policies remembered[*limitspec.Policy]
}

// limit is lim's plan: remembered, or made (lim checked) and remembered
// while there is room.
func (ps *plans) limit(lim limitspec.Limit) (*plan, error) {
	if p := ps.limits.get(lim); p != nil {
		return p, nil
	}
	p, err := limitPlan(lim)
	if err == nil && reflect.TypeOf(lim).Kind() != reflect.Pointer && reflect.TypeOf(lim).Comparable() {
		ps.limits.add(lim, p)
	}
	return p, err
}

// policy is pol's plan: remembered, or made (pol checked) and
// remembered while there is room.
func (ps *plans) policy(pol *limitspec.Policy) (*plan, error) {
	if p := ps.policies.get(pol); p != nil {
		return p, nil
	}
	p, err := policyPlan(pol)
	if err == nil {
		ps.policies.add(pol, p)
	}
	return p, err
}

// remembered holds up to rememberedPlans plans by key; it is safe for
// concurrent use. Its keys are of comparable types only (see plans), so
// that comparing one with any other key never panics.
type remembered[K comparable] struct {
	known atomic.Pointer[[]planOf[K]]
}

type planOf[K comparable] struct {
	key  K
	plan *plan
}

// get is k's plan, nil when it is not remembered.
func (r *remembered[K]) get(k K) *plan {
	known := r.known.Load()
	if known == nil {
		return nil
	}
	for _, e := range *known {
		if e.key == k {
			return e.plan
		}
	}
	return nil
}

// add remembers k's plan p, unless k is remembered or there is no room.
func (r *remembered[K]) add(k K, p *plan) {
	for {
		old := r.known.Load()
		var known []planOf[K]
		if old != nil {
			known = *old
		}
		if len(known) >= rememberedPlans || r.get(k) != nil {
			return
		}
		next := append(known[:len(known):len(known)], planOf[K]{k, p})
		if r.known.CompareAndSwap(old, &next) {
			return
		}
	}
}
