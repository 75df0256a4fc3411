package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"strings"

	"github.com/limitspec/limitspec/conformance"
	"github.com/limitspec/limitspec/internal/oracle"
)

// algorithmVectors returns every generated vector of an algorithm: each
// parameter set's scenarios and random trace, then the refused input and
// the domain's edges on the first parameter set.
func algorithmVectors(a algorithm) ([]conformance.Vector, error) {
	if oracle.InFlight(a.name) {
		return inFlightVectors(a)
	}
	var out []conformance.Vector
	var changed []string
	for i, p := range a.Params {
		sym, err := symbols(a, p)
		if err != nil {
			return nil, err
		}
		sc, err := algorithmScenarios(a, sym)
		if err != nil {
			return nil, err
		}
		for _, n := range sortedKeys(sc) {
			out = append(out, build(fmt.Sprintf("%s-p%d", n, i+1), a, sc[n].comment+fmt.Sprintf(" (parameter set %d)", i+1), numbers(p), sc[n].calls))
		}
		out = append(out, randomVector(a, p, sym["L"], i))
		vs, measured, err := limitChangeVectors(a, p, sym["L"], i)
		if err != nil {
			return nil, err
		}
		out, changed = append(out, vs...), append(changed, measured...)
	}
	if err := checkMeasuresChanged(a, changed); err != nil {
		return nil, err
	}
	out = append(out, badInput(a)...)
	domain, err := domainVectors(a)
	if err != nil {
		return nil, err
	}
	return append(out, domain...), nil
}

// algorithmScenarios returns the edge scenarios of one parameter set: the
// generic ones, followed by read-backs where the algorithm has them, and
// the algorithm's own from scenarios.yaml.
func algorithmScenarios(a algorithm, sym map[string]int64) (map[string]scenario, error) {
	out := genericScenarios(sym["L"])
	if a.hasEntries() {
		for n, s := range out {
			out[n] = scenario{s.comment + "; each request is followed by a read-back of its key's entries", withViews(s.calls, 1)}
		}
	}
	for name, s := range a.Scenarios {
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s: scenario %s is a generic one", a.name, name)
		}
		calls, err := algorithmScenarioCalls(s, sym)
		if err != nil {
			return nil, fmt.Errorf("%s: scenario %s: %v", a.name, name, err)
		}
		out[name] = scenario{s.Comment, calls}
	}
	return out, nil
}

// genericScenarios are the edge scenarios of every algorithm, from its
// limit L.
func genericScenarios(L int64) map[string]scenario {
	out := limitScenarios(L)
	maps.Copy(out, stateScenarios(L))
	maps.Copy(out, clockScenarios(L))
	return out
}

// burst is n requests of cost 1 for key in one ms.
func burst(key string, n int64) []call {
	var cs []call
	for i := int64(0); i < n; i++ {
		cs = append(cs, call{dt: 0, key: key, cost: 1})
	}
	return cs
}

// limitScenarios probe the limit: window edges, one ms, peeks, costs,
// idle gaps and two keys.
func limitScenarios(L int64) map[string]scenario {
	out := map[string]scenario{}
	// Window edges: fill up, then probe the last ms before and the first ms
	// after a 1000 ms boundary (t0 is a multiple of 1000 ms and of 60000 ms).
	edge := append([]call{{dt: 999 - 100, key: "k", cost: 0}}, burst("k", L+1)...)
	edge = append(edge, call{dt: 100, key: "k", cost: 1}, call{dt: 1, key: "k", cost: 1}, call{dt: 58999, key: "k", cost: 1}, call{dt: 1, key: "k", cost: 1}, call{dt: 999, key: "k", cost: 1}, call{dt: 1, key: "k", cost: 1})
	out["window-edges"] = scenario{"fills the limit at t0+899, then probes the last ms of a 1 s window (t0+999), the first of the next (t0+1000), and the same around the minute t0+60000/t0+61000", edge}
	out["same-ms"] = scenario{"several requests in one ms until denied, then one ms later", append(burst("k", L+2), call{dt: 1, key: "k", cost: 1})}
	out["peek"] = scenario{"cost 0 on a fresh key, after spending, and when exhausted: reports, consumes nothing, writes nothing",
		append(append([]call{{key: "k", cost: 0}, {key: "k", cost: 1}, {dt: 1, key: "k", cost: 0}}, burst("k", L)...), call{key: "k", cost: 0}, call{dt: 5, key: "k", cost: 0})}
	out["cost-above-limit"] = scenario{"a cost above the limit is denied with retry_after_ms -1, fresh and after use; the limit itself is admitted on a full key",
		[]call{{key: "k", cost: L + 1}, {key: "k", cost: L}, {dt: 1, key: "k", cost: L + 1}, {dt: 1, key: "k", cost: 1 << 40}, {dt: 3600000, key: "k", cost: L}}}
	out["idle-gaps"] = scenario{"long idle gaps: a day, a month, a year", append(append(burst("k", L), call{dt: 86400000, key: "k", cost: 1}, call{dt: 30 * 86400000, key: "k", cost: L}), call{dt: 365 * 86400000, key: "k", cost: 1})}
	inter := []call{}
	for i := int64(0); i < 2*L+4; i++ {
		inter = append(inter, call{dt: i % 3 * 7, key: []string{"alice", "bob"}[i%2], cost: 1})
	}
	out["interleaved-keys"] = scenario{"two keys interleaved: each has its own state", inter}
	return out
}

