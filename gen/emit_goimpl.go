package gen

import (
	"fmt"
	"go/ast"
	goparser "go/parser"
	gotoken "go/token"
	"strings"
)

// The decisions in Go: per algorithm, a kit.Table that holds the state of
// every limit of the algorithm by key and decides any of them as the Lua
// script does, registered for package goimpl. They go into package goimpl
// for the catalogue, and into the user's package for a user's spec.

func tableType(a *Algorithm) string { return goName(a.Name) + "Table" }

// memParams is the table's struct of a call's parameters (c.Params by
// name), the p of the decision.
func memParams(a *Algorithm) string { return goName(a.Name) + "Params" }

// emitMemory returns the table of one algorithm.
func emitMemory(sp *Spec, a *Algorithm, o *Output) ([]byte, error) {
	var w writer
	goFileHeader(&w, algorithmSource(sp), o.memory.name)
	goImports(&w, []string{"hash/maphash", "sort", pick(hasDuration(a), "time", "")},
		o.contract.path, exactPackage.path, o.kit.path, pick(o.memory.path != o.limits.path, o.limits.path, ""))
	memTypes(&w, a, o.qualifier(o.memory, o.limits)+goType(a))
	memRegister(&w, sp, a)
	memPrepare(&w, sp, a, o)
	memMethods(&w, sp, a)
	dropped, added := map[*State]bool{}, map[*State]bool{}
	walkStmtsOnly(a.Body, func(s Stmt) {
		switch s := s.(type) {
		case *Drop:
			dropped[s.State] = true
		case *Add:
			added[s.State] = s.State.Kind == ZSet
		}
	})
	for _, s := range a.States {
		if s.Collection() {
			goEntryDecl(&w, a, s)
		}
		if dropped[s] {
			goDrop(&w, a, s)
		}
		if added[s] {
			goZsetAdd(&w, a, s)
		}
	}
	text := w.b.String()
	for _, imp := range unusedImports(text, exactPackage, goPackage{name: "sort", path: "sort"}) {
		text = strings.Replace(text, fmt.Sprintf("%q\n", imp.path), "", 1) // an import Go would refuse
	}
	w.b.Reset()
	w.b.WriteString(text)
	return formatGo(w, "the Go decision of "+a.Name)
}

// hasDuration reports whether a has a duration parameter.
func hasDuration(a *Algorithm) bool {
	for _, p := range a.Params {
		if _, ok := durationName(p); ok {
			return true
		}
	}
	return false
}

// memKey is the type of the key of an algorithm's state, a kit.Key.
func memKey(a *Algorithm) string { return goName(a.Name) + "Key" }

// memKeyParams is the array type of the parameters a state is measured
// in, those its keys name.
func memKeyParams(a *Algorithm) string {
	return fmt.Sprintf("[%d]int64", len(a.States[0].KeyParams()))
}

// memStore is the type of the table's store.
func memStore(a *Algorithm) string {
	return fmt.Sprintf("kit.Store[%s, %s]", memKeyParams(a), goStateType(a))
}

// memTypes declares the table of a's limits of type typ, the state per
// key, its key and the parameters.
func memTypes(w *writer, a *Algorithm, typ string) {
	st := goStateType(a)
	w.line("")
	w.line("// %s holds the state of every %s limit of a goimpl.Limiter, by key,", tableType(a), a.Name)
	w.line("// and the limits it has found valid.")
	w.line("type %s struct {", tableType(a))
	w.line("states *%s", memStore(a))
	w.line("valid  kit.Valid[%s]", typ)
	w.line("}")
	w.line("")
	w.line("// %s names a %s state: the call's key, and the parameters the", memKey(a), a.Name)
	w.line("// state is measured in, those its Redis key names: %s.", keyTemplate(a.States[0]))
	w.line("type %s = kit.Key[%s]", memKey(a), memKeyParams(a))
	w.line("")
	w.line("// %s is what %s keeps per key: the fields and entries of each", st, tableType(a))
	w.line("// Redis key, and when that key expires on the caller's clock (0: absent).")
	w.line("type %s struct {", st)
	var exps []string
	for _, s := range a.States {
		for _, f := range s.Fields {
			w.line("%s int64", goStructField(f))
		}
		if s.Collection() {
			w.line("%s []%s", goEntries(s), goEntryType(a, s))
		}
		w.line("%s int64", goExpField(s))
		exps = append(exps, "s."+goExpField(s))
	}
	w.line("}")
	w.line("")
	w.line("// Expires is when the state's last key expires (see kit.Expirer).")
	w.line("func (s *%s) Expires() int64 { return max(%s) }", st, strings.Join(exps, ", "))
	w.line("")
	w.line("// %s are a call's parameters, as the scripts take them.", memParams(a))
	w.line("type %s struct {", memParams(a))
	for _, p := range a.Params {
		w.line("%s int64", goExported(p.Name))
	}
	w.line("}")
	w.line("")
	hash := "maphash.String(seed, k.Name)"
	for i := range a.States[0].KeyParams() {
		hash = fmt.Sprintf("kit.Mix(%s, k.Params[%d])", hash, i)
	}
	w.line("// %s is the hash of a state's key (see kit.HashKey).", memHash(a))
	w.line("func %s(seed maphash.Seed, k %s) uint64 {", memHash(a), memKey(a))
	w.line("return %s", hash)
	w.line("}")
}

