package gen

// Op is an operator of the logic language: a binary operator (Binary), a
// unary one (Unary) or a function of two integers (Call). Each has a
// rendering in every dialect (goExactOps, goSaturatingOps, luaOps) and a
// rule in the bound analysis (analyzer.opBound); op_test.go checks that
// none is missing.
type Op uint8

// The operators, by kind: integer arithmetic, comparisons, logic, the
// unary operators and the functions.
const (
	OpAdd Op = iota // +
	OpSub           // -
	OpMul           // *
	OpDiv           // / (floor division)
	OpMod           // % (floor modulo)

	OpLt // <
	OpLe // <=
	OpGt // >
	OpGe // >=
	OpEq // ==
	OpNe // !=

	OpAnd // &&
	OpOr  // ||

	OpNeg // unary -
	OpNot // unary !

	OpMin     // min(a, b)
	OpMax     // max(a, b)
	OpCeilDiv // ceildiv(a, b)

	numOps // the number of operators
)

// opText is each operator as the spec writes it.
var opText = [numOps]string{
	OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpMod: "%",
	OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=", OpEq: "==", OpNe: "!=",
	OpAnd: "&&", OpOr: "||",
	OpNeg: "-", OpNot: "!",
	OpMin: "min", OpMax: "max", OpCeilDiv: "ceildiv",
}

// String is the operator as the spec writes it.
func (o Op) String() string { return opText[o] }

// Prec is the precedence of a binary operator, shared by the spec, Lua
// and Go: || 1, && 2, comparisons 3, + - 4, * / % 5; 6 for the others,
// which bind tightest.
func (o Op) Prec() int {
	switch {
	case o == OpOr:
		return 1
	case o == OpAnd:
		return 2
	case o.Comparison():
		return 3
	case o == OpAdd || o == OpSub:
		return 4
	case o == OpMul || o == OpDiv || o == OpMod:
		return 5
	}
	return 6
}

// Comparison reports whether o compares two integers.
func (o Op) Comparison() bool { return o >= OpLt && o <= OpNe }

// Bool reports whether o's value is a bool: a comparison, && || or !.
func (o Op) Bool() bool { return o >= OpLt && o <= OpOr || o == OpNot }

// Flip is the comparison that holds with its operands swapped (a < b is
// b > a); ok is false for an operator that is not an ordering.
func (o Op) Flip() (Op, bool) {
	switch o {
	case OpLt:
		return OpGt, true
	case OpLe:
		return OpGe, true
	case OpGt:
		return OpLt, true
	case OpGe:
		return OpLe, true
	case OpEq:
		return OpEq, true
	}
	return o, false
}

// binaryOps are the binary operators by their text in the spec.
var binaryOps = func() map[string]Op {
	m := map[string]Op{}
	for o := OpAdd; o <= OpOr; o++ {
		m[o.String()] = o
	}
	return m
}()

// funcOps are the functions by name.
var funcOps = map[string]Op{"min": OpMin, "max": OpMax, "ceildiv": OpCeilDiv}

// AggFn is the function of an aggregate.
type AggFn uint8

// The aggregates: sum, last and reach (see Agg).
const (
	Sum AggFn = iota
	Last
	Reach
)

var aggNames = [...]string{Sum: "sum", Last: "last", Reach: "reach"}

// String is the aggregate's name in the spec.
func (f AggFn) String() string { return aggNames[f] }

// aggFns are the aggregates by name.
var aggFns = map[string]AggFn{"sum": Sum, "last": Last, "reach": Reach}
