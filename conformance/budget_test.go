package conformance

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/policyfile"
)

var updateBudgets = flag.Bool("update-budgets", false, "rewrite testdata/budgets.txt (and, with -run TestInstructionBudgets, testdata/instructions.txt) with the work measured")

const budgetsFile = "testdata/budgets.txt"

// work is what one decision's script did: the Redis commands it ran, the
// arguments Redis parsed for them (each command's name included), and
// the script's own KEYS and ARGV.
type work struct{ commands, args, inputs int64 }

// TestBudgets holds every algorithm's and policy's decisions to the work
// recorded in testdata/budgets.txt: a decision on a fresh key, an
// admission on a live key, a denial, a peek and a forced call, each run
// by the generated Lua in gopher-lua. A change that makes one of them run
// more commands, or pass more arguments, fails here until the budget is
// raised on purpose (go test ./conformance -run TestBudgets
// -update-budgets, and the diff reviewed); one that makes it cheaper is
// logged, for the budget to be lowered.
func TestBudgets(t *testing.T) {
	measured := measureBudgets(t)
	if *updateBudgets {
		writeBudgets(t, measured)
		return
	}
	budgets := readBudgets(t)
	for name, got := range measured {
		want, ok := budgets[name]
		switch {
		case !ok:
			t.Errorf("%s: no budget in %s (measured %d commands, %d arguments, %d inputs): record it with -update-budgets",
				name, budgetsFile, got.commands, got.args, got.inputs)
		case got.commands > want.commands || got.args > want.args || got.inputs > want.inputs:
			t.Errorf("%s: %d commands, %d arguments, %d inputs; the budget is %d, %d, %d",
				name, got.commands, got.args, got.inputs, want.commands, want.args, want.inputs)
		case got != want:
			t.Logf("%s: cheaper than its budget (%+v < %+v): lower it with -update-budgets", name, got, want)
		}
	}
	for name := range budgets {
		if _, ok := measured[name]; !ok {
			t.Errorf("%s: a budget for nothing measured", name)
		}
	}
}

// measureBudgets runs the scenarios of TestBudgets on every subject and
// returns their work by "subject scenario".
func measureBudgets(t *testing.T) map[string]work {
	vectors, err := Load("../vectors")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]work{}
	for _, a := range policyfile.Algorithms() {
		name := a.String()
		if inFlight(name, vectors) {
			continue
		}
		if !measureAlgorithm(t, name, vectors, out) {
			t.Errorf("%s: no vector's parameters admit two requests of 1 and then deny one", name)
		}
	}
	for _, p := range []*Policy{
		vectorPolicy(t, must(limitspec.IPUserPolicy())),
		vectorPolicy(t, must(limitspec.BurstQuotaPolicy(40))),
		vectorPolicy(t, must(limitspec.UserGlobalPolicy(7))),
		everyAlgorithm(t),
		vectorFilePolicy(t, "../vectors/holds_gcra/gen-random.json"),
		vectorFilePolicy(t, "../vectors/every_algorithm_holds/gen-random.json"),
	} {
		ids := map[string]string{}
		for _, id := range p.Identities() {
			ids[id] = "v"
		}
		ws, err := scenarios(t, Request{Policy: p, IDs: ids})
		if err != nil {
			t.Fatal(err)
		}
		for scenario, w := range ws {
			out["policy:"+p.Name+" "+scenario] = w
		}
	}
	return out
}

// inFlight reports whether the algorithm name's limits write no state
// (limitspec.InFlight, as the first of its vectors makes one): alone
// they never deny a request within their limit, and their work is
// measured by the holding policies'.
func inFlight(name string, vectors []Vector) bool {
	for _, v := range vectors {
		if v.Algorithm != name || v.Policy != nil {
			continue
		}
		ints, refused := intParams(name, v.Params)
		if refused != nil {
			continue
		}
		if lim, err := policyfile.NewLimit(name, ints); err == nil {
			return limitspec.InFlight(lim)
		}
	}
	return false
}