// stateScenarios reset a key's state and force calls past the limit.
func stateScenarios(L int64) map[string]scenario {
	out := map[string]scenario{}
	reset := append(append(burst("k", L), call{key: "k", reset: true}, call{key: "k", cost: L}, call{dt: 1, key: "fresh", reset: true}), burst("other", L)...)
	reset = append(reset, call{key: "other", reset: true}, call{key: "", reset: true}, call{key: "}x", reset: true}, call{key: "other", cost: 0})
	out["reset"] = scenario{"a full key reset: the limit is admitted at once, as on a fresh key; resetting a key that has no state deletes nothing; an empty key or one beginning with '}' is refused and deletes nothing", reset}
	force := append(burst("k", L), call{key: "k", cost: 1, force: true}, call{key: "k", cost: 0}, call{dt: 1, key: "k", cost: L, force: true},
		call{key: "k", cost: 1, force: true}, call{dt: 1, key: "k", cost: 1}, call{dt: 1, key: "k", cost: 0, force: true})
	for _, dt := range []int64{500, 1000, 60000, 3600000} {
		force = append(force, call{dt: dt, key: "k", cost: 1})
	}
	force = append(force, call{key: "huge", cost: 1 << 40, force: true}, call{dt: 1, key: "huge", cost: 1}, call{key: "ok", cost: 1, force: true},
		call{key: "peek", cost: 0, force: true}, call{key: "peek", cost: L})
	out["retry"] = scenario{"request ids (docs/semantics.md, \"Request ids\"): a charged request's retry gets its reply again and charges nothing, 5 ms later and with the key full; a denied request is not remembered; a retry with another cost is refused; a forced charge is replayed; a peek with an id writes nothing; an id of 129 bytes is refused; the same id under another key is another request; past REQUEST_MS (60 s), or more than MAX_SKEW_MS behind, the id decides afresh", retryCalls(L)}
	out["force"] = scenario{"forced calls: on a full key, cost 1 is charged though denied; cost limit is charged up to twice the limit; one more charges nothing; a normal request then waits until the debt is paid back (probed after 500 ms, 1 s, a minute, an hour); a forced cost 2^40 on a fresh key is charged up to twice the limit; a forced call that would be admitted is an admission; a forced peek writes nothing", force}
	return out
}

// clockScenarios step the clock back, to the edge of the trusted skew,
// and far ahead and behind.
func clockScenarios(L int64) map[string]scenario {
	out := map[string]scenario{}
	back := append(burst("k", L-1), call{dt: 500, key: "k", cost: 1}, call{dt: -400, key: "k", cost: 1}, call{dt: -5000, key: "k", cost: 0}, call{dt: 3000, key: "k", cost: 1}, call{dt: -70000, key: "k", cost: 1}, call{dt: 140000, key: "k", cost: 1})
	out["clock-backwards"] = scenario{"requests earlier than the key's last admission by at most MAX_SKEW_MS (60 s) are decided at that admission's time, durations still counting from the caller's clock; 70 s behind, the key is decided as if it had no state", back}
	skew := append(burst("k", L), call{dt: -oracle.MaxSkewMs, key: "k", cost: 1}, call{dt: -1, key: "k", cost: 1}, call{dt: oracle.MaxSkewMs + 1, key: "k", cost: 0})
	out["clock-skew-edge"] = scenario{"a full key, then a request MAX_SKEW_MS (60000 ms) behind its last admission (trusted: decided at that time), one 1 ms further behind (not trusted: decided as a fresh key, which it replaces), and a peek back at the first time", skew}
	ahead := []call{{at: at(1 << 45), key: "k", cost: 1}, {at: at(t0), key: "k", cost: 1}, {dt: 1, key: "k", cost: 0}, {at: at(1 << 45), key: "k", cost: 1}, {at: at(t0 + 2), key: "k", cost: L}}
	out["clock-far-ahead"] = scenario{"an admission at now_ms 2^45 (about the year 3085), then requests at t0: one wrong clock does not hold the key; each side decides the other's state as stale or long past", ahead}
	behind := append(burst("k", L), call{at: at(0), key: "k", cost: 1}, call{at: at(t0 + 1), key: "k", cost: 1}, call{dt: 1, key: "k", cost: 0})
	out["clock-far-behind"] = scenario{"a full key at t0, then an admission at now_ms 0 (decided as a fresh key, its TTL counted from its own clock), then requests at t0 again: the state written at 0 is long past", behind}
	return out
}

