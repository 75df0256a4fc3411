package conformance

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strconv"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/kit"
)

// TestPolicyIsConjunction: on random traces, every policy decides on a
// target as the conjunction of its limits, each run alone on the same
// kind of target: admitted exactly when every limit alone would admit
// (a peek admitted, and cost <= its remaining, by the contract's
// definition of remaining), every limit then consuming as alone; denied, a limit that
// denies reports what it reports alone (a denial writes nothing, so it
// can be asked), and one that would admit reports its peek. A forced
// step is each limit forced alone: every limit charged, admitted when
// every one would have admitted.
func TestPolicyIsConjunction(t *testing.T) {
	kinds := map[string]func() Target{
		"goimpl": func() Target { return NewGoimplTarget() },
		"gopherlua": func() Target {
			tg, err := NewLuaTarget()
			if err != nil {
				t.Fatal(err)
			}
			return tg
		},
	}
	policies := []*Policy{
		vectorPolicy(t, must(limitspec.IPUserPolicy())),
		vectorPolicy(t, must(limitspec.BurstQuotaPolicy(40))),
		vectorPolicy(t, must(limitspec.UserGlobalPolicy(7))),
		everyAlgorithm(t),
	}
	for kind, mk := range kinds {
		for _, p := range policies {
			t.Run(kind+"/"+p.Name, func(t *testing.T) {
				admitted, denied, forced := conjunctionTrace(t, mk, p, 400)
				if admitted < 20 || denied < 20 || forced < 20 {
					t.Errorf("%d admitted, %d denied and %d forced steps: the trace does not exercise all three", admitted, denied, forced)
				}
			})
		}
	}
}

// everyAlgorithm is the runtime policy of vectors/every_algorithm (from
// cmd/mkvectors/scenarios.yaml): a limit of every algorithm of the
// catalogue, counting two identities and a constant.
func everyAlgorithm(t *testing.T) *Policy {
	v, err := LoadFile("../vectors/every_algorithm/gen-every-limit-binds.json")
	if err != nil {
		t.Fatal(err)
	}
	return v.Policy
}

// conjunctionTrace runs one random trace and returns the steps the
// policy admitted and denied, and the forced ones.
func conjunctionTrace(t *testing.T, mk func() Target, p *Policy, n int) (admitted, denied, forced int) {
	pol := mk()
	if err := pol.Begin(&Vector{Policy: p}); err != nil {
		t.Fatal(err)
	}
	alone := make([]Target, len(p.Limits))
	for i, l := range p.Limits {
		alone[i] = mk()
		if err := alone[i].Begin(&Vector{Algorithm: l.Algorithm, Params: l.Params}); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewSource(int64(len(p.Name))))
	now := int64(1700000000000)
	for step := range n {
		now += []int64{0, 0, 1, 30, 250, 1000, 20000}[rng.Intn(7)]
		ids := map[string]string{}
		for _, id := range p.Identities() {
			ids[id] = fmt.Sprint(id, rng.Intn(2))
		}
		cost := json.Number(strconv.Itoa([]int{0, 1, 1, 1, 2, 3}[rng.Intn(6)]))
		force := rng.Intn(6) == 0
		got := pol.Decide(Request{Policy: p, IDs: ids, NowMs: now, Cost: cost, Force: force})
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

// aloneRequest is the request of limit l of a policy, run alone.
func aloneRequest(l PolicyLimit, ids map[string]string, now int64, cost json.Number) Request {
	key := l.Constant
	if l.Identity != "" {
		key = ids[l.Identity]
	}
	return Request{Algorithm: l.Algorithm, Params: l.Params, Key: key, NowMs: now, Cost: cost}
}

// conjunction decides a request by the limits run alone, as the policy
// must, and applies it to them.
func conjunction(p *Policy, alone []Target, ids map[string]string, now int64, cost json.Number) Outcome {
	c, _ := cost.Int64()
	peeks := make([]Outcome, len(alone))
	all := true
	for i, l := range p.Limits {
		peeks[i] = alone[i].Decide(aloneRequest(l, ids, now, "0"))
		// A peek itself is denied by a limit in debt (after a forced
		// call): then so is every cost.
		all = all && peeks[i].Allowed && c <= peeks[i].Remaining
	}
	var limits []Outcome
	for i, l := range p.Limits {
		r := peeks[i]
		if all || !peeks[i].Allowed || c > peeks[i].Remaining {
			r = alone[i].Decide(aloneRequest(l, ids, now, cost))
		}
		limits = append(limits, r)
	}
	return policyOutcome(limits, all, all)
}

// forcedConjunction forces a request on every limit run alone, as a
// policy's forced call must.
func forcedConjunction(p *Policy, alone []Target, ids map[string]string, now int64, cost json.Number) Outcome {
	var limits []Outcome
	all := true
	for i, l := range p.Limits {
		r := aloneRequest(l, ids, now, cost)
		r.Force = true
		out := alone[i].Decide(r)
		limits = append(limits, out)
		all = all && out.Allowed
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

// TestPolicyScriptNamesThePolicy: the composite script's refusals of a
// call's time, cost and force name the policy (from its first limit's
// name, :<policy>:<limit>) as package goimpl's do, docs/semantics.md, "Errors"; those
// of its limits' arguments name the script, which knows no policy yet.
func TestPolicyScriptNamesThePolicy(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	lib, ok := kit.LookupLibrary(limitspec.Catalogue)
	if !ok {
		t.Fatal("the catalogue's library is not registered")
	}
	src := lib.Policy.Source
	limit := []any{"fixed_window", ":api:second", 2, 10, 1000}
	tests := []struct {
		now, cost, force any
		limit            []any
		want             string
	}{
		{1000, -1, 0, limit, "BADINPUT api: cost must be an integer in [0, 9007199254740991], got -1"},
		{-5, 1, 0, limit, "BADINPUT api: now_ms must be an integer in [0, 35184372088832], got -5"},
		{1000, 1, 2, limit, "BADINPUT api: force must be 0 or 1, got 2"},
		{1000, 1, 0, []any{"fixed_window", "api", 2, 10, 1000}, "BADINPUT policy: limit 1: the name must be :<policy>:<limit>, got api"},
	}
	for _, tt := range tests {
		args := append([]any{tt.now, tt.cost, tt.force}, tt.limit...)
		err := rdb.Eval(t.Context(), src, []string{"{u}:second:fw:1000"}, args...).Err()
		if err == nil || err.Error() != tt.want {
			t.Errorf("policy script %v: %v; want %s", args, err, tt.want)
		}
		if keys := mr.Keys(); len(keys) != 0 {
			t.Errorf("a refused call wrote %v", keys)
		}
	}
}
