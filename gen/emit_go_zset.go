package gen

import (
	"fmt"
	"strings"
)

// goZsetAgg computes an aggregate over a zset's entries src, already cut
// to its score range, as the Lua script does (see index.go): from their
// count, the entry at the top, or their running sums.
func goZsetAgg(w *writer, st aggStep, src string) {
	ag, plan, name := st.Agg, st.Index, st.Name
	it := goName(ag.It.Name)
	// bind declares the iterator as the entry at index i, when used.
	bind := func(i string, uses ...Expr) {
		for _, e := range uses {
			if refersTo(e, ag.It) {
				w.line("%s := %s[%s]", it, src, i)
				return
			}
		}
	}
	w.line("if %s__n := int64(len(%s)); %s__n > 0 {", name, src, name)
	switch {
	case plan.kind == byLast:
		bind(name+"__n-1", ag.V)
		w.line("%s = %s", name, goExact.print(ag.V))
	case plan.kind == byCount && ag.Fn == Sum:
		count := name + "__n"
		if plan.k != 1 {
			count += fmt.Sprintf("*%d", plan.k)
		}
		w.line("%s = min(%s, %d)", name, count, ag.Cap)
	case plan.kind == byCount:
		w.line("if %s__r := max(0, kit.CeilDiv(max(0, %s), %d)-1); %s__r < %s__n {", name, goExact.print(ag.N), plan.k, name, name)
		bind(name+"__r", ag.R)
		w.line("%s = %s", name, goExact.print(ag.R))
		w.line("}")
	default:
		s := ag.It.State
		run, of := goExported(s.Running.Name), goExported(s.RunOf.Name)
		w.line("%s__base := %s[0].%s - %s[0].%s", name, src, run, src, of)
		w.line("%s__upto := func(i int64) int64 { return min(kit.RunDiff(%s[i].%s, %s__base, %s), %d) }", name, src, run, name, goConstName(runModName), ag.Cap)
		if ag.Fn == Sum {
			w.line("%s = %s__upto(%s__n - 1)", name, name, name)
			break
		}
		w.line("if %s__need := %s; %s__upto(%s__n-1) >= %s__need {", name, goExact.print(ag.N), name, name, name)
		w.line("%s__i := int64(kit.SearchEntries(int(%s__n), func(i int) bool { return %s__upto(int64(i)) >= %s__need }))", name, name, name, name)
		bind(name+"__i", ag.R)
		w.line("%s = %s", name, goExact.print(ag.R))
		w.line("}")
	}
	w.line("}")
}

// goZsetAdd adds an entry to a zset's entries as the Lua script does: at
// the end when adds continue the newest entry (merged into it when the
// score is the same and the zset merges), else in order of score and
// member; then it keeps the newest MaxEntries.
func goZsetAdd(w *writer, s *Add, d dialect, list, lit string) {
	st := s.State
	score := goExported(st.Entry[0].Name)
	w.line("{")
	w.line("x := %s", lit)
	if !st.GrowsAtEnd() {
		w.line("i := len(%s)", list)
		w.line("for i > 0 && (x.%s < %s[i-1].%s || x.%s == %s[i-1].%s && x.member() < %s[i-1].member()) {", score, list, score, score, list, score, list)
		w.line("i--")
		w.line("}")
		w.line("if i == 0 || x != %s[i-1] { // ZADD of a member already there adds nothing", list)
		w.line("%s = kit.InsertAt(%s, i, x)", list, list)
		w.line("}")
	} else {
		top := "top"
		w.line("if n := len(%s); n > 0 {", list)
		w.line("%s := %s[n-1]", top, list)
		w.line("x.%s = max(x.%s, %s.%s) // the set grows at its end", score, score, top, score)
		if st.Running != nil {
			w.line("x.%s = (%s.%s + x.%s) %% %s", goExported(st.Running.Name), top, goExported(st.Running.Name), goExported(st.RunOf.Name),
				goConstName(runModName))
		}
		if st.Merge != nil {
			m := goExported(st.Merge.Name)
			w.line("if x.%s == %s.%s { // merge into it", score, top, score)
			w.line("x.%s += %s.%s", m, top, m)
			w.line("%s = %s[:n-1]", list, list)
			w.line("}")
		}
		if st.Running != nil {
			w.line("} else {")
			w.line("x.%s = x.%s %% %s", goExported(st.Running.Name), goExported(st.RunOf.Name), goConstName(runModName))
		}
		w.line("}")
		w.line("%s = append(%s, x)", list, list)
	}
	w.line("if n := %s; int64(len(%s)) > n { // keep the newest %s", goTyped(d.print(st.MaxEntries), st.MaxEntries), list, Format(st.MaxEntries))
	w.line("%s = %s[int64(len(%s))-n:]", list, list, list)
	w.line("}")
	w.line("}")
}

// goMember renders the member method of a zset's entry type: its fields
// joined by ":", the second zero-padded when it orders equal scores.
func goMember(w *writer, t string, s *State) {
	var vals []string
	for _, f := range s.Entry {
		vals = append(vals, "x."+goExported(f.Name))
	}
	w.line("// member is the entry's member in the sorted set, which orders")
	w.line("// entries of equal score.")
	w.line("func (x *%s) member() string { return kit.JoinEntry(%d, %s) }", t, s.PadWidth, strings.Join(vals, ", "))
	w.line("")
}