// requestThenPeek is the calls of a vector that only checks whether its
// parameters are refused.
func requestThenPeek() []call { return []call{{key: "k", cost: 1}, {dt: 1, key: "k", cost: 0}} }

// badInput returns the generic refused-input vectors of an algorithm, on
// its first parameter set: costs, keys, times and wrong types, and each
// parameter missing, out of its domain and not an integer.
func badInput(a algorithm) []conformance.Vector {
	p := a.Params[0]
	var out []conformance.Vector
	add := func(name, comment string, params map[string]json.Number, calls []call) {
		out = append(out, build(name, a, comment, params, calls))
	}
	ok := numbers(p)
	add("bad-negative-cost", "cost -1 is refused and writes nothing: the next request sees a fresh key",
		ok, []call{{key: "k", rawCost: "-1"}, {key: "k", cost: 1}})
	add("bad-non-integer-cost", "cost 1.5 and 1e3 are refused", ok,
		[]call{{key: "k", rawCost: "1.5"}, {key: "k", rawCost: "1e3"}, {key: "k", cost: 1}})
	add("bad-huge-cost", "cost 2^53 cannot be represented exactly in Lua and is refused; 2^53-1 is valid",
		ok, []call{{key: "k", rawCost: "9007199254740992"}, {key: "k", cost: 1<<53 - 1}})
	add("bad-empty-key", "the empty key is refused: {} is no hash tag", ok, []call{{key: "", cost: 1}, {key: "k", cost: 1}})
	add("bad-time", "now_ms outside [0, 2^45] is refused", ok, []call{{dt: -t0 - 1, key: "k", cost: 1}, {dt: t0 + 1, key: "k", cost: 1}, {dt: 1<<45 - t0 + 1, key: "k", cost: 1}})
	add("bad-wrong-type", "a state key holding another Redis type is an error (Redis-like targets only)", ok,
		[]call{{key: "k", cost: 1}, {key: "other", cost: 1, wrongType: true}})
	if n := len(a.scripts.Keys); n > 1 {
		var each []call
		for i := 1; i <= n; i++ {
			k := fmt.Sprint("k", i)
			each = append(each, call{key: k, cost: 1}, call{dt: 1, key: k, cost: 1, wrongKeys: []int{i}},
				call{key: fmt.Sprint("fresh", i), cost: 1, wrongKeys: []int{i}})
		}
		add("bad-wrong-type-each-key", "each state key on its own holding another Redis type, after an admission and on a fresh key: an error, and nothing written to the other keys (Redis-like targets only)", ok, each)
	}
	add("bad-key-brace", "a key beginning with '}' is refused: the hash tag of {}x}:... would be empty, and a cluster would spread the call's keys over slots", ok,
		[]call{{key: "}x", cost: 1}, {key: "}", cost: 1}, {key: "x}", cost: 1}})
	return append(out, badParams(a)...)
}

// badParams returns, for each parameter of an algorithm, its first
// parameter set with that parameter missing (unless optional), just
// outside its domain, and not an integer.
func badParams(a algorithm) []conformance.Vector {
	p := a.Params[0]
	names, lo, hi := oracle.Params(a.name)
	var out []conformance.Vector
	add := func(name, comment string, params map[string]json.Number) {
		out = append(out, build(name, a, comment, params, requestThenPeek()))
	}
	for i, n := range names {
		if !oracle.Optional(a.name, n) {
			missing := numbers(p)
			delete(missing, n)
			add("bad-missing-"+n, "parameter "+n+" missing", missing)
		}
		below := numbers(p)
		below[n] = number(lo[i] - 1)
		add("bad-below-"+n, fmt.Sprintf("parameter %s below its domain [%d, %d]", n, lo[i], hi[i]), below)
		above := numbers(p)
		above[n] = number(hi[i] + 1)
		add("bad-above-"+n, fmt.Sprintf("parameter %s above its domain [%d, %d]", n, lo[i], hi[i]), above)
		frac := numbers(p)
		frac[n] = json.Number("2.5")
		add("bad-fraction-"+n, "parameter "+n+" not an integer", frac)
	}
	return out
}

