// Package gen compiles spec/algorithms.yaml into Lua scripts for Redis and
// native Go limiters. It is the compiler behind cmd/gen.
//
// # Pipeline
//
// Load parses the YAML (errors carry file:line), parses each algorithm's
// logic, resolves names and types, and runs Analyze; the result is a Spec,
// the IR every emitter reads. Generate turns a Spec into files, by path,
// without I/O: lua/<name>.lua, lua/manifest.json, lua/scripts_gen.go,
// goimpl/<name>_gen.go and goimpl/result_gen.go. Emitters are generic over
// the IR: nothing in this package names an algorithm.
//
// # The spec
//
// constants: NAME: integer. NOW_MAX and COST_MAX bound the per-call inputs
// now_ms and cost. reply: the fields every decision returns, in order,
// each int or bool. algorithms: a list, each with
//
//	name, doc
//	params:  name, min, max, doc           integer domains, checked per call
//	require: expr, doc                     joint constraints on parameters;
//	                                       doc is the error message
//	state:   name, key, type, doc, fields  key is "{key}" + a constant suffix,
//	                                       so every key of one call shares the
//	                                       hash tag and one cluster slot
//	  fields: name, min, max, default, doc  expressions over parameters
//	logic:   the decision, in the language below
//
// # The logic language
//
// Statements:
//
//	let NAME = EXPR                      immutable, block-scoped, must be used
//	if EXPR { ... } else { ... }
//	store STATE { FIELD = EXPR, ... } ttl EXPR
//	reply { FIELD = EXPR, ... }          last statement, outside any if
//
// Expressions are int or bool: integer literals, constants, parameters,
// now, cost, STATE.FIELD (the value stored when the call began, clamped
// into the field's domain; the default when the key is absent), unary - and
// !, + - * / % (floor division and modulo), comparisons (not chained),
// && ||, min(a, b), max(a, b), ceildiv(a, b), and if C then A else B.
// Comments run from # to the end of the line.
//
// A store writes every field of the key and sets its TTL, in ms from now;
// a store without ttl does not parse, and one whose ttl may be below 1 ms
// is rejected. Only stores write: reads happen once, before the logic.
//
// # Exactness
//
// Lua numbers are doubles, exact up to 2^53. The analysis in bounds.go
// gives every integer value symbolic bounds over the parameters and
// proves, from the declared domains and the requirements, that it stays
// within ±(2^53-1); where it cannot, it turns the bound into a runtime
// check on the parameters (Algorithm.Checks), which both targets evaluate
// before deciding and which refuse the parameters with BADINPUT. Operands
// of * / % ceildiv must be provably non-negative and divisors at least 1;
// for each division the dividend plus the divisor must also stay below
// 2^53, under which floor(a / b) computed in doubles is exact. The
// analysis does not follow branch conditions: write max(0, x) where a
// branch guarantees x >= 0.
//
// # Extending
//
// A new algorithm is a spec entry. A new state type (a sorted set, a list)
// is a StateKind with its reads and writes in the parser, the analysis and
// each emitter. A new target language is one more emitter over the same
// Spec, added to Generate, with a conformance target to prove it.
package gen
