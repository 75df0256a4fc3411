package gen

import "slices"

// usage records what a body reads, so that an emitter reads only that
// state and declares no unused variable.
type usage struct {
	states  map[*State]bool // states whose fixed fields are read
	fields  map[*Field]bool
	entries map[*State]bool // collections whose entries are read
}

func usedNames(body []Stmt) usage {
	u := usage{states: map[*State]bool{}, fields: map[*Field]bool{}, entries: map[*State]bool{}}
	var visit func(e Expr)
	visit = func(e Expr) {
		switch e := e.(type) {
		case *FieldRef:
			u.fields[e.F] = true
			u.states[e.F.State] = true
			for _, d := range []Expr{e.F.Min, e.F.Max, e.F.Default} {
				visit(d)
			}
		case *EntryRef:
			visit(e.F.Min)
			visit(e.F.Max)
		case *Agg:
			u.entries[e.It.State] = true
			visit(e.It.State.MaxEntries)
		}
		for _, x := range children(e) {
			visit(x)
		}
	}
	walkStmts(body, visit)
	walkStmtsOnly(body, func(s Stmt) {
		switch s := s.(type) {
		case *Show:
			u.entries[s.State] = true
			visit(s.State.MaxEntries)
		}
	})
	return u
}

// children lists the operands of an expression; an aggregate's are its
// parts, those not given nil.
func children(e Expr) []Expr {
	switch e := e.(type) {
	case *Unary:
		return []Expr{e.X}
	case *Binary:
		return []Expr{e.X, e.Y}
	case *Call:
		return e.Args
	case *Cond:
		return []Expr{e.C, e.A, e.B}
	case *Agg:
		return given(e.Where, e.V, e.N, e.R, e.D)
	}
	return nil
}

// given is xs without the nil ones.
func given(xs ...Expr) []Expr {
	return slices.DeleteFunc(slices.Clone(xs), func(x Expr) bool { return x == nil })
}

// walkStmts calls visit on every top-level expression of body, in
// order, those of an if's branches after its condition.
func walkStmts(body []Stmt, visit func(Expr)) {
	for _, s := range body {
		for _, x := range stmtExprs(s) {
			visit(x)
		}
		if s, ok := s.(*If); ok {
			walkStmts(s.Then, visit)
			walkStmts(s.Else, visit)
		}
	}
}

// InFlight reports whether a's decisions write no state: alone they
// would charge nothing, so that only holds (docs/semantics.md, "Holds")
// use its quota, which then counts what is held at once, the requests in
// flight (concurrency). Its script, and a policy script's limit of it,
// refuse every decision (kit.MsgInFlight); its holding policies decide it.
func (a *Algorithm) InFlight() bool { return !writesIn(a.Body) }

// Shapes reports whether a decision of a may tell an admitted request to
// wait: one of its replies gives the reply field delay_ms (of reply, the
// spec's fields) another value than the integer 0. Never in a spec
// without delay_ms.
func (a *Algorithm) Shapes(reply []*ReplyField) bool {
	i := slices.IndexFunc(reply, func(f *ReplyField) bool { return f.Name == "delay_ms" })
	shapes := false
	walkStmtsOnly(a.Body, func(s Stmt) {
		r, ok := s.(*Reply)
		if !ok || i < 0 || i >= len(r.Values) || r.Values[i] == nil {
			return
		}
		if lit, ok := r.Values[i].(*Lit); !ok || lit.V != 0 {
			shapes = true
		}
	})
	return shapes
}

// walkStmtsOnly calls visit on every statement of body, nested ones too.
func walkStmtsOnly(body []Stmt, visit func(Stmt)) {
	for _, s := range body {
		visit(s)
		if i, ok := s.(*If); ok {
			walkStmtsOnly(i.Then, visit)
			walkStmtsOnly(i.Else, visit)
		}
	}
}

// guarded is an aggregate and the conditions under which its value is
// used: those of the if-then-else branches it sits in. The emitters
// compute it only when they hold, so that a decision does not scan
// entries for a value it then ignores.
type guarded struct {
	ag    *Agg
	guard []Expr // all must hold; nil: always
}

// writesIn reports whether any statement of body, nested ones too, writes.
func writesIn(body []Stmt) bool { return len(writtenStates(body)) > 0 }

