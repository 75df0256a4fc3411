package gen

import (
	"fmt"
	"strings"
)

// The decisions in Go: per algorithm, a kit.Table that holds the state of
// every limit of the algorithm by key and decides any of them as the Lua
// script does, registered for package memory. They go into package memory
// for the catalogue, and into the user's package for a user's spec.

func tableType(a *Algorithm) string { return goName(a.Name) + "Table" }

// memParams is the table's struct of a call's parameters (c.Params by
// name), the p of the decision.
func memParams(a *Algorithm) string { return goName(a.Name) + "Params" }

// emitMemory returns the table of one algorithm.
func emitMemory(sp *Spec, a *Algorithm, o *Output) ([]byte, error) {
	var w writer
	goFileHeader(&w, algorithmSource(sp), o.memory.name)
	w.line("import (")
	w.line("%q", "hash/maphash")
	if hasDuration(a) {
		w.line("%q", "time")
	}
	w.line("")
	w.line("%q", o.contract.path)
	w.line("%q", o.kit.path)
	if o.memory.path != o.limits.path {
		w.line("%q", o.limits.path)
	}
	w.line(")")
	memTypes(&w, a, o.qualifier(o.memory, o.limits)+goType(a))
	memRegister(&w, sp, a)
	memPrepare(&w, sp, a, o)
	memMethods(&w, sp, a)
	for _, s := range a.States {
		if s.Collection() {
			goEntryDecl(&w, a, s)
		}
	}
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
	w.line("// %s holds the state of every %s limit of a memory.Limiter, by key,", tableType(a), a.Name)
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
	w.line("// %s is the hash of a state's key (see kit.HashKey).", memHash(a))
	w.line("func %s(seed maphash.Seed, k %s) uint64 {", memHash(a), memKey(a))
	w.line("return kit.HashKey(seed, k.Name, k.Params[:]...)")
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

// memRegister registers the table for package memory.
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

// memPrepare emits check: the limit, its parameters, the key, the time,
// the cost and the string inputs, checked in the order of the scripts'
// checks; Prepare, which also names the state; Limit, which checks a
// call and decides it; and the helpers that read a prepared call's
// parameters and key.
func memPrepare(w *writer, sp *Spec, a *Algorithm, o *Output) {
	memCheck(w, sp, a, o)
	tt := tableType(a)
	w.line("")
	w.line("// Prepare checks a call of a %s limit and names its state (see kit.Table).", a.Name)
	w.line("func (t *%s) Prepare(c *kit.Call, lim limitspec.Limit, infix, key string) error {", tt)
	memChecked(w, "&c.Args", "")
	for i, p := range a.Params {
		w.line("c.Params[%d] = p.%s", i, goExported(p.Name))
	}
	w.line("c.Key = kit.StateName(key, infix)")
	w.line("c.Hash = t.states.Hash(t.key(c.Key, p))")
	w.line("return nil")
	w.line("}")
	w.line("")
	w.line("// Limit decides a %s limit's call alone (see kit.Table).", a.Name)
	w.line("func (t *%s) Limit(args kit.Args, lim limitspec.Limit, key string) (kit.Reply, error) {", tt)
	memChecked(w, "&args", "kit.Reply{}, ")
	w.line("k := t.key(key, p)")
	w.line("h := t.states.Hash(k)")
	w.line("sh := t.states.Shard(t.states.Index(h))")
	w.line("sh.Lock()")
	w.line("defer sh.Unlock()")
	w.line("return t.decide(p, k, h, &args), nil")
	w.line("}")
	memCallKey(w, a)
}

// memChecked checks a call of arguments args into its parameters p, or
// returns the refusal after zero, the function's other results.
func memChecked(w *writer, args, zero string) {
	w.line("p, err := t.check(%s, lim, key)", args)
	w.line("if err != nil {")
	w.line("return %serr", zero)
	w.line("}")
}

// memCheck emits check, which checks a call as the scripts do, in their
// order, and returns its parameters.
func memCheck(w *writer, sp *Spec, a *Algorithm, o *Output) {
	typ := o.qualifier(o.memory, o.limits) + goType(a)
	pt := memParams(a)
	w.line("")
	w.line("// check checks a call of a %s limit, of arguments c, and returns its", a.Name)
	w.line("// parameters (see kit.Table's Prepare).")
	w.line("func (t *%s) check(c *kit.Args, lim limitspec.Limit, key string) (%s, error) {", tableType(a), pt)
	limitConv(w, a, typ, pt+"{}, ")
	w.line("if !t.valid.Has(l) {")
	w.line("if err := l.Validate(); err != nil {")
	w.line("return %s{}, err", pt)
	w.line("}")
	w.line("t.valid.Add(l)")
	w.line("}")
	var fields []string
	for _, p := range a.Params {
		fields = append(fields, goExported(p.Name)+": "+wireValue(p, "l"))
	}
	w.line("p := %s{%s}", pt, strings.Join(fields, ", "))
	w.line("if key == \"\" {")
	w.line("return p, kit.BadInput(%q)", a.Name+": "+msgKeyEmpty)
	w.line("}")
	w.line("if key[0] == '}' {")
	w.line("return p, kit.BadInput(%q)", a.Name+": "+msgKeyBrace)
	w.line("}")
	for _, in := range sp.Inputs {
		v := "c." + goExported(in.Arg) // kit.Args's NowMs, Cost
		w.line("if %s < %d || %s > %s {", v, in.Min, v, goExact.print(&Lit{V: in.Max, Name: in.MaxName}))
		w.line("return p, kit.BadInput(\"%%s%%d\", %q, %s)", a.Name+": "+msgInputPrefix(in), v)
		w.line("}")
	}
	for _, in := range a.Strings {
		w.line("if len(c.Inputs[%d]) > %d {", in.Index, in.MaxLen)
		w.line("return p, kit.BadInput(\"%%s%%d\", %q, len(c.Inputs[%d]))", a.Name+": "+msgStrPrefix(in), in.Index)
		w.line("}")
	}
	w.line("return p, nil")
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