// emitMemoryConstants declares the spec's constants in the package of
// the decisions in Go, when it is not the typed limits' (which declares
// them in limits_gen.go).
func emitMemoryConstants(sp *Spec, o *Output) ([]byte, error) {
	var w writer
	goFileHeader(&w, sp.Source, o.memory.name)
	goConstants(&w, sp, false)
	return formatGo(w, "the spec's constants")
}

// memHash is the hash function of an algorithm's keys.
func memHash(a *Algorithm) string { return goName(a.Name) + "Hash" }

// memRegister registers the table for package goimpl.
func memRegister(w *writer, sp *Spec, a *Algorithm) {
	var inputs []string
	for _, in := range a.Strings {
		inputs = append(inputs, fmt.Sprintf("%q", in.Name))
	}
	w.line("")
	w.line("func init() {")
	w.line("kit.RegisterTable(kit.TableAlgorithm{")
	w.line("ID: limitspec.Algorithm{Library: %q, Name: %q},", sp.Library, a.Name)
	w.line("Inputs: []string{%s},", strings.Join(inputs, ", "))
	w.line("New: func() kit.Table { return &%s{states: kit.New%s(%s)} },", tableType(a), strings.TrimPrefix(memStore(a), "kit."), memHash(a))
	w.line("})")
	w.line("}")
}

// memPrepare emits the checks of a call (memCheck); Prepare, which
// checks a call and names its state; Limit, which checks a limit's call
// and decides it alone; Bind, which checks a limit once and returns its
// kit.Bound (memBound); and the helpers that read a prepared call's
// parameters and key.
func memPrepare(w *writer, sp *Spec, a *Algorithm, o *Output) {
	typ := o.qualifier(o.memory, o.limits) + goType(a)
	memCheck(w, sp, a, typ)
	tt, pt := tableType(a), memParams(a)
	w.line("")
	w.line("// Prepare checks a call of a %s limit and names its state (see kit.Table).", a.Name)
	w.line("func (t *%s) Prepare(c *kit.Call, lim limitspec.Limit, infix, key string) error {", tt)
	memChecked(w, "")
	w.line("return t.prepare(c, t.limitParams(l), infix, key)")
	w.line("}")
	w.line("")
	w.line("// prepare checks the arguments and the key of a call of parameters p and")
	w.line("// names its state.")
	w.line("func (t *%s) prepare(c *kit.Call, p %s, infix, key string) error {", tt, pt)
	w.line("if !t.argsOK(&c.Args, key) {")
	w.line("return t.refuseArgs(&c.Args, key)")
	w.line("}")
	for i, p := range a.Params {
		w.line("c.Params[%d] = p.%s", i, goExported(p.Name))
	}
	w.line("c.NameState(key, infix)")
	w.line("c.Hash = %s(t.states.Seed(), t.key(c.Key, p))", memHash(a))
	w.line("return nil")
	w.line("}")
	w.line("")
	w.line("// Limit decides a %s limit's call alone (see kit.Table).", a.Name)
	w.line("func (t *%s) Limit(args kit.Args, lim limitspec.Limit, key string) (kit.Reply, error) {", tt)
	memChecked(w, "kit.Reply{}, ")
	w.line("p := t.limitParams(l)")
	memAlone(w, a, "t")
	w.line("}")
	memBound(w, a)
	memCallKey(w, a)
}

