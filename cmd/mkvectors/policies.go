package main

import (
	"fmt"
	"maps"
	"math/rand"

	"github.com/limitspec/limitspec/conformance"
	"github.com/limitspec/limitspec/gen"
	"github.com/limitspec/limitspec/internal/oracle"
	"github.com/limitspec/limitspec/spec"
)

// pcall is one request of a policy scenario.
type pcall struct {
	dt        int64
	ids       map[string]string
	cost      int64
	rawCost   string
	costs     map[string]int64 // amounts by unit (docs/semantics.md, "Units")
	wrongKeys []int            // plant a value of another type at these KEYS first
	reset     bool             // delete every limit's state for ids instead
	force     bool             // the forced call: every limit consumes, even when denied
	id        string           // the request's id (docs/semantics.md, "Request ids")
	// op, hold and holdMs are a holding policy's operation, hold id and
	// hold length (docs/semantics.md, "Holds"); op empty: decide.
	op, hold string
	holdMs   int64
}

// specPolicies are the policies of spec/policies.yaml, by name.
func specPolicies() (map[string]*gen.Policy, error) {
	sp, err := gen.LoadCatalogue(spec.Files)
	if err != nil {
		return nil, err
	}
	out := map[string]*gen.Policy{}
	for _, p := range sp.Policies {
		out[p.Name] = p
	}
	return out, nil
}

// definition is a policy of scenarios.yaml as a vector writes it: its
// own limits, or those of its spec's policy with the per-call parameters
// params (limit.param); a per-call parameter params lacks is left out.
func definition(name string, d policyData, specs map[string]*gen.Policy, params map[string]int64) *conformance.Policy {
	def := &conformance.Policy{Name: name, Holds: d.Holds}
	for _, l := range d.Limits {
		def.Limits = append(def.Limits, conformance.PolicyLimit{Name: l.Name, Algorithm: l.Algorithm,
			Identity: l.Identity, Constant: l.Constant, Params: numbers(l.Params), Unit: l.Unit})
	}
	if len(d.Limits) > 0 {
		return def
	}
	for _, l := range specs[name].Limits {
		ps := map[string]int64{}
		for k, v := range l.Fixed {
			ps[k] = v
		}
		for _, prm := range l.PerCall() {
			if v, ok := params[l.Name+"."+prm.Name]; ok {
				ps[prm.Name] = v
			}
		}
		def.Limits = append(def.Limits, conformance.PolicyLimit{Name: l.Name, Algorithm: l.Alg.Name,
			Identity: l.Identity, Constant: l.Constant, Params: numbers(ps)})
	}
	return def
}

// buildPolicy replays calls through the oracle's model of the policy.
func buildPolicy(name string, def *conformance.Policy, comment string, calls []pcall) conformance.Vector {
	v := conformance.Vector{Name: def.Name + "/" + name, Policy: def, Comment: comment}
	m, mErr := oraclePolicy(def)
	var rs oracle.Requests
	t := int64(t0)
	for _, c := range calls {
		t += c.dt
		if c.reset {
			v.Steps = append(v.Steps, policyResetStep(t, c.ids, mErr, func() error { return m.Reset(c.ids) }))
			continue
		}
		dm, dErr := m, mErr
		if len(c.wrongKeys) > 0 {
			// The input is checked before any key is read: decided on a
			// fresh state, the call shows whether it is refused.
			dm, dErr = oraclePolicy(def)
		}
		v.Steps = append(v.Steps, policyRequest(dm, dErr, &rs, t, c))
	}
	return v
}

// policyResetStep resets a policy's limits for ids at t: refused by mErr (the
// policy's), or as reset says.
func policyResetStep(t int64, ids map[string]string, mErr error, reset func() error) conformance.Step {
	err := mErr
	if err == nil {
		err = reset()
	}
	return conformance.Step{T: t, IDs: ids, Reset: true, Expect: refused(err)}
}

// policyRequest decides one request of a policy at t. A request that
// plants another Redis type at its keys is decided on m, a fresh state:
// WRONGTYPE, unless its input is refused.
func policyRequest(m *oracle.Policy, mErr error, rs *oracle.Requests, t int64, c pcall) conformance.Step {
	cost := stepCost(c.cost, c.rawCost)
	s := conformance.Step{T: t, IDs: c.ids, Cost: cost, Costs: numbers(c.costs), Force: c.force, ID: c.id,
		WrongType: conformance.WrongType{Keys: c.wrongKeys}}
	s.Expect = expectOf(mErr, cost, s.WrongType.Any(), func(n int64) (oracle.PolicyResult, error) {
		costs, err := m.Amounts(n, c.costs)
		if err != nil {
			return oracle.PolicyResult{}, err
		}
		return m.DecideOnce(rs, c.ids, c.id, t, costs, c.force)
	}, policyExpect)
	return s
}

