package gen

import "fmt"

// The lowering both code emitters share: what the generated code
// computes, and in what order, decided once here; emit_go.go and
// emit_lua.go only print it in their language.

// aggStep is one aggregate lowered to a local: computed just before the
// statement that holds it, only when every condition of Guard holds
// (else its value is not used), starting from Init and then read from the
// collection's entries, by index for a zset (Index) or by a loop over a
// list.
type aggStep struct {
	Agg  *Agg
	Name string // the local: the let's when the let is exactly the aggregate
	// Init is the value when no entry counts: 0 for a sum (nil here), D
	// for last and reach.
	Init  Expr
	Guard []Expr
	// Index is the plan of an aggregate over a zset (see index.go); for a
	// list, the entries are visited in order.
	Index zsetIndex
	// Bind says whether the computation reads the entry it visits (its
	// where clause, its values or its result refer to it); a loop that
	// does not names no variable.
	Bind bool
}

// lowerAggregates lowers the aggregates of statement s, in evaluation
// order, and names each in names: agg__<n>, or the let's name (as local
// writes a name in the target) when s is a let of exactly the aggregate.
func lowerAggregates(s Stmt, names map[*Agg]string, local func(string) string) []aggStep {
	var steps []aggStep
	for _, e := range stmtExprs(s) {
		for _, g := range aggregates(e) {
			ag := g.ag
			name := fmt.Sprintf("agg__%d", len(names)+1)
			if l, ok := s.(*Let); ok && l.X == ag {
				name = local(l.Name)
			}
			names[ag] = name
			st := aggStep{Agg: ag, Name: name, Guard: g.guard,
				Bind: refersTo(ag.Where, ag.It) || refersTo(ag.V, ag.It) || refersTo(ag.R, ag.It)}
			if ag.Fn != Sum {
				st.Init = ag.D
			}
			if ag.It.State.Kind == ZSet {
				st.Index, _ = planIndex(ag) // the parser has refused any other
			}
			steps = append(steps, st)
		}
	}
	return steps
}

// computedInPlace reports whether the let s is exactly an aggregate that
// lowerAggregates has computed under the let's own name (as local writes
// it): the let itself then emits nothing.
func computedInPlace(s *Let, names map[*Agg]string, local func(string) string) bool {
	ag, ok := s.X.(*Agg)
	return ok && names[ag] == local(s.Name)
}

// guardText joins the conditions of a step's guard with and (&& or
// and), each printed by d with its aggregates named.
func (st aggStep) guardText(d dialect, and string) string {
	text := ""
	for i, c := range st.Guard {
		if i > 0 {
			text += " " + and + " "
		}
		text += d.prec(c, 3)
	}
	return text
}

// naming returns d printing each aggregate as the local names gives it.
func naming(d dialect, names map[*Agg]string) dialect {
	d.agg = func(_ dialect, e *Agg) string { return names[e] }
	return d
}