// writtenStates is the set of states the statements of body, nested ones
// too, may write.
func writtenStates(body []Stmt) map[*State]bool {
	out := map[*State]bool{}
	walkStmtsOnly(body, func(s Stmt) {
		switch s := s.(type) {
		case *Store:
			out[s.State] = true
		case *Add:
			out[s.State] = true
		case *Drop:
			out[s.State] = true
		case *Clear:
			out[s.State] = true
		}
	})
	return out
}

// aggregates returns the aggregates in e, in evaluation order, each with
// its guard; an aggregate holds none (the parser refuses nesting).
func aggregates(e Expr) []guarded {
	var out []guarded
	var visit func(e Expr, guard []Expr)
	visit = func(e Expr, guard []Expr) {
		with := func(c Expr) []Expr { return append(append([]Expr(nil), guard...), c) }
		switch e := e.(type) {
		case *Agg:
			out = append(out, guarded{e, guard})
		case *Cond:
			visit(e.C, guard)
			visit(e.A, with(e.C))
			visit(e.B, with(&Unary{Op: OpNot, X: e.C}))
		default:
			for _, x := range children(e) {
				visit(x, guard)
			}
		}
	}
	visit(e, nil)
	return out
}

// stmtExprs lists the expressions of one statement, not of nested ones.
func stmtExprs(s Stmt) []Expr {
	switch s := s.(type) {
	case *Let:
		return []Expr{s.X}
	case *If:
		return []Expr{s.Cond}
	case *Store:
		return append(append([]Expr(nil), s.Values...), s.TTL)
	case *Add:
		return append(given(s.Values...), s.TTL) // a nil value: the running sum, the generator's
	case *Drop:
		return []Expr{s.Upto}
	case *Show:
		return []Expr{s.Cond}
	case *Reply:
		return s.Values
	}
	return nil
}

// refersTo reports whether e reads the entry bound to it.
func refersTo(e Expr, it *Iter) bool {
	found := false
	var visit func(e Expr)
	visit = func(e Expr) {
		if r, ok := e.(*EntryRef); ok {
			found = found || r.It == it
		}
		for _, x := range children(e) {
			visit(x)
		}
	}
	if e != nil {
		visit(e)
	}
	return found
}

// scoreBounds are the bounds an aggregate's where clause puts on the
// first field (the score) of a zset's entries: comparisons of it with
// values that do not depend on the entry, joined by &&. exact says the
// clause is nothing more, so that reading only the entries within the
// bounds reads just those the clause keeps.
type scoreBounds struct {
	min, max         Expr // nil: unbounded
	minOpen, maxOpen bool // the bound itself is excluded
	exact            bool
}

func zsetBounds(ag *Agg) scoreBounds {
	b := scoreBounds{exact: true}
	score := ag.It.State.Entry[0]
	var terms []Expr
	var split func(e Expr)
	split = func(e Expr) {
		if x, ok := e.(*Binary); ok && x.Op == OpAnd {
			split(x.X)
			split(x.Y)
			return
		}
		terms = append(terms, e)
	}
	if ag.Where != nil {
		split(ag.Where)
	}
	isScore := func(e Expr) bool {
		r, ok := e.(*EntryRef)
		return ok && r.It == ag.It && r.F == score
	}
	for _, t := range terms {
		x, ok := t.(*Binary)
		flipped, orders := Op(0), false
		if ok {
			flipped, orders = x.Op.Flip()
		}
		if !orders {
			b.exact = false
			continue
		}
		op, v := x.Op, x.Y
		if !isScore(x.X) {
			op, v = flipped, x.X
			if !isScore(x.Y) {
				b.exact = false
				continue
			}
		}
		if refersTo(v, ag.It) {
			b.exact = false
			continue
		}
		switch {
		case (op == OpGt || op == OpGe) && b.min == nil:
			b.min, b.minOpen = v, op == OpGt
		case (op == OpLt || op == OpLe) && b.max == nil:
			b.max, b.maxOpen = v, op == OpLt
		case op == OpEq && b.min == nil && b.max == nil:
			b.min, b.max = v, v
		default:
			b.exact = false
		}
	}
	return b
}