// vectorFilePolicy is the policy of the vector in file.
func vectorFilePolicy(t *testing.T, file string) *Policy {
	v, err := LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return v.Policy
}

// measureAlgorithm measures the scenarios of algorithm name with the
// parameters of the first vector of it (in the order of Load) under which
// they run as planned; false when there is none.
func measureAlgorithm(t *testing.T, name string, vectors []Vector, out map[string]work) bool {
	for _, v := range vectors {
		if v.Algorithm != name || v.Policy != nil {
			continue
		}
		ws, err := scenarios(t, Request{Algorithm: name, Params: v.Params, Key: "k"})
		if err != nil {
			continue
		}
		for scenario, w := range ws {
			out[name+" "+scenario] = w
		}
		return true
	}
	return false
}

// scenarios runs, on a fresh gopher-lua target: a first decision
// (admitted), a second one (admitted, on the live key), a request of the
// remaining cost (admitted: the limit used up), a denied one, a peek and
// a forced call, 1 ms apart; it returns the work of each but the third.
// The outcome of each but the peek is checked: what the contract says of
// a limit used up.
func scenarios(t *testing.T, r Request) (map[string]work, error) {
	lt, err := NewLuaTarget()
	if err != nil {
		t.Fatal(err)
	}
	defer lt.Close()
	if err := lt.Begin(&Vector{Algorithm: r.Algorithm, Params: r.Params, Policy: r.Policy}); err != nil {
		return nil, err
	}
	now := int64(1_700_000_000_000)
	out := map[string]work{}
	var failed error
	step := func(name string, cost int64, force bool, allowed ...bool) Outcome {
		now++
		before, beforeInputs := lt.store.Work(), lt.inputs
		req := r
		req.NowMs, req.Cost, req.Force = now, json.Number(fmt.Sprint(cost)), force
		o := lt.Decide(req)
		if o.Error != "" || len(allowed) > 0 && o.Allowed != allowed[0] {
			failed = cmp.Or(failed, fmt.Errorf("%s: %+v, want allowed = %v", name, o, allowed))
		}
		w := lt.store.Work()
		if name != "" {
			out[name] = work{w.Commands - before.Commands, w.Args - before.Args, lt.inputs - beforeInputs}
		}
		return o
	}
	step("first", 1, false, true)
	if o := step("admitted", 1, false, true); o.Remaining > 0 {
		step("", o.Remaining, false, true)
	}
	step("denied", 1, false, false)
	step("peek", 0, false)                  // allowed or not, as the algorithm says of a peek on a used-up limit
	if r.Policy == nil || !r.Policy.Holds { // a holding policy takes no force
		step("forced", 1, true, false)
	}
	return out, failed
}

// readBudgets reads testdata/budgets.txt: "subject scenario commands
// arguments inputs" per line, # comments.
func readBudgets(t *testing.T) map[string]work {
	f, err := os.Open(budgetsFile)
	if err != nil {
		t.Fatalf("%v (write it with -update-budgets)", err)
	}
	defer f.Close()
	out := map[string]work{}
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var subject, scenario string
		var w work
		if _, err := fmt.Sscan(line, &subject, &scenario, &w.commands, &w.args, &w.inputs); err != nil {
			t.Fatalf("%s: %q: %v", budgetsFile, line, err)
		}
		out[subject+" "+scenario] = w
	}
	return out
}

// writeBudgets writes measured to testdata/budgets.txt, sorted.
func writeBudgets(t *testing.T, measured map[string]work) {
	var b strings.Builder
	b.WriteString("# The work of one decision, by TestBudgets: subject scenario commands arguments inputs.\n")
	b.WriteString("# commands: the Redis commands the script ran; arguments: what Redis parsed for them,\n")
	b.WriteString("# each command's name included; inputs: the script's KEYS and ARGV.\n")
	for _, name := range slices.Sorted(maps.Keys(measured)) {
		w := measured[name]
		fmt.Fprintf(&b, "%s %d %d %d\n", name, w.commands, w.args, w.inputs)
	}
	if err := os.WriteFile(budgetsFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
