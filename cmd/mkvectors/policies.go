package main

import (
	"encoding/json"
	"fmt"
	"math/rand"

	"github.com/limitspec/limitspec/internal/conformance"
	"github.com/limitspec/limitspec/internal/oracle"
	"github.com/limitspec/limitspec/lua"
)

// policyVector is a vector of a policy: its per-call parameters, named
// limit.param, and steps that give identities instead of a key.
type policyVector struct {
	Name    string                     `json:"name"`
	Policy  string                     `json:"policy"`
	Comment string                     `json:"comment,omitempty"`
	Params  map[string]json.RawMessage `json:"params"`
	Steps   []policyStep               `json:"steps"`
}

type policyStep struct {
	T         int64             `json:"t_ms"`
	IDs       map[string]string `json:"ids"`
	Cost      json.RawMessage   `json:"cost,omitempty"`
	Reset     bool              `json:"reset,omitempty"`
	Force     bool              `json:"force,omitempty"`
	WrongType any               `json:"wrong_type,omitempty"`
	Expect    map[string]any    `json:"expect"`
}

// pcall is one request of a policy scenario.
type pcall struct {
	dt        int64
	ids       map[string]string
	cost      int64
	rawCost   string
	wrongKeys []int // plant a value of another type at these KEYS first
	reset     bool  // delete every limit's state for ids instead
	force     bool  // the forced call: every limit consumes, even when denied
}

// buildPolicy replays calls through the oracle's model of the policy,
// made from its definition in package lua.
func buildPolicy(name, policy, comment string, params map[string]int64, calls []pcall) (policyVector, error) {
	if _, ok := lua.LookupPolicy(policy); !ok {
		return policyVector{}, fmt.Errorf("no policy %s", policy)
	}
	v := policyVector{Name: policy + "/" + name, Policy: policy, Comment: comment, Params: intParams(params)}
	m, mErr := conformance.OraclePolicy(policy, params)
	t := int64(t0)
	for _, c := range calls {
		t += c.dt
		if c.reset {
			s := policyStep{T: t, IDs: c.ids, Reset: true, Expect: map[string]any{"error": true}}
			if mErr == nil && m.Reset(c.ids) == nil {
				s.Expect = map[string]any{"error": false}
			}
			v.Steps = append(v.Steps, s)
			continue
		}
		s := policyStep{T: t, IDs: c.ids, Cost: rawInt(c.cost), Force: c.force}
		if c.rawCost != "" {
			s.Cost = json.RawMessage(c.rawCost)
		}
		if len(c.wrongKeys) > 0 {
			s.WrongType = c.wrongKeys
		}
		var n int64
		costOK := json.Unmarshal(s.Cost, &n) == nil
		s.Expect = map[string]any{"error": true}
		if mErr == nil && costOK && s.WrongType == nil {
			decide := m.Decide
			if c.force {
				decide = m.Force
			}
			if r, err := decide(c.ids, t, n); err == nil {
				s.Expect = policyExpect(r)
			}
		}
		v.Steps = append(v.Steps, s)
	}
	return v, nil
}

func policyExpect(r oracle.PolicyResult) map[string]any {
	e := resultExpect(r.Result)
	e["index"] = r.Index
	var limits []map[string]any
	for _, l := range r.Limits {
		limits = append(limits, resultExpect(l))
	}
	e["limits"] = limits
	return e
}

