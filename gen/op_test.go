package gen

import (
	"math/big"
	"testing"
)

// opExpr is op applied to the literals x and y (y unused by -x).
func opExpr(op Op, x, y int64) Expr {
	a, b := &Lit{V: x}, &Lit{V: y}
	switch {
	case op == OpNeg || op == OpNot:
		if op == OpNot {
			return &Unary{Op: op, X: &BoolLit{V: true}}
		}
		return &Unary{Op: op, X: a}
	case op >= OpMin:
		return &Call{Fn: op, Args: []Expr{a, b}}
	case op == OpAnd || op == OpOr:
		return &Binary{Op: op, X: &BoolLit{V: true}, Y: &BoolLit{V: false}}
	}
	return &Binary{Op: op, X: a, Y: b}
}

// TestOpsRendered prints every operator in the spec, Go (exact and
// saturating) and Lua: a new Op without a rendering fails here.
func TestOpsRendered(t *testing.T) {
	want := map[Op][4]string{ // spec, Go exact, Go saturating, Lua
		OpAdd:     {"7 + 2", "7 + 2", "satAdd(7, 2)", "7 + 2"},
		OpSub:     {"7 - 2", "7 - 2", "satSub(7, 2)", "7 - 2"},
		OpMul:     {"7 * 2", "7 * 2", "satMul(7, 2)", "7 * 2"},
		OpDiv:     {"7 / 2", "7 / 2", "satDiv(7, 2)", "((7 - 7 % 2) / 2)"},
		OpMod:     {"7 % 2", "7 % 2", "7 % 2", "7 % 2"},
		OpLt:      {"7 < 2", "7 < 2", "7 < 2", "7 < 2"},
		OpLe:      {"7 <= 2", "7 <= 2", "7 <= 2", "7 <= 2"},
		OpGt:      {"7 > 2", "7 > 2", "7 > 2", "7 > 2"},
		OpGe:      {"7 >= 2", "7 >= 2", "7 >= 2", "7 >= 2"},
		OpEq:      {"7 == 2", "7 == 2", "7 == 2", "7 == 2"},
		OpNe:      {"7 != 2", "7 != 2", "7 != 2", "7 ~= 2"},
		OpAnd:     {"true && false", "true && false", "true && false", "true and false"},
		OpOr:      {"true || false", "true || false", "true || false", "true or false"},
		OpNeg:     {"-7", "-7", "-7", "-7"},
		OpNot:     {"!true", "!true", "!true", "not true"},
		OpMin:     {"min(7, 2)", "min(7, 2)", "min(7, 2)", "(2 < 7 and 2 or 7)"},
		OpMax:     {"max(7, 2)", "max(7, 2)", "max(7, 2)", "(2 > 7 and 2 or 7)"},
		OpCeilDiv: {"ceildiv(7, 2)", "exact.CeilDiv(7, 2)", "satCeilDiv(7, 2)", "((7 + (0 - 7) % 2) / 2)"},
	}
	cat := CatalogueOutput()
	dialects := [4]dialect{specDialect, goExact, goSaturating(&cat), luaExact}
	for op := range numOps {
		w, ok := want[op]
		if !ok {
			t.Errorf("operator %d (%q) has no expected rendering in this test", op, op)
			continue
		}
		for i, d := range dialects {
			if d.ops[op].text == "" {
				t.Errorf("%s: no rendering in dialect %d", op, i)
				continue
			}
			if got := d.print(opExpr(op, 7, 2)); got != w[i] {
				t.Errorf("%s in dialect %d: got %q, want %q", op, i, got, w[i])
			}
		}
	}
}

// TestOpsBounded checks that the bound analysis has a rule for every
// integer operator, and that the bound it gives holds the value: 7 op 2.
func TestOpsBounded(t *testing.T) {
	value := map[Op]int64{
		OpAdd: 9, OpSub: 5, OpMul: 14, OpDiv: 3, OpMod: 1,
		OpNeg: -7, OpMin: 2, OpMax: 7, OpCeilDiv: 4,
	}
	for op := range numOps {
		e := opExpr(op, 7, 2)
		if op.Bool() {
			if e.Type() != Bool {
				t.Errorf("%s: a bool operator, typed %s", op, e.Type())
			}
			continue // the analysis bounds its integer operands (cond)
		}
		v, ok := value[op]
		if !ok {
			t.Errorf("operator %s has no expected value in this test", op)
			continue
		}
		an := &analyzer{sp: &Spec{}, alg: &Algorithm{Name: "t"}, lets: map[*Let]bound{},
			facts: map[string]*big.Int{}, seen: map[string]bool{}, maxBig: big.NewInt(MaxSafe)}
		b := an.value(e)
		lo, _ := an.static(b.lo)
		_, hi := an.static(b.hi)
		if lo.Cmp(big.NewInt(v)) > 0 || hi.Cmp(big.NewInt(v)) < 0 || len(an.errs) > 0 {
			t.Errorf("%s: bound [%s, %s] does not hold %d (errors %v)", op, lo, hi, v, an.errs)
		}
	}
}
