package conformance

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/limitspec/limitspec/lua"
)

// TestPolicyIsConjunction: on random traces, every policy decides on a
// target as the conjunction of its limits, each run alone on the same
// kind of target: admitted exactly when every limit alone would admit
// (cost <= the remaining of a peek, by the contract's definition of
// remaining), every limit then consuming as alone; denied, a limit that
// denies reports what it reports alone (a denial writes nothing, so it
// can be asked), and one that would admit reports its peek. A forced
// step is each limit forced alone: every limit charged, admitted when
// every one would have admitted.
func TestPolicyIsConjunction(t *testing.T) {
	kinds := map[string]func() Target{
		"goimpl": func() Target { return NewGoTarget() },
		"gopherlua": func() Target {
			tg, err := NewLuaTarget()
			if err != nil {
				t.Fatal(err)
			}
			return tg
		},
	}
	params := map[string]map[string]int64{"burst_quota": {"daily.limit": 40}, "user_global": {"global.limit": 7}}
	for kind, mk := range kinds {
		for _, p := range lua.Policies {
			t.Run(kind+"/"+p.Name, func(t *testing.T) {
				admitted, denied, forced := conjunctionTrace(t, mk, p, params[p.Name], 400)
				if admitted < 20 || denied < 20 || forced < 20 {
					t.Errorf("%d admitted, %d denied and %d forced steps: the trace does not exercise all three", admitted, denied, forced)
				}
			})
		}
	}
}

// conjunctionTrace runs one random trace and returns the steps the
// policy admitted and denied, and the forced ones.
func conjunctionTrace(t *testing.T, mk func() Target, p lua.Policy, params map[string]int64, n int) (admitted, denied, forced int) {
	pol := mk()
	raw := map[string]json.Number{}
	for k, v := range params {
		raw[k] = json.Number(strconv.FormatInt(v, 10))
	}
	if err := pol.Begin(p.Name, raw); err != nil {
		t.Fatal(err)
	}
	alone := make([]Target, len(p.Limits))
	for i, l := range p.Limits {
		alone[i] = mk()
		lp := map[string]json.Number{}
		for k, v := range l.ParamsWith(params) {
			lp[k] = json.Number(strconv.FormatInt(v, 10))
		}
		if err := alone[i].Begin(l.Algorithm, lp); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewSource(int64(len(p.Name))))
	now := int64(1700000000000)
	for step := range n {
		now += []int64{0, 0, 1, 30, 250, 1000, 20000}[rng.Intn(7)]
		ids := map[string]string{}
		for _, id := range p.Identities {
			ids[id] = fmt.Sprint(id, rng.Intn(2))
		}
		cost := json.Number(strconv.Itoa([]int{0, 1, 1, 1, 2, 3}[rng.Intn(6)]))
		force := rng.Intn(6) == 0
		got := pol.Decide(Request{IDs: ids, NowMs: now, Cost: cost, Force: force})
		var want Outcome
		if force {
			forced++
			want = forcedConjunction(p, alone, ids, now, cost)
		} else {
			want = conjunction(p, alone, ids, now, cost)
		}
		if diff := cmp.Diff(want, got, ignoreMessage); diff != "" {
			t.Fatalf("step %d (t %d, ids %v, cost %s, forced %v): the policy differs from its limits alone (-alone +policy):\n%s", step, now, ids, cost, force, diff)
		}
		if got.Allowed {
			admitted++
		} else {
			denied++
		}
	}
	return admitted, denied, forced
}

// conjunction decides a request by the limits run alone, as the policy
// must, and applies it to them.
func conjunction(p lua.Policy, alone []Target, ids map[string]string, now int64, cost json.Number) Outcome {
	c, _ := cost.Int64()
	keys := make([]string, len(alone))
	peeks := make([]Outcome, len(alone))
	all := true
	for i, l := range p.Limits {
		keys[i], _ = l.Counts(ids)
		peeks[i] = alone[i].Decide(Request{Key: keys[i], NowMs: now, Cost: "0"})
		all = all && c <= peeks[i].Remaining
	}
	var limits []Outcome
	for i := range p.Limits {
		r := peeks[i]
		if all || c > peeks[i].Remaining {
			r = alone[i].Decide(Request{Key: keys[i], NowMs: now, Cost: cost})
		}
		limits = append(limits, r)
	}
	return policyOutcome(limits, all, all)
}

// forcedConjunction forces a request on every limit run alone, as a
// policy's forced call must.
func forcedConjunction(p lua.Policy, alone []Target, ids map[string]string, now int64, cost json.Number) Outcome {
	var limits []Outcome
	all := true
	for i, l := range p.Limits {
		key, _ := l.Counts(ids)
		r := alone[i].Decide(Request{Key: key, NowMs: now, Cost: cost, Force: true})
		limits = append(limits, r)
		all = all && r.Allowed
	}
	return policyOutcome(limits, all, true)
}

// policyOutcome is a policy's outcome from its limits': the binding
// limit's, with the largest delay of all limits when delays count.
func policyOutcome(limits []Outcome, all, delays bool) Outcome {
	out := Outcome{Limits: limits}
	b := 0
	for i, r := range out.Limits {
		switch {
		case all && r.Remaining*out.Limits[b].Limit < out.Limits[b].Remaining*r.Limit:
			b = i // small limits here: the products cannot overflow
		case !all && !r.Allowed && (out.Limits[b].Allowed || waitsLonger(r.RetryAfterMs, out.Limits[b].RetryAfterMs)):
			b = i
		}
	}
	res := out.Limits[b]
	res.Index, res.Limits, res.DelayMs = int64(b+1), out.Limits, 0
	if delays {
		for _, r := range out.Limits {
			res.DelayMs = max(res.DelayMs, r.DelayMs)
		}
	}
	return res
}

// waitsLonger reports whether the wait a is longer than b; -1 is never.
func waitsLonger(a, b int64) bool { return a != b && (a == -1 || (b != -1 && a > b)) }
