package main

import (
	"fmt"
	"maps"
	"math/rand"
	"strings"

	"github.com/limitspec/limitspec/conformance"
	"github.com/limitspec/limitspec/internal/oracle"
)

// The vectors of a holding policy (docs/semantics.md, "Holds"): its
// scenarios, a random trace of every operation, and its refused input.

// holdingVectors are the vectors of the holding policy def.
func holdingVectors(def *conformance.Policy, sc map[string]policyScenario) []conformance.Vector {
	var out []conformance.Vector
	for _, n := range sortedKeys(sc) {
		out = append(out, buildHolding(n, def, sc[n].comment, sc[n].calls))
	}
	out = append(out, buildHolding("random", def,
		"a long random trace of decisions, reserves, commits, releases and renews over two values of each identity and four hold ids, many of them retried or past their hold; expectations from the oracle",
		randomHolds(def, 29, 400)))
	return append(out, holdingBadInput(def))
}

// buildHolding replays calls through the oracle's model of the holding
// policy.
func buildHolding(name string, def *conformance.Policy, comment string, calls []pcall) conformance.Vector {
	v := conformance.Vector{Name: def.Name + "/" + name, Policy: def, Comment: comment}
	m, mErr := oracleHoldingPolicy(def)
	t := int64(t0)
	for _, c := range calls {
		t += c.dt
		if c.reset {
			v.Steps = append(v.Steps, policyResetStep(t, c.ids, mErr, func() error { return m.Reset(c.ids) }))
			continue
		}
		cost := stepCost(c.cost, c.rawCost)
		s := conformance.Step{T: t, IDs: c.ids, Cost: cost, Costs: numbers(c.costs), Op: c.op, Hold: c.hold, HoldMs: c.holdMs,
			WrongType: conformance.WrongType{Keys: c.wrongKeys}}
		op := c.op
		if op == "" {
			op = "decide"
		}
		dm := m
		if len(c.wrongKeys) > 0 {
			// The input is checked before any key is read: run on a fresh
			// state, the call shows whether it is refused.
			dm, _ = oracleHoldingPolicy(def)
		}
		s.Expect = expectOf(mErr, cost, s.WrongType.Any(), func(n int64) (oracle.PolicyResult, error) {
			costs, err := dm.Policy().Amounts(n, c.costs)
			if err != nil {
				return oracle.PolicyResult{}, err
			}
			return dm.Run(c.ids, op, c.hold, t, costs, c.holdMs)
		}, policyExpect)
		v.Steps = append(v.Steps, s)
	}
	return v
}

// randomHolds is a random trace of every operation.
func randomHolds(def *conformance.Policy, seed int64, n int) []pcall {
	rng := rand.New(rand.NewSource(seed))
	var out []pcall
	for range n {
		ids := map[string]string{}
		for _, id := range def.Identities() {
			ids[id] = fmt.Sprint(id, rng.Intn(2))
		}
		c := pcall{dt: []int64{0, 1, 37, 500, 1000, 5000, 60000}[rng.Intn(7)], ids: ids,
			hold: fmt.Sprint("h", rng.Intn(4))}
		switch rng.Intn(6) {
		case 0:
			c.op, c.hold, c.cost = "", "", []int64{0, 1, 2}[rng.Intn(3)]
		case 1, 2:
			c.op, c.cost, c.holdMs = "reserve", 1+rng.Int63n(3), []int64{1, 800, 3000, 20000}[rng.Intn(4)]
		case 3:
			c.op, c.cost = "commit", rng.Int63n(5)
		case 4:
			c.op = "release"
		default:
			c.op, c.holdMs = "renew", []int64{1, 2000, 10000}[rng.Intn(3)]
		}
		out = append(out, c)
	}
	return out
}

// holdingBadInput is the refused input of a holding policy's operations:
// an unknown op, a decision with an id, an id empty or too long, hold_ms
// outside its domain for its op, a reserve of 0, a release or renew with
// a cost; then a reserve that is taken, showing nothing was written.
func holdingBadInput(def *conformance.Policy) conformance.Vector {
	ids := map[string]string{}
	for _, id := range def.Identities() {
		ids[id] = "k"
	}
	long := strings.Repeat("x", 129)
	bad := []pcall{
		{hold: "a", cost: 1},
		{op: "reserve", hold: "", cost: 1, holdMs: 1000},
		{op: "reserve", hold: long, cost: 1, holdMs: 1000},
		{op: "reserve", hold: "a", cost: 1},
		{op: "reserve", hold: "a", cost: 1, holdMs: oracle.HoldMsMax + 1},
		{op: "reserve", hold: "a", cost: 0, holdMs: 1000},
		{op: "commit", hold: "a", cost: 1, holdMs: 1000},
		{op: "release", hold: "a", cost: 1},
		{op: "renew", hold: "a", holdMs: 0},
		{op: "commit", hold: "a", cost: 1},
		{op: "reserve", hold: "a", cost: 1, holdMs: oracle.HoldMsMax},
		{op: "reserve", hold: "a", cost: 2, holdMs: 1000},
		{dt: oracle.HoldMsMax - 1, op: "release", hold: "a"},
	}
	for i := range bad {
		bad[i].ids = maps.Clone(ids)
	}
	return buildHolding("bad-input", def,
		"refused: a decision with an id, an id empty or over 128 bytes, hold_ms 0 or over a day for a reserve, a reserve of 0, a commit with hold_ms, a release with a cost, a renew of 0 ms; a commit of an id that holds nothing (NOHOLD); none writes: then a reserve of a day is taken, a second reserve of the id for another amount is refused, and a release a ms before its end takes effect",
		bad)
}
