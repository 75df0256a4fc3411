package gen

import "strings"

// A policy's limit is decided, in the policy, holds and composed scripts
// alike, by a function made for it once per call: the algorithm's maker,
// make_<algorithm>(KEYS, ALG, parameters...), returns the decision of
// the limit of those parameters on those keys (KEYS the limit's own, ALG
// the prefix of its errors), a function of now, cost, force and commit.
// It decides as the algorithm's script does, reads a string state once
// per call whatever the times it decides, runs its writes only when
// commit is set, and returns the seven fields of the reply (or a
// refusal). The policy and holds scripts find a limit's parameters in
// ARGV and check them with the algorithm's checker,
// check_<algorithm>(KEYS, ARGV, ALG, infix); a composed script (package
// redislimit's, for a policy it planned) writes them in, checked once.

// luaMakerName and luaCheckerName name an algorithm's maker and checker.
func luaMakerName(a *Algorithm) string {
	return "make_" + strings.ReplaceAll(a.Qualified(), ".", "__")
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

// luaMaker emits a's maker (see above).
func luaMaker(w *writer, sp *Spec, a *Algorithm) {
	args := append([]string{"KEYS", "ALG"}, luaParamNames(a)...)
	w.line("-- a limit of %s: its decision of now, cost, force and commit, on its", a.Qualified())
	w.line("-- keys KEYS, ALG naming it in errors")
	w.line("local function %s(%s)", luaMakerName(a), strings.Join(args, ", "))
	var caches []string
	for _, s := range a.States {
		if s.Kind == Packed {
			caches = append(caches, luaName(s.Name)+"__cache")
		}
	}
	if len(caches) > 0 {
		w.line("  local %s -- its state, read once per call", strings.Join(caches, ", "))
	}
	w.line("  return function(now, cost, force, commit)")
	body := writer{commitOnly: true}
	_, strs, _ := luaArgs(sp, a, nil)
	for _, in := range strs { // a policy passes none
		body.line("local %s = ''", luaName(in.Name))
	}
	luaDecision(&body, sp, a, nil, "")
	w.raw(luaIndentText(body.b.String(), "    "))
	w.line("  end")
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
	w.line("-- inputs, least and most parameters")
	w.line("local ALGORITHMS = {")
	for _, a := range algs {
		w.line("  [%s] = {%s, %s, %d, %d, %d, %d},", luaStr(a.Qualified()), luaCheckerName(a), luaMakerName(a),
			len(a.States), len(a.Strings), a.RequiredParams(), len(a.Params))
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