// domainVectors returns an algorithm's vectors at the edges of its input
// domains from scenarios.yaml: its first parameter set, some values
// replaced.
func domainVectors(a algorithm) ([]conformance.Vector, error) {
	sym, err := symbols(a, a.Params[0])
	if err != nil {
		return nil, err
	}
	var out []conformance.Vector
	for _, name := range sortedKeys(a.Domain) {
		d := a.Domain[name]
		params := numbers(a.Params[0])
		for k, v := range d.Params {
			params[k] = number(v)
		}
		calls := requestThenPeek()
		if d.Calls != nil {
			if calls, err = expand(d.Calls, sym, algorithmCall); err != nil {
				return nil, fmt.Errorf("%s: %s: %v", a.name, name, err)
			}
		}
		out = append(out, build(name, a, d.Comment, params, calls))
	}
	return out, nil
}

// randomVector is the random trace of the i-th parameter set p, whose
// limit is L.
func randomVector(a algorithm, p map[string]int64, L int64, i int) conformance.Vector {
	calls := random(L, int64(1000*i+len(a.name)), 400)
	comment := "a long random trace, expectations from the oracle"
	if a.hasEntries() {
		calls = withViews(calls, 8)
		comment += "; every 8th request is followed by a read-back of its key's entries"
	}
	return build(fmt.Sprintf("random-p%d", i+1), a, comment, numbers(p), calls)
}

// random returns a long random trace: several keys, costs from 0 to above
// the limit L, gaps from 0 ms to days, and the clock sometimes stepping
// back.
func random(L int64, seed int64, n int) []call {
	rng := rand.New(rand.NewSource(seed))
	keys := []string{"k1", "k2", "k3", "user:42"}
	var calls []call
	for i := 0; i < n; i++ {
		c := call{key: keys[rng.Intn(len(keys))], cost: rng.Int63n(min(L, 4) + 1)}
		switch r := rng.Intn(100); {
		case r < 40:
			c.dt = 0
		case r < 80:
			c.dt = rng.Int63n(200)
		case r < 90:
			c.dt = rng.Int63n(5000)
		case r < 95:
			c.dt = -rng.Int63n(2000)
		case r < 98:
			c.dt = rng.Int63n(200000)
		default:
			c.dt = rng.Int63n(3 * 86400000)
		}
		if rng.Intn(25) == 0 {
			c.cost = L + 1 + rng.Int63n(3)
		}
		c.force = rng.Intn(10) == 0
		calls = append(calls, c)
	}
	return calls
}

// retryCalls are the calls of the retry scenario: request ids.
func retryCalls(L int64) []call {
	cs := []call{{key: "k", cost: 1, id: "r1"}, {dt: 5, key: "k", cost: 1, id: "r1"}}
	cs = append(cs, burst("k", L-1)...)
	return append(cs, call{key: "k", cost: 1, id: "r2"}, call{key: "k", cost: 1, id: "r2"}, call{key: "k", cost: 1, id: "r1"},
		call{key: "k", cost: 2, id: "r1"}, call{key: "k", cost: 1, force: true, id: "r3"}, call{dt: 1, key: "k", cost: 1, force: true, id: "r3"},
		call{key: "k", cost: 0, id: "p"}, call{key: "k", cost: 1, id: strings.Repeat("x", 129)}, call{key: "other", cost: 1, id: "r1"},
		call{at: at(t0 + oracle.RequestMs + 1), key: "k", cost: 1, id: "r1"}, call{at: at(t0 + oracle.RequestMs + 2), key: "k", cost: 1, id: "r1"},
		call{at: at(t0), key: "k", cost: 1, id: "r1"})
}

// inFlightVectors are the vectors of an in-flight algorithm
// (oracle.InFlight: it keeps no state), which counts only the holds of a
// holding policy (its holding vectors): decided alone, each request is
// refused, whatever its cost, force or id, and changes nothing; a reset
// is not refused. Its holding vectors are the policies'.
func inFlightVectors(a algorithm) ([]conformance.Vector, error) {
	calls := []call{{key: "k", cost: 1}, {dt: 1, key: "k", cost: 0}, {dt: 1, key: "k", cost: 1000},
		{dt: 1, key: "k", cost: 1, force: true}, {dt: 1, key: "k", cost: 1, id: "r1"}, {dt: 1, key: "k", reset: true},
		{dt: 1, key: "", cost: 1}, {dt: 1, key: "k", cost: -1, rawCost: "-1"}}
	return []conformance.Vector{build("alone", a, "an in-flight limit decided alone is refused (BADINPUT), whatever the request: "+
		"it writes nothing and would admit every request; its slots are the holds of a holding policy. A reset is not refused", numbers(a.Params[0]), calls)}, nil
}
