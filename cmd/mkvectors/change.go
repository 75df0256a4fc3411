package main

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"

	"github.com/limitspec/limitspec/conformance"
	"github.com/limitspec/limitspec/internal/oracle"
)

// changes are the parameter sets a limit changes to between calls, from
// a parameter set p: its amounts lowered and raised (the state is kept,
// read clamped), and the parameters its state is measured in changed (a
// fresh state). docs/semantics.md, "Keys", states what each does.
type changes struct {
	p, lower, higher map[string]int64
	// others each change one parameter the state is measured in, so
	// that a key that failed to name any one of them would show.
	others []map[string]int64
	// measured names the parameter each of others changes.
	measured []string
}

// changesOf finds the changes of p the oracle accepts: amounts halved
// (at least 1) and doubled (or one more), and each other non-zero
// parameter alone doubled (or halved). ok is false when the amounts
// cannot change.
func changesOf(alg string, p map[string]int64) (c changes, ok bool) {
	amounts := func(f func(int64) int64) map[string]int64 {
		out := maps.Clone(p)
		for n, v := range p {
			if v != 0 && oracle.Amount(alg, n) {
				out[n] = f(v)
			}
		}
		return out
	}
	c = changes{p: p}
	c.lower = accepted(alg, amounts(func(v int64) int64 { return max(1, v/2) }))
	c.higher = accepted(alg, amounts(func(v int64) int64 { return 2 * v }), amounts(func(v int64) int64 { return v + 1 }))
	for _, n := range slices.Sorted(maps.Keys(p)) {
		if p[n] == 0 || oracle.Amount(alg, n) {
			continue
		}
		doubled, halved := maps.Clone(p), maps.Clone(p)
		doubled[n], halved[n] = 2*p[n], p[n]/2
		if o := accepted(alg, doubled, halved); o != nil {
			c.others, c.measured = append(c.others, o), append(c.measured, n)
		}
	}
	return c, c.lower != nil && c.higher != nil
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
// decided under lowered amounts (the debt read clamped; a forced call of
// 1 and a forced peek there charge nothing and write nothing back),
// raised ones (the stored state read as it is), each other measure (a
// fresh state beside the first) and p again (its state still there), a
// reset under p, and another measure's state left alone by it.
func limitChangeCalls(c changes, L int64) []call {
	calls := append(burst("k", L), call{key: "k", cost: L, force: true})
	calls = append(calls,
		under(c.lower, call{dt: 1, key: "k", cost: 0}),
		call{key: "k", cost: 1},
		call{key: "k", cost: 1, force: true},
		call{key: "k", cost: 0, force: true},
		under(c.higher, call{dt: 1, key: "k", cost: 0}),
		call{key: "k", cost: 1},
		call{key: "k", cost: 1},
	)
	for _, o := range c.others {
		calls = append(calls, under(o, call{dt: 1, key: "k", cost: 1}), call{key: "k", cost: 0}, under(c.p, call{key: "k", cost: 0}))
	}
	calls = append(calls, call{key: "k", reset: true}, call{key: "k", cost: 0})
	if len(c.others) > 0 {
		calls = append(calls, under(c.others[0], call{key: "k", cost: 0}))
	}
	return append(calls, under(c.lower, call{dt: 1, key: "k", cost: 1}))
}

// limitChangeVectors returns an algorithm's vectors of limits changing
// between calls on parameter set i (the scenario of limitChangeCalls,
// and a random trace whose calls switch between the parameter sets), and
// the measured parameters they change alone.
func limitChangeVectors(a algorithm, p map[string]int64, L int64, i int) ([]conformance.Vector, []string, error) {
	c, ok := changesOf(a.name, p)
	if !ok {
		return nil, nil, fmt.Errorf("%s: parameter set %d %v: the oracle accepts neither its amounts lowered nor raised", a.name, i+1, p)
	}
	scripted := limitChangeCalls(c, L)
	traced := random(L, int64(7000*i+len(a.name)), 150)
	rng := rand.New(rand.NewSource(int64(i + 1)))
	sets := append([]map[string]int64{c.p, c.lower, c.higher}, c.others...)
	for j := range traced {
		if rng.Intn(8) == 0 {
			traced[j].params = sets[rng.Intn(len(sets))]
		}
	}
	comment := fmt.Sprintf("parameter set %d, its amounts lowered to %v and raised to %v, each of %v changed alone (%v)", i+1, c.lower, c.higher, c.measured, c.others)
	if a.hasEntries() {
		scripted, traced = withViews(scripted, 1), withViews(traced, 8)
		comment += "; requests are followed by read-backs of their key's entries"
	}
	return []conformance.Vector{
		build(fmt.Sprintf("limit-change-p%d", i+1), a, "a limit changing between calls on one key (docs/semantics.md, \"Keys\"): filled and forced into debt, then lowered (the state read clamped; a forced call and a forced peek at the bound write nothing back), raised (read as stored), each measure changed alone (a fresh state) and back (the first state kept), reset; "+comment, numbers(p), scripted),
		build(fmt.Sprintf("limit-change-random-p%d", i+1), a, "a long random trace whose limit changes between calls among the parameter set, its amounts lowered and raised, and each measure changed alone; "+comment, numbers(p), traced),
	}, c.measured, nil
}

// checkMeasuresChanged refuses an algorithm whose limit-change vectors
// change some parameter its state is measured in in no parameter set.
func checkMeasuresChanged(a algorithm, changed []string) error {
	names, _, _ := oracle.Params(a.name)
	for _, n := range names {
		if !oracle.Amount(a.name, n) && !slices.Contains(changed, n) {
			return fmt.Errorf("%s: no parameter set's limit-change vectors change %s alone: add a parameter set where doubling or halving it is accepted", a.name, n)
		}
	}
	return nil
}
