package gen

// usage records what a body reads, so that an emitter reads only that
// state and declares no unused variable.
type usage struct {
	params  bool
	states  map[*State]bool // states whose fixed fields are read
	fields  map[*Field]bool
	entries map[*State]bool // collections whose entries are read
	strings map[*StrInput]bool
}

func usedNames(body []Stmt) usage {
	u := usage{states: map[*State]bool{}, fields: map[*Field]bool{}, entries: map[*State]bool{}, strings: map[*StrInput]bool{}}
	var visit func(e Expr)
	visit = func(e Expr) {
		switch e := e.(type) {
		case *ParamRef:
			u.params = true
		case *StrRef:
			u.strings[e.In] = true
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
			for _, x := range []Expr{e.Where, e.V, e.N, e.R, e.D} {
				visit(x)
			}
		case *Unary:
			visit(e.X)
		case *Binary:
			visit(e.X)
			visit(e.Y)
		case *Call:
			for _, x := range e.Args {
				visit(x)
			}
		case *Cond:
			visit(e.C)
			visit(e.A)
			visit(e.B)
		}
	}
	walkStmts(body, visit)
	walkStmtsOnly(body, func(s Stmt) {
		switch s := s.(type) {
		case *Drop:
			if s.State.Kind == Hash {
				u.entries[s.State] = true // a hash drops the fields it read
				visit(s.State.MaxEntries)
			}
		case *Show:
			u.entries[s.State] = true
			visit(s.State.MaxEntries)
		}
	})
	return u
}

// walkStmts calls visit on every top-level expression of body.
func walkStmts(body []Stmt, visit func(Expr)) {
	for _, s := range body {
		switch s := s.(type) {
		case *Let:
			visit(s.X)
		case *If:
			visit(s.Cond)
			walkStmts(s.Then, visit)
			walkStmts(s.Else, visit)
		case *Store:
			for _, v := range s.Values {
				visit(v)
			}
			visit(s.TTL)
		case *Add:
			for _, v := range s.Values {
				visit(v)
			}
			visit(s.TTL)
		case *Drop:
			visit(s.Upto)
		case *Show:
			visit(s.Cond)
		case *Reply:
			for _, v := range s.Values {
				visit(v)
			}
		}
	}
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

// aggregates returns the aggregates in e, in evaluation order; an
// aggregate holds none (the parser refuses nesting).
func aggregates(e Expr) []*Agg {
	var out []*Agg
	var visit func(e Expr)
	visit = func(e Expr) {
		switch e := e.(type) {
		case *Agg:
			out = append(out, e)
		case *Unary:
			visit(e.X)
		case *Binary:
			visit(e.X)
			visit(e.Y)
		case *Call:
			for _, x := range e.Args {
				visit(x)
			}
		case *Cond:
			visit(e.C)
			visit(e.A)
			visit(e.B)
		}
	}
	visit(e)
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
		return append(append([]Expr(nil), s.Values...), s.TTL)
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
		switch e := e.(type) {
		case *EntryRef:
			found = found || e.It == it
		case *Unary:
			visit(e.X)
		case *Binary:
			visit(e.X)
			visit(e.Y)
		case *Call:
			for _, x := range e.Args {
				visit(x)
			}
		case *Cond:
			visit(e.C)
			visit(e.A)
			visit(e.B)
		}
	}
	if e != nil {
		visit(e)
	}
	return found
}