func policyExpect(r oracle.PolicyResult) conformance.Expect {
	e := resultExpect(r.Result)
	index := int64(r.Index)
	e.Index = &index
	for _, l := range r.Limits {
		e.Limits = append(e.Limits, resultExpect(l))
	}
	return e
}

// resultExpect expects every field of the contract's result but the
// tier.
func resultExpect(r oracle.Result) conformance.Expect {
	return conformance.Expect{Allowed: &r.Allowed, Limit: &r.Limit, Remaining: &r.Remaining,
		RetryAfterMs: &r.RetryAfterMs, ResetAfterMs: &r.ResetAfterMs, DelayMs: &r.DelayMs}
}

func repeat(n int, c pcall) []pcall {
	out := make([]pcall, n)
	for i := range out {
		out[i] = c
	}
	return out
}

// policyScenario is a named list of a policy's calls and the vector's
// comment.
type policyScenario struct {
	comment string
	calls   []pcall
}

// policyScenarios are a policy's scenarios from scenarios.yaml.
func policyScenarios(policy string, d policyData) (map[string]policyScenario, error) {
	out := map[string]policyScenario{}
	for name, s := range d.Scenarios {
		if s.Builder != "" {
			return nil, fmt.Errorf("%s: scenario %s: a policy's scenario has no builder", policy, name)
		}
		calls, err := expand(s.Calls, map[string]int64{"T0": t0}, policyCall)
		if err != nil {
			return nil, fmt.Errorf("%s: scenario %s: %v", policy, name, err)
		}
		out[name] = policyScenario{s.Comment, calls}
	}
	return out, nil
}

// policyBadInput are the refusals of a policy: cost, time and identity
// values out of their domains, missing and refused per-call parameters
// (of a policy of spec/policies.yaml: limit.param), and a key of each
// limit holding another Redis type.
func policyBadInput(name string, d policyData, specs map[string]*gen.Policy) []conformance.Vector {
	def := definition(name, d, specs, d.Params)
	good := map[string]string{}
	for _, id := range def.Identities() {
		good[id] = "k"
	}
	with := func(id, v string) map[string]string {
		m := maps.Clone(good)
		m[id] = v
		return m
	}
	var out []conformance.Vector
	add := func(vname, comment string, def *conformance.Policy, calls []pcall) {
		out = append(out, buildPolicy(vname, def, comment, calls))
	}
	add("bad-cost", "costs -1 and 2^53 are refused and write nothing: the next request sees fresh keys", def,
		[]pcall{{ids: good, rawCost: "-1"}, {ids: good, rawCost: "9007199254740992"}, {ids: good, cost: 1}})
	add("bad-time", "now_ms outside [0, 2^45] is refused", def,
		[]pcall{{dt: -t0 - 1, ids: good, cost: 1}, {dt: 1<<45 + 2, ids: good, cost: 1}, {dt: -(1<<45 + 1) + t0 + 1, ids: good, cost: 1}})
	for _, id := range def.Identities() {
		add("bad-identity-"+id, "identity "+id+" empty, or beginning with '}', is refused and writes nothing", def,
			[]pcall{{ids: with(id, ""), cost: 1}, {ids: with(id, "}x"), cost: 1}, {ids: good, cost: 1}})
	}
	for _, k := range sortedKeys(d.Params) {
		missing := maps.Clone(d.Params)
		delete(missing, k)
		add("bad-missing-"+k, "the parameter "+k+" left out: the whole call is refused", definition(name, d, specs, missing), []pcall{{ids: good, cost: 1}})
		zero := maps.Clone(d.Params)
		zero[k] = 0
		add("bad-below-"+k, "the parameter "+k+" 0, below its domain: the whole call is refused", definition(name, d, specs, zero), []pcall{{ids: good, cost: 1}})
	}
	// One vector per key, since a constant identity's keys are shared by
	// every call.
	key := 0
	for _, l := range def.Limits {
		s, _ := scriptsOf(l.Algorithm)
		for range s.Keys {
			key++
			add(fmt.Sprintf("bad-wrong-type-key-%d", key), fmt.Sprintf("KEYS[%d] (of limit %s) holding another Redis type, after an admission: an error, and nothing written to any key of any limit (Redis-like targets only)", key, l.Name),
				def, []pcall{{ids: good, cost: 1}, {dt: 1, ids: good, cost: 1, wrongKeys: []int{key}}})
		}
	}
	return out
}