// memAlone emits the end of a Limit: it checks the arguments and the key
// of a call of parameters p, of table t, and decides it alone, with its
// shard locked. A Table's Limit and a Bound's state it each, so that
// neither calls the other: a call passes the arguments and the reply on
// (copying them), and a bound limit's call is the one to spare.
func memAlone(w *writer, a *Algorithm, t string) {
	w.line("if !%s.argsOK(&args, key) {", t)
	w.line("return kit.Reply{}, %s.refuseArgs(&args, key)", t)
	w.line("}")
	w.line("k := %s.key(key, p)", t)
	w.line("h := %s(%s.states.Seed(), k)", memHash(a), t)
	w.line("sh := %s.states.Shard(%s.states.Index(h))", t, t)
	w.line("sh.Lock()")
	w.line("defer sh.Unlock()")
	w.line("return %s.decide(p, k, h, &args), nil", t)
}

// memChecked checks lim into the typed limit l, or returns the refusal
// after zero, the function's other results.
func memChecked(w *writer, zero string) {
	w.line("l, err := t.checkLimit(lim)")
	w.line("if err != nil {")
	w.line("return %serr", zero)
	w.line("}")
}

// memBound emits Bind and the kit.Bound it returns: the limit's
// parameters, worked out once, and the table that decides by them.
func memBound(w *writer, a *Algorithm) {
	tt, bt, pt := tableType(a), memBoundType(a), memParams(a)
	w.line("")
	w.line("// Bind checks a %s limit once and returns what decides its calls (see kit.Table).", a.Name)
	w.line("func (t *%s) Bind(lim limitspec.Limit) (kit.Bound, error) {", tt)
	memChecked(w, "nil, ")
	names := []string{"{bound}", bt, "{table}", tt, "{params}", pt, "{alg}", a.Name}
	w.text(`return &{bound}{t: t, p: t.limitParams(l), lim: l}, nil
}

// {bound} is a {alg} limit bound to its table, checked once (see kit.Bound).
type {bound} struct {
	t   *{table}
	p   {params}
	lim limitspec.Limit // boxed once
}

// Limit decides a call of the bound limit alone (see kit.Bound).
func (b *{bound}) Limit(args kit.Args, key string) (kit.Reply, error) {
	t, p := b.t, b.p
`, names...)
	memAlone(w, a, "t")
	w.text(`}

// Prepare checks a call of the bound limit and names its state (see kit.Bound).
func (b *{bound}) Prepare(c *kit.Call, infix, key string) error { return b.t.prepare(c, b.p, infix, key) }

// Value is the bound limit (see kit.Bound).
func (b *{bound}) Value() limitspec.Limit { return b.lim }
`, names...)
}

// memBoundType is the type of a's bound limit.
func memBoundType(a *Algorithm) string { return goName(a.Name) + "Bound" }

