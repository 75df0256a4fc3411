package main

import (
	"fmt"
	"maps"
	"math/rand"

	"github.com/limitspec/limitspec/internal/oracle"
)

// changes are the parameter sets a limit changes to between calls, from
// a parameter set p: its amounts lowered and raised (the state is kept,
// read clamped), and the parameters its state is measured in changed (a
// fresh state). docs/semantics.md, "Keys", states what each does.
type changes struct {
	p, lower, higher, other map[string]int64
}

// changesOf finds the changes of p the oracle accepts: amounts halved
// (at least 1) and doubled (or one more), and every other parameter
// doubled (or halved). ok is false when no such change is accepted.
func changesOf(alg string, p map[string]int64) (c changes, ok bool) {
	amounts := func(f func(int64) int64) map[string]int64 {
		return scaled(alg, p, true, f)
	}
	measures := func(f func(int64) int64) map[string]int64 {
		return scaled(alg, p, false, f)
	}
	c = changes{p: p}
	c.lower = accepted(alg, amounts(func(v int64) int64 { return max(1, v/2) }))
	c.higher = accepted(alg, amounts(func(v int64) int64 { return 2 * v }), amounts(func(v int64) int64 { return v + 1 }))
	c.other = accepted(alg, measures(func(v int64) int64 { return 2 * v }), measures(func(v int64) int64 { return v / 2 }))
	return c, c.lower != nil && c.higher != nil && c.other != nil
}

// scaled is p with f applied to each non-zero amount (amounts) or each
// non-zero other parameter (!amounts).
func scaled(alg string, p map[string]int64, amounts bool, f func(int64) int64) map[string]int64 {
	out := maps.Clone(p)
	for n, v := range p {
		if v != 0 && oracle.Amount(alg, n) == amounts {
			out[n] = f(v)
		}
	}
	return out
}

// accepted is the first of sets the oracle accepts, or nil.
func accepted(alg string, sets ...map[string]int64) map[string]int64 {
	for _, s := range sets {
		if _, err := oracle.New(alg, s); err == nil {
			return s
		}
	}
	return nil
}

// under is c with its parameters set from this call on.
func under(params map[string]int64, c call) call {
	c.params = params
	return c
}

// limitChangeCalls: a key filled and forced into debt under p, then
// decided under lowered amounts (the debt read clamped), raised ones (the
// stored state read as it is), another measure (a fresh state beside the
// first), p again (its state still there), a reset under p, and the
// other measure's state left alone by it.
func limitChangeCalls(c changes, L int64) []call {
	calls := append(burst("k", L), call{key: "k", cost: L, force: true})
	calls = append(calls,
		under(c.lower, call{dt: 1, key: "k", cost: 0}),
		call{key: "k", cost: 1},
		call{key: "k", cost: 1, force: true},
		under(c.higher, call{dt: 1, key: "k", cost: 0}),
		call{key: "k", cost: 1},
		call{key: "k", cost: 1},
		under(c.other, call{dt: 1, key: "k", cost: 1}),
		call{key: "k", cost: 0},
		under(c.p, call{key: "k", cost: 0}),
		call{key: "k", reset: true},
		call{key: "k", cost: 0},
		under(c.other, call{key: "k", cost: 0}),
		under(c.lower, call{dt: 1, key: "k", cost: 1}),
	)
	return calls
}

// limitChangeVectors returns an algorithm's vectors of limits changing
// between calls on parameter set i: the scenario of limitChangeCalls,
// and a random trace whose calls switch between the four parameter sets.
func limitChangeVectors(a algorithm, p map[string]int64, L int64, i int) []vector {
	c, ok := changesOf(a.name, p)
	if !ok {
		return nil
	}
	scripted := limitChangeCalls(c, L)
	traced := random(L, int64(7000*i+len(a.name)), 150)
	rng := rand.New(rand.NewSource(int64(i + 1)))
	sets := []map[string]int64{c.p, c.lower, c.higher, c.other}
	for j := range traced {
		if rng.Intn(8) == 0 {
			traced[j].params = sets[rng.Intn(len(sets))]
		}
	}
	comment := fmt.Sprintf("parameter set %d, its amounts lowered to %v and raised to %v, its state's measures changed to %v", i+1, c.lower, c.higher, c.other)
	if a.hasEntries() {
		scripted, traced = withViews(scripted, 1), withViews(traced, 8)
		comment += "; requests are followed by read-backs of their key's entries"
	}
	return []vector{
		build(fmt.Sprintf("limit-change-p%d", i+1), a, "a limit changing between calls on one key (docs/semantics.md, \"Keys\"): filled and forced into debt, then lowered (the state read clamped), raised (read as stored), another measure (a fresh state), back (the first state kept), reset; "+comment, intParams(p), scripted),
		build(fmt.Sprintf("limit-change-random-p%d", i+1), a, "a long random trace whose limit changes between calls among the parameter set, its amounts lowered and raised, and its measures changed; "+comment, intParams(p), traced),
	}
}
