package gen

import (
	"fmt"
	"strings"
)

// goReserved are names a generated local must not take: Go keywords,
// predeclared identifiers, and the locals and helpers of the generated code.
var goReserved = words(`break case chan const continue default defer else
	fallthrough for func go goto if import interface map package range return
	select struct switch type var
	bool int64 string error true false nil min max len cap new make append
	l p e st sh key nowMs cost now in out i n x
	l p c e st sh t k h key hash args nowMs out i n x kit limitspec time strconv maphash
	pick satAdd satSub satMul satDiv satCeilDiv outside millis unknown refused exact`)

// goName turns snake_case into camelCase, avoiding reserved names.
func goName(n string) string {
	parts := strings.Split(n, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	s := strings.Join(parts, "")
	if goReserved[s] {
		return s + "_"
	}
	return s
}

// goExported turns snake_case into an exported Go name.
func goExported(n string) string {
	s := goName(strings.TrimSuffix(n, "_"))
	s = strings.TrimSuffix(s, "_")
	return strings.ToUpper(s[:1]) + s[1:]
}

// goType is the limiter type of an algorithm: fixed_window -> FixedWindow,
// gcra -> GCRA.
func goType(a *Algorithm) string { return goTypeName(a.Name) }

// goInitialisms are the words a Go type name writes in upper case.
var goInitialisms = words("gcra ip id api url http")

// goTypeName is the exported Go name of a snake_case name, its
// initialisms upper case: ip_user -> IPUser, daily_quota -> DailyQuota.
func goTypeName(name string) string {
	parts := strings.Split(name, "_")
	for i, p := range parts {
		if goInitialisms[p] {
			parts[i] = strings.ToUpper(p)
		} else if p != "" {
			parts[i] = goExported(p)
		}
	}
	return strings.Join(parts, "")
}

func goStateType(a *Algorithm) string { return goName(a.Name) + "State" }

func goFieldVar(f *Field) string { return goName(f.State.Name + "_" + f.Name) }

func goStructField(f *Field) string { return goName(f.State.Name + "_" + f.Name) }

func goExpField(s *State) string { return goName(s.Name + "_exp") }

// goEntries is the state struct's field holding a collection's entries.
func goEntries(s *State) string { return goName(s.Name + "_entries") }

// goEntryType is the type of one entry of a collection.
func goEntryType(a *Algorithm, s *State) string { return goName(a.Name) + goExported(s.Name) + "Entry" }

// goLeaf renders literals and references in Go.
func goLeaf(e Expr) string { return goLeafNames().leaf(e) }

// goLeafNames are Go's names of the leaves (a function, since an entry's
// bounds are printed by a dialect that prints leaves).
func goLeafNames() leafNames {
	return leafNames{
		constant: goConstName,
		force:    "c.Force",
		param:    func(p *Param) string { return "p." + goExported(p.Name) },
		input: func(in *Input) string {
			if in.Name == "now" {
				return "nowMs"
			}
			return "c." + goExported(in.Name)
		},
		field: goFieldVar,
		let:   func(l *Let) string { return goName(l.Name) },
		str:   func(in *StrInput) string { return fmt.Sprintf("c.Inputs[%d]", in.Index) },
		entry: func(e *EntryRef) string {
			// clamped into its domain, as the Lua script reads it
			return fmt.Sprintf("min(max(%s.%s, %s), %s)", goName(e.It.Name), goExported(e.F.Name), goDomain(e.F.Min), goDomain(e.F.Max))
		},
	}
}

// goConstName is the Go name of a spec's constant (constants), as the
// generated Go declares it (goConstants): MAX_SKEW_MS is maxSkewMs. The
// parser refuses a let of the same Go name.
func goConstName(name string) string { return goName(strings.ToLower(name)) }

// goConstants declares the spec's constants (constants) in a package of
// generated Go, each with its comments, but those package kit declares
// when kitToo is false (the package reads those from kit).
func goConstants(w *writer, sp *Spec, kitToo bool) {
	w.line("")
	w.line("// The spec's constants, named as the generated code reads them.")
	w.line("const (")
	for _, c := range constants(sp) {
		if kitToo || goKitConsts[c.Name] == "" {
			commentLines(w, "//", c.Comments)
			w.line("%s = %d", goConstName(c.Name), c.Value)
		}
	}
	w.line(")")
}

// goKitConsts are the spec's constants package kit declares, by which
// the decisions in Go read them (kit_test.go checks their values).
var goKitConsts = map[string]string{"NOW_MAX": "kit.NowMax", "COST_MAX": "kit.CostMax"}

// goExactLeaf is goLeaf, but for the constants of goKitConsts, written
// by name.
func goExactLeaf(e Expr) string {
	if l, ok := e.(*Lit); ok && goKitConsts[l.Name] != "" {
		return goKitConsts[l.Name]
	}
	return goLeaf(e)
}

// goDomain renders a domain bound, an expression over parameters and
// constants, as goExact does (goLeaf, which calls it, cannot name the
// variable goExact, built from goLeaf).
func goDomain(e Expr) string { return goExactDialect().print(e) }

// goExact renders decision logic: every value is proven within ±(2^53-1),
// so plain int64 arithmetic is exact, and / and % see no negative operand.
var goExact = goExactDialect()

func goExactDialect() dialect {
	return dialect{
		leaf: goExactLeaf,
		ops:  goExactOps,
		call: callText,
		cond: func(c, a, b string, _ Type) string { return "exact.Pick(" + c + ", " + a + ", " + b + ")" },
	}
}

// goExactOps are Go's operators as the spec's, but ceildiv (exact.CeilDiv).
var goExactOps = func() *[numOps]opForm {
	f := opForms()
	f[OpCeilDiv] = opForm{"exact.CeilDiv", true}
	return f
}()

// goSaturating renders, for the typed limits of o, conditions on
// parameters alone (requirements and the runtime bound checks), whose
// values may pass int64: + - * / ceildiv saturate (package exact, or the
// root's copy of it), which keeps each comparison exact.
func goSaturating(o *Output) dialect {
	f := *goExactOps
	for op, name := range map[Op]string{OpAdd: "Add", OpSub: "Sub", OpMul: "Mul", OpDiv: "Div", OpCeilDiv: "CeilDiv"} {
		f[op] = opForm{o.exactName(name), true}
	}
	pick := o.exactName("Pick")
	return dialect{
		leaf: goLeaf,
		ops:  &f,
		call: callText,
		cond: func(c, a, b string, _ Type) string { return pick + "(" + c + ", " + a + ", " + b + ")" },
	}
}

// goEntryDecl declares the entry type of a collection.
func goEntryDecl(w *writer, a *Algorithm, s *State) {
	t := goEntryType(a, s)
	w.line("// %s is one entry of %s: %s.", t, keyTemplate(s), s.Doc)
	w.line("type %s struct {", t)
	for _, f := range s.Entry {
		w.line("// %s: %s.", goExported(f.Name), f.Doc)
		if f.Type == Str {
			w.line("%s string", goExported(f.Name))
		} else {
			w.line("%s int64", goExported(f.Name))
		}
	}
	w.line("}")
	w.line("")
	if s.Kind == ZSet {
		goMember(w, t, s)
	}
	if s.Running != nil {
		goRuns(w, t, s)
	}
}

// goReads reads a call's state into locals, as the Lua script reads its
// keys: the state as goRead reads it, its fields clamped into their
// domains, the last MaxEntries entries of each list. A view locks the
// key's shard itself; a decision's caller has locked it.
func goReads(w *writer, sp *Spec, a *Algorithm, body []Stmt, writes bool) {
	used := usedNames(body)
	if len(used.states) == 0 && len(used.entries) == 0 { // a decision of the call alone
		if usesInput(body, "now") {
			w.line("nowMs := c.NowMs")
		}
		return
	}
	w.line("nowMs := c.NowMs")
	w.line("sh := t.states.Shard(t.states.Index(hash))")
	if !writes {
		w.line("sh.Lock()")
		w.line("defer sh.Unlock()")
	}
	w.line("e := sh.Get(key, hash, nowMs)")
	w.line("st := t.read(e, nowMs)")
	for _, s := range a.States {
		live := goName(s.Name + "_live")
		if used.states[s] && len(s.Fields) > 0 {
			w.line("%s := st.%s > nowMs // %s", live, goExpField(s), keyTemplate(s))
		}
		for _, f := range s.Fields {
			if used.fields[f] {
				w.line("%s := kit.Field(%s, st.%s, %s, %s, %s)", goFieldVar(f), live, goStructField(f),
					goExact.print(f.Default), goExact.print(f.Min), goExact.print(f.Max))
			}
		}
		if !s.Collection() || !used.entries[s] {
			continue
		}
		list := goName(s.Name)
		w.line("%s := st.%s", list, goEntries(s))
		if s.Kind == List { // a zset is read whole, by index
			w.line("if n := %s; int64(len(%s)) > n {", goTyped(goExact.print(s.MaxEntries), s.MaxEntries), list)
			w.line("%s = %s[int64(len(%s))-n:]", list, list, list)
			w.line("}")
		}
	}
}

// usesInput reports whether body reads the input named name.
func usesInput(body []Stmt, name string) bool {
	found := false
	walkStmts(body, func(e Expr) {
		if in, ok := e.(*InputRef); ok && in.In.Name == name {
			found = true
		}
	})
	return found
}

// goRead declares the table's read: the state of a key, e (nil: absent)
// as a call at nowMs reads it, absent when its clock is more than
// MAX_SKEW_MS ahead of nowMs, without the entries of an expired
// collection.
func goRead(w *writer, a *Algorithm) {
	st := goStateType(a)
	w.line("")
	w.line("// read is the state e holds (none if e is nil) as a call at nowMs reads it.")
	w.line("func (t *%s) read(e *kit.Entry[%s, %s], nowMs int64) %s {", tableType(a), memKeyParams(a), st, st)
	w.line("var st %s", st)
	w.line("if e != nil {")
	w.line("st = e.State")
	w.line("}")
	if c := a.Clock; c != nil {
		w.line("// A state whose clock is more than MAX_SKEW_MS ahead of nowMs was written")
		w.line("// by a clock that is wrong: it is not trusted, and reads as absent.")
		if c.Entry { // the newest entry's
			es := "st." + goEntries(c.State)
			w.line("if n := len(%s); n > 0 && st.%s > nowMs && kit.Field(true, %s[n-1].%s, 0, %s, %s) > nowMs+%s {", es, goExpField(c.State),
				es, goExported(c.Name), goExact.print(c.Min), goExact.print(c.Max), goConstName(maxSkewName))
		} else {
			w.line("if kit.Field(st.%s > nowMs, st.%s, %s, %s, %s) > nowMs+%s {", goExpField(c.State), goStructField(c),
				goExact.print(c.Default), goExact.print(c.Min), goExact.print(c.Max), goConstName(maxSkewName))
		}
		w.line("return %s{}", st)
		w.line("}")
	}
	for _, s := range a.States {
		if s.Collection() {
			w.line("if st.%s <= nowMs { // %s has expired", goExpField(s), keyTemplate(s))
			w.line("st.%s = nil", goEntries(s))
			w.line("}")
		}
	}
	w.line("return st")
	w.line("}")
}

// goAggregates computes the aggregates of one statement into locals
// before it, as lowerAggregates plans them: each one call of a helper of
// package kit, or for a view over a list a loop, under its guard.
func goAggregates(w *writer, a *Algorithm, s Stmt, names map[*Agg]string) {
	named := naming(goExact, names)
	for _, st := range lowerAggregates(s, names, goName) {
		init := "int64(0)"
		if st.Init != nil {
			init = goTyped(goExact.print(st.Init), st.Init)
		}
		if st.Agg.It.State.Kind == List && !(st.Agg.Fn == Last && st.Agg.Where == nil) {
			w.line("%s := %s", st.Name, init)
			goGuarded(w, st, named, func() { goListAgg(w, st) })
			continue
		}
		goLazy(w, st.Name, st.guardText(named, "&&"), w.aggs.call(st), strings.TrimSuffix(strings.TrimPrefix(init, "int64("), ")"), init,
			goValueType(st.Agg))
	}
}

// goLazy declares name as x if cond (none: always), else d, with x
// computed only then: by kit.When when that takes a short line, else by
// an if.
func goLazy(w *writer, name, cond, x, d, typedD, typ string) {
	if cond == "" {
		w.line("%s := %s", name, x)
		return
	}
	if l := fmt.Sprintf("%s := kit.When(%s, func() %s { return %s }, %s)", name, cond, typ, x, d); len(l) <= goShortLine {
		w.line("%s", l)
		return
	}
	w.line("%s := %s", name, typedD)
	w.line("if %s {", cond)
	w.line("%s = %s", name, x)
	w.line("}")
}

// goShortLine is the longest line goLazy writes as one.
const goShortLine = 120

// goValueType is the Go type of an aggregate's value.
func goValueType(ag *Agg) string {
	v := ag.V
	if ag.Fn == Reach {
		v = ag.R
	}
	if v.Type() == Bool {
		return "bool"
	}
	return "int64"
}

// goGuarded emits body under the guard of an aggregate, if it has one.
func goGuarded(w *writer, st aggStep, named dialect, body func()) {
	if len(st.Guard) == 0 {
		body()
		return
	}
	w.line("if %s { // else the value is not used", st.guardText(named, "&&"))
	body()
	w.line("}")
}

// goAggExpr is an aggregate computed by a helper of package kit, d when
// no entry counts: over a zset by index, of the entries goAggCuts'
// statements before it leave (the score range of its where clause);
// over a list, in a decision, from its newest entry alone.
func goAggExpr(a *Algorithm, st aggStep, d string) string {
	ag := st.Agg
	src := goName(ag.It.State.Name)
	if ag.It.State.Kind == List {
		return fmt.Sprintf("kit.Last(%s, %s, %s)", src, goEntryFunc(a, st, ag.V), d)
	}
	return goZsetAgg(a, st, src, d)
}

// goAggCuts are the statements that cut a zset's entries, held in a
// variable named as the zset, to the score range of st's where clause,
// each a binary search the compiler inlines (a generic helper would call
// the condition through a function value at every step).
func goAggCuts(st aggStep) []string {
	s := st.Agg.It.State
	if s.Kind == List {
		return nil
	}
	b, v, score := st.Index.bounds, goName(s.Name), goExported(s.Entry[0].Name)
	var cuts []string
	if b.min != nil {
		cuts = append(cuts, fmt.Sprintf("%s = %s[sort.Search(len(%s), func(i int) bool { return %s[i].%s %s %s }):]",
			v, v, v, v, score, goMinCmp(b), goExact.print(b.min)))
	}
	if b.max != nil {
		cuts = append(cuts, fmt.Sprintf("%s = %s[:sort.Search(len(%s), func(i int) bool { return %s[i].%s %s %s })]",
			v, v, v, v, score, goMaxCmp(b), goExact.print(b.max)))
	}
	return cuts
}

// goMinCmp is the comparison that holds of the entries from the range's
// lower bound on; goMaxCmp, of those past its upper bound.
func goMinCmp(b scoreBounds) string {
	if b.minOpen {
		return ">"
	}
	return ">="
}

func goMaxCmp(b scoreBounds) string {
	if b.maxOpen {
		return ">="
	}
	return ">"
}

// goListAgg computes an aggregate over a list by a loop over its entries,
// in a view (a decision reads only its newest entry, goAggExpr).
func goListAgg(w *writer, st aggStep) {
	ag, name := st.Agg, st.Name
	list, it := goName(ag.It.State.Name), goName(ag.It.Name)
	if ag.Fn == Reach {
		w.line("%s__need, %s__run := %s, int64(0)", name, name, goExact.print(ag.N))
	}
	if st.Bind {
		w.line("for _, %s := range %s {", it, list)
	} else {
		w.line("for range %s {", list)
	}
	if ag.Where != nil {
		w.line("if !(%s) {", goExact.print(ag.Where))
		w.line("continue")
		w.line("}")
	}
	switch ag.Fn {
	case Sum:
		w.line("%s += %s", name, goExact.print(ag.V))
	case Last:
		w.line("%s = %s", name, goExact.print(ag.V))
	case Reach:
		w.line("%s__run += %s", name, goExact.print(ag.V))
		w.line("if %s__run >= %s__need {", name, name)
		w.line("%s = %s", name, goExact.print(ag.R))
		w.line("break")
		w.line("}")
	}
	w.line("}")
}

// goBlock emits body; later says whether a statement after it may write,
// so that a write keeps the entry it stores only for writes to come.
func goBlock(w *writer, sp *Spec, a *Algorithm, body []Stmt, names map[*Agg]string, later bool) {
	d := naming(goExact, names)
	for i := 0; i < len(body); i++ {
		s := body[i]
		if isWrite(s) {
			j := i + 1
			for j < len(body) && isWrite(body[j]) {
				j++
			}
			goWrites(w, a, body[i:j], d, later || writesIn(body[j:]))
			i = j - 1
			continue
		}
		commentLines(w, "//", s.commented().Comments)
		if l, ok := s.(*Let); ok && goLetPicked(w, a, l, names) {
			continue
		}
		goAggregates(w, a, s, names)
		switch s := s.(type) {
		case *Let:
			if !computedInPlace(s, names, goName) {
				w.line("%s := %s", goName(s.Name), goTyped(d.print(s.X), s.X))
			}
		case *If:
			if w.commitOnly && len(s.Else) == 0 && allWrites(s.Then) { // one guard for both
				w.line("if %s && c.Commit {", d.prec(s.Cond, 3))
				w.commitOnly = false
				goWrites(w, a, s.Then, d, later || writesIn(body[i+1:]))
				w.commitOnly = true
				w.line("}")
				continue
			}
			w.line("if %s {", d.print(s.Cond))
			goBlock(w, sp, a, s.Then, names, later || writesIn(body[i+1:]))
			if len(s.Else) > 0 {
				w.line("} else {")
				goBlock(w, sp, a, s.Else, names, later || writesIn(body[i+1:]))
			}
			w.line("}")
		case *Show:
			goShow(w, s, d)
		case *Reply:
			var fields []string
			for i, f := range sp.Reply {
				fields = append(fields, goExported(f.Name)+": "+d.print(s.Values[i]))
			}
			w.line("return kit.Reply{%s}", strings.Join(fields, ", "))
		}
	}
}

// negate is !c, a comparison's negation written as the opposite
// comparison.
func negate(c Expr) Expr {
	opposite := map[Op]Op{OpLt: OpGe, OpLe: OpGt, OpGt: OpLe, OpGe: OpLt, OpEq: OpNe, OpNe: OpEq}
	switch c := c.(type) {
	case *Unary:
		if c.Op == OpNot {
			return c.X
		}
	case *Binary:
		if op, ok := opposite[c.Op]; ok {
			return &Binary{Op: op, X: c.X, Y: c.Y}
		}
	}
	return &Unary{Op: OpNot, X: c}
}

// goLetPicked emits let NAME = if C then A else B where one of A and B is
// an aggregate and the other holds none, and C holds none, as NAME := the
// other, then NAME := the aggregate when its branch is taken; it reports
// whether s was such a let.
func goLetPicked(w *writer, a *Algorithm, s *Let, names map[*Agg]string) bool {
	c, ok := s.X.(*Cond)
	if !ok || len(aggregates(c.C)) > 0 {
		return false
	}
	ag, other, cond := c.A, c.B, c.C
	if _, isAgg := c.B.(*Agg); isAgg {
		ag, other, cond = c.B, c.A, negate(c.C)
	}
	if _, isAgg := ag.(*Agg); !isAgg || len(aggregates(other)) > 0 {
		return false
	}
	steps := lowerAggregates(s, names, goName)
	st := steps[0]
	name := goName(s.Name)
	x := w.aggs.call(st)
	goLazy(w, name, goExact.prec(cond, 3), x, goExact.print(other), goTyped(goExact.print(other), other), goValueType(st.Agg))
	return true
}

// allWrites reports whether body is writes alone.
func allWrites(body []Stmt) bool {
	for _, s := range body {
		if !isWrite(s) {
			return false
		}
	}
	return true
}

// goWrites emits a run of writes, each changing st, then stores st once.
// Without commit, a write changes nothing, not even st's entries, whose
// arrays the stored state shares.
func goWrites(w *writer, a *Algorithm, run []Stmt, d dialect, later bool) {
	if w.commitOnly {
		w.line("if c.Commit {")
	}
	for _, s := range run {
		commentLines(w, "//", s.commented().Comments)
		switch s := s.(type) {
		case *Store:
			for i, f := range s.State.Fields {
				w.line("st.%s = %s", goStructField(f), d.print(s.Values[i]))
			}
			w.line("st.%s = nowMs + %s", goExpField(s.State), d.print(s.TTL))
		case *Add:
			goAdd(w, a, s, d)
			w.line("st.%s = nowMs + %s", goExpField(s.State), d.print(s.TTL))
		case *Drop:
			w.line("st.%s(%s)", goName("drop_"+s.State.Name), d.print(s.Upto))
		case *Clear:
			w.line("st.%s = nil", goEntries(s.State))
		}
	}
	if later {
		w.line("e = sh.Put(key, hash, e, st)")
	} else {
		w.line("sh.Put(key, hash, e, st)")
	}
	if w.commitOnly {
		w.line("}")
	}
}

// goDrop declares the method of a's state that removes the entries of a
// zset whose first field is at most upto, as ZREMRANGEBYSCORE does.
func goDrop(w *writer, a *Algorithm, s *State) {
	list := "s." + goEntries(s)
	w.line("// %s removes the entries of %s whose %s is at most upto.", goName("drop_"+s.Name), s.Name, s.Entry[0].Name)
	w.line("func (s *%s) %s(upto int64) {", goStateType(a), goName("drop_"+s.Name))
	w.line("n := 0")
	w.line("for n < len(%s) && %s[n].%s <= upto {", list, list, goExported(s.Entry[0].Name))
	w.line("n++")
	w.line("}")
	w.line("%s = %s[n:]", list, list)
	w.line("}")
	w.line("")
}

// goShow ends a view: the entries of its collection as records, if its
// condition holds.
func goShow(w *writer, s *Show, d dialect) {
	w.line("if !(%s) {", d.print(s.Cond))
	w.line("return []kit.Record{}, nil")
	w.line("}")
	// Every integer is read clamped into its domain, as the
	// scripts parse it: entries written under other amounts.
	var fields []string
	for _, f := range s.Fields {
		x := "x." + goExported(f.Name)
		if f.Type != Str {
			x = fmt.Sprintf("kit.Field(true, %s, 0, %s, %s)", x, d.print(f.Min), d.print(f.Max))
		}
		fields = append(fields, x)
	}
	w.line("out := make([]kit.Record, len(%s))", goName(s.State.Name))
	w.line("for i, x := range %s {", goName(s.State.Name))
	w.line("out[i] = kit.Record{%s}", strings.Join(fields, ", "))
	w.line("}")
	w.line("return out, nil")
}

// goTyped makes an integer built of literals alone an int64, so that :=
// declares no int.
func goTyped(text string, e Expr) string {
	if e.Type() == Int && untypedInt(e) {
		return "int64(" + text + ")"
	}
	return text
}

// untypedInt reports whether Go would type e's value as int: its values
// are all literals.
func untypedInt(e Expr) bool {
	switch e := e.(type) {
	case *Lit:
		return true
	case *Cond:
		return untypedInt(e.A) && untypedInt(e.B)
	case *Unary:
		return untypedInt(e.X)
	case *Binary:
		return e.Type() == Int && untypedInt(e.X) && untypedInt(e.Y)
	case *Call:
		for _, a := range e.Args {
			if !untypedInt(a) {
				return false
			}
		}
		return true
	}
	return false
}

// goAdd inserts an entry as the Lua script does: into a zset by the
// state's method (goZsetAdd); at the end of a list.
func goAdd(w *writer, a *Algorithm, s *Add, d dialect) {
	list := "st." + goEntries(s.State)
	t := goEntryType(a, s.State)
	var vals []string
	for i, f := range s.State.Entry {
		if s.Values[i] != nil { // nil: the running sum, set by goZsetAdd
			vals = append(vals, goExported(f.Name)+": "+d.print(s.Values[i]))
		}
	}
	lit := t + "{" + strings.Join(vals, ", ") + "}"
	if s.State.Kind == ZSet {
		w.line("st.%s(%s, %s)", goName("add_"+s.State.Name), lit, goTyped(d.print(s.State.MaxEntries), s.State.MaxEntries))
		return
	}
	w.line("%s = append(%s, %s)", list, list, lit)
}