// memCheck emits checkLimit, which checks a limit, limitParams, its
// parameters as the scripts take them, and argsOK, which checks a call's
// key, time, cost and string inputs (refuseArgs says what is wrong):
// together the scripts' checks, in their order.
func memCheck(w *writer, sp *Spec, a *Algorithm, typ string) {
	tt, pt := tableType(a), memParams(a)
	w.line("")
	w.line("// checkLimit checks a %s limit: its type, then its Validate, which runs", a.Name)
	w.line("// once for each of the first few distinct limits (see kit.Valid).")
	w.line("func (t *%s) checkLimit(lim limitspec.Limit) (%s, error) {", tt, typ)
	limitConv(w, a, typ, typ+"{}, ")
	w.line("if !t.valid.Has(l) {")
	w.line("if err := l.Validate(); err != nil {")
	w.line("return %s{}, err", typ)
	w.line("}")
	w.line("t.valid.Add(l)")
	w.line("}")
	w.line("return l, nil")
	w.line("}")
	var fields []string
	for _, p := range a.Params {
		fields = append(fields, goExported(p.Name)+": "+wireValue(p, "l"))
	}
	w.line("")
	w.line("// limitParams are the parameters of a checked limit, as the scripts take them.")
	w.line("func (t *%s) limitParams(l %s) %s {", tt, typ, pt)
	w.line("return %s{%s}", pt, strings.Join(fields, ", "))
	w.line("}")
	var ok []string
	for _, in := range sp.Inputs {
		v := "c." + goExported(in.Arg) // kit.Args's NowMs, Cost
		// in [min, max] as one unsigned comparison: a value below min wraps above max-min
		max := goExact.print(&Lit{V: in.Max, Name: in.MaxName})
		if in.Min == 0 {
			ok = append(ok, fmt.Sprintf("uint64(%s) <= %s", v, max))
		} else {
			ok = append(ok, fmt.Sprintf("uint64(%s-(%d)) <= %s-(%d)", v, in.Min, max, in.Min))
		}
	}
	for _, in := range a.Strings {
		ok = append(ok, fmt.Sprintf("len(c.Inputs[%d]) <= %d", in.Index, in.MaxLen))
	}
	w.line("")
	w.line("// argsOK reports whether a call's key, time, cost and string inputs are")
	w.line("// within their domains, in few enough steps for its callers to inline it;")
	w.line("// refuseArgs says what is wrong with those of a call it refuses.")
	w.line("func (t *%s) argsOK(c *kit.Args, key string) bool {", tt)
	w.line("return key != \"\" && key[0] != '}' && %s", strings.Join(ok, " && "))
	w.line("}")
	w.line("")
	w.line("// refuseArgs refuses a call's key, time, cost or string inputs, in the")
	w.line("// scripts' order (after the limit's parameters); nil if argsOK.")
	w.line("func (t *%s) refuseArgs(c *kit.Args, key string) error {", tt)
	w.line("if key == \"\" {")
	w.line("return kit.BadInput(%q)", a.Name+": "+msgKeyEmpty)
	w.line("}")
	w.line("if key[0] == '}' {")
	w.line("return kit.BadInput(%q)", a.Name+": "+msgKeyBrace)
	w.line("}")
	for _, in := range sp.Inputs {
		v := "c." + goExported(in.Arg) // kit.Args's NowMs, Cost
		w.line("if %s < %d || %s > %s {", v, in.Min, v, goExact.print(&Lit{V: in.Max, Name: in.MaxName}))
		w.line("return kit.BadInput(\"%%s%%d\", %q, %s)", a.Name+": "+msgInputPrefix(in), v)
		w.line("}")
	}
	for _, in := range a.Strings {
		w.line("if len(c.Inputs[%d]) > %d {", in.Index, in.MaxLen)
		w.line("return kit.BadInput(\"%%s%%d\", %q, len(c.Inputs[%d]))", a.Name+": "+msgStrPrefix(in), in.Index)
		w.line("}")
	}
	w.line("return nil")
	w.line("}")
}

// memCallKey emits the helpers that read a prepared call's parameters
// and the key of its state.
func memCallKey(w *writer, a *Algorithm) {
	tt, pt := tableType(a), memParams(a)
	w.line("")
	w.line("// params are a prepared call's parameters.")
	w.line("func (t *%s) params(c *kit.Call) %s {", tt, pt)
	var fields []string
	for i, p := range a.Params {
		fields = append(fields, fmt.Sprintf("%s: c.Params[%d]", goExported(p.Name), i))
	}
	w.line("return %s{%s}", pt, strings.Join(fields, ", "))
	w.line("}")
	w.line("")
	w.line("// key is the key of the state named name of a call of parameters p.")
	w.line("func (t *%s) key(name string, p %s) %s {", tt, pt, memKey(a))
	var params []string
	for _, p := range a.States[0].KeyParams() {
		params = append(params, "p."+goExported(p.Name))
	}
	w.line("return %s{Name: name, Params: %s{%s}}", memKey(a), memKeyParams(a), strings.Join(params, ", "))
	w.line("}")
	w.line("")
	w.line("// callKey is the key of a prepared call's state.")
	w.line("func (t *%s) callKey(c *kit.Call) %s { return t.key(c.Key, t.params(c)) }", tt, memKey(a))
}

// limitOf converts lim to the typed limit l of a, checked (Validate), or
// returns the refusal after zero, the function's other results.
func limitOf(w *writer, a *Algorithm, typ, zero string) {
	limitConv(w, a, typ, zero)
	w.line("if err := l.Validate(); err != nil {")
	w.line("return %serr", zero)
	w.line("}")
}

