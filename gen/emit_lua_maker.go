package gen

import (
	"fmt"
	"strings"
)

// A policy's limit is decided, in the policy, holds and composed scripts
// alike, by its algorithm's decision, decide_<algorithm>(L, now, cost,
// force, commit), where L is the limit, as the algorithm's maker,
// make_<algorithm>(KEYS, ALG, parameters...), made it: a table of the
// decision, the limit's keys (KEYS), the prefix of its errors (ALG), its
// parameters, then a place for each string state, read once per call
// whatever the times the limit decides. The decision decides as the
// algorithm's script does, runs its writes only when commit is set, and
// returns the seven fields of the reply (or a refusal); the driver calls
// L[1](L, now, cost, force, commit). The policy and holds scripts find a
// limit's parameters in ARGV and check them with the algorithm's
// checker, check_<algorithm>(KEYS, ARGV, ALG, infix); a composed script
// (package redislimit's, for a policy it planned) writes them in, checked
// once. A limit is a table, not a closure: a closure would make one
// upvalue per parameter at every call.

// luaMakerName, luaDecisionName and luaCheckerName name an algorithm's
// maker, decision and checker.
func luaMakerName(a *Algorithm) string {
	return "make_" + strings.ReplaceAll(a.Qualified(), ".", "__")
}

func luaDecisionName(a *Algorithm) string {
	return "decide_" + strings.ReplaceAll(a.Qualified(), ".", "__")
}

func luaCheckerName(a *Algorithm) string {
	return "check_" + strings.ReplaceAll(a.Qualified(), ".", "__")
}

// luaParamNames are the Lua names of a's parameters, in order.
func luaParamNames(a *Algorithm) []string {
	var names []string
	for _, p := range a.Params {
		names = append(names, luaName(p.Name))
	}
	return names
}

// luaMaker emits a's decision and maker (see above).
func luaMaker(w *writer, sp *Spec, a *Algorithm) {
	fields := append([]string{"KEYS", "ALG"}, luaParamNames(a)...)
	body := writer{commitOnly: true, caches: map[*State]string{}}
	var reads []string
	for i := range fields {
		reads = append(reads, fmt.Sprintf("L[%d]", i+2))
	}
	slot := len(fields) + 2
	for _, s := range a.States {
		if s.Kind == Packed {
			body.caches[s] = fmt.Sprintf("L[%d]", slot)
			slot++
		}
	}
	w.line("-- a limit of %s, L: its decision of now, cost, force and commit", a.Qualified())
	w.line("local function %s(L, now, cost, force, commit)", luaDecisionName(a))
	body.line("local %s = %s", strings.Join(fields, ", "), strings.Join(reads, ", "))
	_, strs, _ := luaArgs(sp, a, nil)
	for _, in := range strs { // a policy passes none
		body.line("local %s = ''", luaName(in.Name))
	}
	luaDecision(&body, sp, a, nil, "")
	w.raw(luaIndentText(body.b.String(), "  "))
	w.line("end")
	w.line("")
	w.line("-- a limit of %s on the keys KEYS, ALG naming it in errors", a.Qualified())
	w.line("local function %s(%s)", luaMakerName(a), strings.Join(fields, ", "))
	places := strings.Repeat(", nil", slot-len(fields)-2)
	w.line("  return {%s, %s%s}", luaDecisionName(a), strings.Join(fields, ", "), places)
	w.line("end")
}

// luaChecker emits a's checker: it checks a limit's parameters (the
// limit's ARGV, as an algorithm's script takes them) and keys (after
// the hash tag, infix and the algorithm's suffix), and returns nil and
// the parameters, or the refusal.
func luaChecker(w *writer, a *Algorithm) {
	_, _, firstParam := luaArgs(&Spec{Inputs: policyInputs}, a, nil)
	var body writer
	luaErrors(&body, "")
	luaParams(&body, a, firstParam)
	luaKeys(&body, a, "infix", false)
	body.line("return nil, %s", strings.Join(luaParamNames(a), ", "))
	w.line("-- the parameters and keys of a limit of %s, checked", a.Qualified())
	w.line("local function %s(KEYS, ARGV, ALG, infix)", luaCheckerName(a))
	w.raw(luaIndentText(body.b.String(), "  "))
	w.line("end")
}

// policyInputs stand for a spec's per-call integer inputs (now_ms and
// cost) where only their number matters: a limit's ARGV, as the policy
// scripts make it, holds a place for each, then force.
var policyInputs = []*Input{{Name: "now"}, {Name: "cost"}}

// luaAlgorithms emits the table of the algorithms a script can decide:
// each its checker, maker, number of keys and of string inputs, and its
// least and most parameters.
func luaAlgorithms(w *writer, algs []*Algorithm) {
	w.line("-- the algorithms: each its checker, maker, number of keys and of string")
	w.line("-- inputs, least and most parameters, and whether it is in flight (its")
	w.line("-- decision writes nothing: it counts only holds)")
	luaAlgorithmRows(w, algs, luaMakerName)
}

// luaAlgorithmRows emits the table ALGORITHMS, a row per algorithm, its
// maker named by maker.
func luaAlgorithmRows(w *writer, algs []*Algorithm, maker func(*Algorithm) string) {
	w.line("local ALGORITHMS = {")
	for _, a := range algs {
		w.line("  [%s] = {%s, %s, %d, %d, %d, %d, %v},", luaStr(a.Qualified()), luaCheckerName(a), maker(a),
			len(a.States), len(a.Strings), a.RequiredParams(), len(a.Params), a.InFlight())
	}
	w.line("}")
}

// luaMakers emits the makers and checkers of algs, each after the other;
// each maker is a piece of a composed script (luaPieceMark), when w marks
// them.
func luaMakers(w *writer, sp *Spec, algs []*Algorithm, checkers bool) {
	for _, a := range algs {
		var m writer
		luaMaker(&m, sp, a)
		w.line("")
		w.piece(luaMakerName(a), luaNeeds(sp, m.b.String()))
		w.raw(m.b.String())
		w.piece("", "")
		if checkers {
			w.line("")
			luaChecker(w, a)
		}
	}
}
