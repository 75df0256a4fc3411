package gen

import (
	"fmt"
	"strings"
)

// goZsetAgg is an aggregate over a zset's entries src, already cut to its
// score range, as the Lua script computes it (see index.go): from their
// count, the entry at the top, or their running sums, by the helpers of
// package kit. An entry the aggregate reads is the argument of a function
// literal; d is the value when no entry counts.
func goZsetAgg(a *Algorithm, st aggStep, src, d string) string {
	ag, plan := st.Agg, st.Index
	switch {
	case plan.kind == byLast:
		return fmt.Sprintf("kit.Last(%s, %s, %s)", src, goEntryFunc(a, st, ag.V), d)
	case plan.kind == byCount && ag.Fn == Sum:
		return fmt.Sprintf("kit.CountSum(%s, %d, %d)", src, plan.k, ag.Cap)
	case plan.kind == byCount:
		return fmt.Sprintf("kit.CountReach(%s, %d, %s, %s, %s)", src, plan.k, goExact.print(ag.N), goEntryFunc(a, st, ag.R), d)
	}
	runs := "(*" + goEntryType(a, ag.It.State) + ").runs"
	if ag.Fn == Sum {
		return fmt.Sprintf("kit.RunSum(%s, %s, %s, %d)", src, runs, goConstName(runModName), ag.Cap)
	}
	return fmt.Sprintf("kit.RunReach(%s, %s, %s, %s, %d, %s, %s)", src, runs, goExact.print(ag.N), goConstName(runModName), ag.Cap,
		goEntryFunc(a, st, ag.R), d)
}

// goEntryFunc is a function literal of an aggregate's entry that returns v.
func goEntryFunc(a *Algorithm, st aggStep, v Expr) string {
	return fmt.Sprintf("func(%s *%s) %s { return %s }", goName(st.Agg.It.Name), goEntryType(a, st.Agg.It.State), goValueType(st.Agg), goExact.print(v))
}

// goRuns declares the runs method of a zset's entry type whose running
// sum it keeps: the sum and the value it adds, read by kit.RunSum and
// kit.RunReach.
func goRuns(w *writer, t string, s *State) {
	w.line("// runs is the entry's running sum and the value it adds (see kit.RunSum).")
	w.line("func (x *%s) runs() (run, v int64) { return x.%s, x.%s }", t, goExported(s.Running.Name), goExported(s.RunOf.Name))
	w.line("")
}

// goZsetAdd declares the method of a's state that adds an entry x to a
// zset's entries as the Lua script does: at the end when adds continue
// the newest entry (merged into it when the score is the same and the
// zset merges), else in order of score and member; then it keeps the
// newest keep (the zset's max_entries).
func goZsetAdd(w *writer, a *Algorithm, st *State) {
	list, t := "s."+goEntries(st), goEntryType(a, st)
	score := goExported(st.Entry[0].Name)
	w.line("// %s adds x to the entries of %s, keeping the newest keep.", goName("add_"+st.Name), st.Name)
	w.line("func (s *%s) %s(x %s, keep int64) {", goStateType(a), goName("add_"+st.Name), t)
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
	w.line("if int64(len(%s)) > keep {", list)
	w.line("%s = %s[int64(len(%s))-keep:]", list, list, list)
	w.line("}")
	w.line("}")
	w.line("")
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
