package gen

// settle decides what the parameters' domains decide alone, as an
// expression is parsed: a comparison of a parameter with a literal that
// holds over all of its domain or over none of it, and the !, &&, || and
// if-then-else it then decides. Tier 1's "t.limit > 0" is true when limit
// is at least 1, so that the unrolled code drops the tier's checks of it
// (see Tier); parameters are checked against their domains before any
// logic runs. A let whose value settles is read as that value, and not
// emitted (settled).
func settle(e Expr) Expr {
	switch e := e.(type) {
	case *Binary:
		return settleBinary(e)
	case *Unary:
		if b, ok := e.X.(*BoolLit); ok && e.Op == OpNot {
			return &BoolLit{V: !b.V}
		}
	case *Cond:
		if b, ok := e.C.(*BoolLit); ok {
			return pick(b.V, e.A, e.B)
		}
	}
	return e
}

func settleBinary(e *Binary) Expr {
	if e.Op == OpAnd || e.Op == OpOr {
		for _, pair := range [][2]Expr{{e.X, e.Y}, {e.Y, e.X}} {
			if b, ok := pair[0].(*BoolLit); ok {
				// true && y is y, false || y is y; else the literal decides
				return pick[Expr](b.V == (e.Op == OpAnd), pair[1], b)
			}
		}
		return e
	}
	prm, ok1 := e.X.(*ParamRef)
	lit, ok2 := e.Y.(*Lit)
	if !ok1 || !ok2 {
		return e
	}
	// an ordering holds over all of [Min, Max] or over none of it when it
	// holds at both ends or at neither
	lo, okLo := order(e.Op, prm.P.Min, lit.V)
	hi, _ := order(e.Op, prm.P.Max, lit.V)
	outside := lit.V < prm.P.Min || lit.V > prm.P.Max
	switch {
	case okLo && lo == hi:
		return &BoolLit{V: lo}
	case outside && (e.Op == OpEq || e.Op == OpNe):
		return &BoolLit{V: e.Op == OpNe} // a value the parameter never takes
	}
	return e
}

// order is a < b, a <= b, a > b or a >= b by op; ok is false for any
// other op.
func order(op Op, a, b int64) (holds, ok bool) {
	switch op {
	case OpLt:
		return a < b, true
	case OpLe:
		return a <= b, true
	case OpGt:
		return a > b, true
	case OpGe:
		return a >= b, true
	}
	return false, false
}

func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// settled tells whether s is a let whose value the domains decided: it
// is read as that value (letRef), and emitted nowhere.
func settled(s Stmt) bool {
	l, ok := s.(*Let)
	if !ok {
		return false
	}
	_, ok = l.X.(*BoolLit)
	return ok
}

// letRef is a read of l: its value when the domains decided it, else l.
func letRef(l *Let) Expr {
	l.uses++
	if b, ok := l.X.(*BoolLit); ok {
		return b
	}
	return &VarRef{L: l}
}