func resultExpect(r oracle.Result) map[string]any {
	return map[string]any{
		"allowed": r.Allowed, "limit": r.Limit, "remaining": r.Remaining,
		"retry_after_ms": r.RetryAfterMs, "reset_after_ms": r.ResetAfterMs, "delay_ms": r.DelayMs,
	}
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
// values out of their domains, missing and refused per-call parameters,
// and a key of each limit holding another Redis type.
func policyBadInput(policy string, params map[string]int64) []policyVector {
	p, _ := lua.LookupPolicy(policy)
	good := map[string]string{}
	for _, id := range p.Identities {
		good[id] = "k"
	}
	with := func(id, v string) map[string]string {
		m := map[string]string{}
		for k, x := range good {
			m[k] = x
		}
		m[id] = v
		return m
	}
	var out []policyVector
	add := func(name, comment string, params map[string]int64, calls []pcall) {
		v, _ := buildPolicy(name, policy, comment, params, calls)
		out = append(out, v)
	}
	add("bad-cost", "costs -1 and 2^53 are refused and write nothing: the next request sees fresh keys", params,
		[]pcall{{ids: good, rawCost: "-1"}, {ids: good, rawCost: "9007199254740992"}, {ids: good, cost: 1}})
	add("bad-time", "now_ms outside [0, 2^45] is refused", params,
		[]pcall{{dt: -t0 - 1, ids: good, cost: 1}, {dt: 1<<45 + 2, ids: good, cost: 1}, {dt: -(1<<45 + 1) + t0 + 1, ids: good, cost: 1}})
	for _, id := range p.Identities {
		add("bad-identity-"+id, "identity "+id+" empty, or beginning with '}', is refused and writes nothing", params,
			[]pcall{{ids: with(id, ""), cost: 1}, {ids: with(id, "}x"), cost: 1}, {ids: good, cost: 1}})
	}
	for k := range params {
		missing := map[string]int64{}
		for k2, v := range params {
			if k2 != k {
				missing[k2] = v
			}
		}
		add("bad-missing-"+k, "per-call parameter "+k+" missing", missing, []pcall{{ids: good, cost: 1}})
		zero := map[string]int64{k: 0}
		for k2, v := range params {
			if k2 != k {
				zero[k2] = v
			}
		}
		add("bad-below-"+k, "per-call parameter "+k+" 0, below its domain: the whole call is refused", zero, []pcall{{ids: good, cost: 1}})
	}
	// One vector per key, since a constant identity's keys are shared by
	// every call.
	key := 0
	for _, l := range p.Limits {
		for range l.Keys {
			key++
			add(fmt.Sprintf("bad-wrong-type-key-%d", key), fmt.Sprintf("KEYS[%d] (of limit %s) holding another Redis type, after an admission: an error, and nothing written to any key of any limit (Redis-like targets only)", key, l.Name),
				params, []pcall{{ids: good, cost: 1}, {dt: 1, ids: good, cost: 1, wrongKeys: []int{key}}})
		}
	}
	return out
}

// randomPolicy returns a random trace over a few values of each identity.
func randomPolicy(policy string, seed int64, n int) []pcall {
	p, _ := lua.LookupPolicy(policy)
	rng := rand.New(rand.NewSource(seed))
	var out []pcall
	for range n {
		m := map[string]string{}
		for _, id := range p.Identities {
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
func policyForce(p lua.Policy) []pcall {
	m := map[string]string{}
	for _, id := range p.Identities {
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
func policyVectors(data map[string]policyData) ([]policyVector, error) {
	var out []policyVector
	for _, p := range lua.Policies {
		params := data[p.Name].Params
		sc, err := policyScenarios(p.Name, data[p.Name])
		if err != nil {
			return nil, err
		}
		for _, n := range sortedKeys(sc) {
			v, err := buildPolicy(n, p.Name, sc[n].comment, params, sc[n].calls)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		v, err := buildPolicy("force", p.Name, "forced calls: 15 requests in one ms, some denied; a forced request is charged to every limit, the one that denies included; a peek; a forced cost 3; then normal requests 1 ms, 1 s, a minute, an hour and a day later wait until the debt is paid back", params, policyForce(p))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		v, err = buildPolicy("random", p.Name, "a long random trace over three values of each identity, expectations from the oracle", params, randomPolicy(p.Name, int64(len(p.Name)), 300))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		out = append(out, policyBadInput(p.Name, params)...)
	}
	return out, nil
}