// randomPolicy returns a random trace over a few values of each identity.
func randomPolicy(def *conformance.Policy, seed int64, n int) []pcall {
	rng := rand.New(rand.NewSource(seed))
	var out []pcall
	for range n {
		m := map[string]string{}
		for _, id := range def.Identities() {
			m[id] = fmt.Sprint(id, rng.Intn(3))
		}
		dt := []int64{0, 1, 37, 500, 1000, 30000, 3600000}[rng.Intn(7)]
		if rng.Intn(20) == 0 {
			dt = -rng.Int63n(2000)
		}
		out = append(out, pcall{dt: dt, ids: m, cost: []int64{0, 1, 1, 1, 2, 5}[rng.Intn(6)], force: rng.Intn(10) == 0})
	}
	return out
}

// policyForce is the forced-call scenario of any policy: the same
// identities throughout.
func policyForce(def *conformance.Policy) []pcall {
	m := map[string]string{}
	for _, id := range def.Identities() {
		m[id] = "k"
	}
	calls := repeat(15, pcall{ids: m, cost: 1})
	calls = append(calls, pcall{ids: m, cost: 1, force: true}, pcall{ids: m, cost: 0}, pcall{ids: m, cost: 3, force: true})
	for _, dt := range []int64{1, 1000, 60000, 3600000, 86400000} {
		calls = append(calls, pcall{dt: dt, ids: m, cost: 1})
	}
	return calls
}

// policyVectors returns every generated policy vector, with the data of
// each policy.
func policyVectors(data map[string]policyData) ([]conformance.Vector, error) {
	specs, err := specPolicies()
	if err != nil {
		return nil, err
	}
	var out []conformance.Vector
	for _, name := range sortedKeys(data) {
		d := data[name]
		def := definition(name, d, specs, d.Params)
		sc, err := policyScenarios(name, d)
		if err != nil {
			return nil, err
		}
		if d.Holds {
			out = append(out, holdingVectors(def, sc)...)
			continue
		}
		for _, n := range sortedKeys(sc) {
			out = append(out, buildPolicy(n, def, sc[n].comment, sc[n].calls))
		}
		out = append(out, buildPolicy("force", def, "forced calls: 15 requests in one ms, some denied; a forced request is charged to every limit, the one that denies included; a peek; a forced cost 3; then normal requests 1 ms, 1 s, a minute, an hour and a day later wait until the debt is paid back", policyForce(def)))
		out = append(out, buildPolicy("random", def, "a long random trace over three values of each identity, expectations from the oracle", randomPolicy(def, int64(len(name)), 300)))
		out = append(out, policyBadInput(name, d, specs)...)
	}
	return out, nil
}

// oraclePolicy is the oracle's model of def; a parameter that is no
// integer, an unknown algorithm or a refused parameter matches
// oracle.ErrBadInput, as package conformance's oracle target refuses
// them.
func oraclePolicy(def *conformance.Policy) (*oracle.Policy, error) {
	limits, err := oracleLimits(def)
	if err != nil {
		return nil, err
	}
	return oracle.NewPolicy(def.Name, limits)
}

// oracleHoldingPolicy is the oracle's model of def, a holding policy.
func oracleHoldingPolicy(def *conformance.Policy) (*oracle.HoldingPolicy, error) {
	limits, err := oracleLimits(def)
	if err != nil {
		return nil, err
	}
	return oracle.NewHoldingPolicy(def.Name, limits)
}

// oracleLimits are def's limits as the oracle takes them, their
// parameters integers.
func oracleLimits(def *conformance.Policy) ([]oracle.PolicyLimit, error) {
	var limits []oracle.PolicyLimit
	for _, l := range def.Limits {
		ints := map[string]int64{}
		for k, v := range l.Params {
			n, err := v.Int64()
			if err != nil {
				return nil, fmt.Errorf("%w: %s: parameter %s must be an integer, got %s", oracle.ErrBadInput, l.Algorithm, k, v)
			}
			ints[k] = n
		}
		limits = append(limits, oracle.PolicyLimit{Name: l.Name, Algorithm: l.Algorithm,
			Identity: l.Identity, Constant: l.Constant, Params: ints, Unit: l.Unit})
	}
	return limits, nil
}