// limitConv converts lim to the typed limit l of a, or returns the
// refusal after zero, the function's other results.
func limitConv(w *writer, a *Algorithm, typ, zero string) {
	w.line("var l %s", typ)
	w.line("switch v := lim.(type) {")
	w.line("case %s:", typ)
	w.line("l = v")
	w.line("case *%s:", typ)
	w.line("if v == nil {")
	w.line("return %skit.NotA(%q, lim)", zero, a.Name)
	w.line("}")
	w.line("l = *v")
	w.line("default:")
	w.line("return %skit.NotA(%q, lim)", zero, a.Name)
	w.line("}")
}

// memMethodsText are the methods of every table {table} that do not
// depend on its algorithm.
const memMethodsText = `
func (t *{table}) Shard(c *kit.Call) int { return t.states.Index(c.Hash) }

func (t *{table}) Lock(shard int) { t.states.Shard(shard).Lock() }

func (t *{table}) Unlock(shard int) { t.states.Shard(shard).Unlock() }

func (t *{table}) Reset(c *kit.Call) { t.states.Reset(t.callKey(c)) }

func (t *{table}) StopSweeper() { t.states.StopSweeper() }

// Decide decides c, whose shard the caller holds (see kit.Table).
func (t *{table}) Decide(c *kit.Call) kit.Reply {
p := t.params(c)
return t.decide(p, t.key(c.Key, p), c.Hash, &c.Args)
}

`

// memMethods emits the table's other methods: the shard of a key, its
// lock, the decision, the views, the reset and the sweeper's stop.
func memMethods(w *writer, sp *Spec, a *Algorithm) {
	tt := tableType(a)
	w.text(memMethodsText, "{table}", tt)
	w.line("// decide decides a call of parameters p and arguments c on the state of")
	w.line("// key, of hash hash, whose shard the caller holds; it writes only with")
	w.line("// c.Commit, and with c.Force consumes even a denial.")
	w.line("func (t *%s) decide(p %s, key %s, hash uint64, c *kit.Args) kit.Reply {", tt, memParams(a), memKey(a))
	w.aggs = newGoAggs(a)
	defer func() { goRead(w, a); w.aggs.emit(w); w.aggs = nil }()
	goReads(w, sp, a, a.Body, true)
	w.commitOnly = true
	goBlock(w, sp, a, a.Body, map[*Agg]string{}, false)
	w.commitOnly = false
	w.line("}")
	w.line("")
	w.line("// View runs a view of c's state by name; it writes nothing.")
	w.line("func (t *%s) View(name string, c *kit.Call) ([]kit.Record, error) {", tt)
	if len(a.Views) == 0 {
		w.line("return nil, kit.BadInput(%q, name)", a.Name+": unknown view %q (it has none)")
		w.line("}")
		return
	}
	var names []string
	w.line("p := t.params(c)")
	w.line("key := t.key(c.Key, p)")
	w.line("switch name {")
	for _, v := range a.Views {
		names = append(names, v.Name)
		w.line("case %q:", v.Name)
		w.line("return t.%s(p, key, c.Hash, &c.Args)", goName("view_"+v.Name))
	}
	w.line("}")
	w.line("return nil, kit.BadInput(%q, name)", a.Name+": unknown view %q (views: "+strings.Join(names, ", ")+")")
	w.line("}")
	for _, v := range a.Views {
		w.line("")
		w.line("// %s is the view %s:", goName("view_"+v.Name), v.Name)
		w.line("//")
		for _, l := range strings.Split(v.Doc, "\n") {
			w.line("// %s", l)
		}
		w.line("func (t *%s) %s(p %s, key %s, hash uint64, c *kit.Args) ([]kit.Record, error) {", tt, goName("view_"+v.Name), memParams(a), memKey(a))
		goReads(w, sp, a, v.Body, false)
		goBlock(w, sp, a, v.Body, map[*Agg]string{}, false)
		w.line("}")
	}
}

// unusedImports are those of pkgs whose name no selector of the Go
// source src uses (its comments aside): the imports it writes before it
// knows whether its code calls them.
func unusedImports(src string, pkgs ...goPackage) []goPackage {
	f, err := goparser.ParseFile(gotoken.NewFileSet(), "", src, goparser.SkipObjectResolution)
	if err != nil {
		return nil // formatGo reports the error
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	var out []goPackage
	for _, p := range pkgs {
		if !used[p.name] {
			out = append(out, p)
		}
	}
	return out
}
