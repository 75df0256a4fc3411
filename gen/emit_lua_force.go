package gen

import "fmt"

// The forced call (docs/semantics.md, "Force") is a flag of the decision,
// not a script of its own: every decision script, like the policy
// script, takes ARGV now_ms, cost, force, then the rest, and the logic
// reads force.

// forceArgDoc describes the argument force, in the scripts' headers and
// the manifest.
const forceArgDoc = `"1" charges the cost even when the request is denied, for work already done (docs/semantics.md, "Force"); "0" decides`

// luaTakesForce reports whether the script of an algorithm (v nil) or of
// its view v takes force: a decision does, a view does not.
func luaTakesForce(v *View) bool { return v == nil }

// luaForceArg parses force, which the logic reads, from ARGV[i]: exactly
// "0" or "1"; anything else is refused as bad input before anything is
// written.
func luaForceArg(w *writer, i int) {
	arg := fmt.Sprintf("ARGV[%d]", i)
	w.line("if %s ~= '0' and %s ~= '1' then", arg, arg)
	w.line("  return bad(%s .. clip(%s))", luaStr(msgForcePrefix), arg)
	w.line("end")
	w.line("%sforce = %s == '1' -- the forced call: the cost is consumed even when denied", w.decl(), arg)
}

// msgForcePrefix refuses a force that is not "0" or "1" (the policy
// script's, too); the value given follows.
const msgForcePrefix = "force must be 0 or 1, got "
