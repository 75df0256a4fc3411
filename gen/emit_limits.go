package gen

import (
	"fmt"
	"strings"
)

// The typed limits: one Go type per algorithm, its parameters in Go units
// (a parameter whose name ends in _ms, or _ms_N, is a time.Duration),
// with Algorithm, Validate and QuotaWindow, registered (kit.RegisterLimit)
// for policyfile.NewLimit. They go into the package of the contract for
// the catalogue, and their registration into package policyfile (the
// contract imports nothing of its module); both go into the user's
// package for a user's spec.

// durationName is the Go name of a duration parameter without its unit:
// period_ms is Period, window_ms_2 Window2; ok is false for a parameter
// that is not a duration.
func durationName(p *Param) (string, bool) {
	base, ok := durationBase(p.Name)
	if !ok {
		return "", false
	}
	return goExported(base), true
}

// durationBase is a duration parameter's name without its unit, in
// snake_case: period_ms is period, window_ms_2 window_2.
func durationBase(n string) (string, bool) {
	if base, ok := strings.CutSuffix(n, "_ms"); ok {
		return base, true
	}
	if i := strings.LastIndex(n, "_ms_"); i > 0 && isDigits(n[i+4:]) {
		return n[:i] + "_" + n[i+4:], true
	}
	return "", false
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// limitField is a parameter's field in the typed limit.
func limitField(p *Param) string {
	if n, ok := durationName(p); ok {
		return n
	}
	return goExported(p.Name)
}

// wireValue is the Go expression of a parameter's value as the scripts
// take it, read from the typed limit l: a duration in ms, and an optional
// parameter's zero field its default (by exact.Pick).
func wireValue(p *Param, l string) string {
	v := l + "." + limitField(p)
	if _, ok := durationName(p); ok {
		v = "int64(" + v + " / time.Millisecond)"
	}
	if p.Default != nil && *p.Default != 0 {
		v = fmt.Sprintf("exact.Pick(%s.%s == 0, %d, %s)", l, limitField(p), *p.Default, v)
	}
	return v
}

// picksDefault reports whether the wire values of algs pick a default
// (exact.Pick), which their file must import package exact for.
func picksDefault(algs []*Algorithm) bool {
	for _, a := range algs {
		for _, p := range a.Params {
			if p.Default != nil && *p.Default != 0 {
				return true
			}
		}
	}
	return false
}

// argsType is the limits package's struct of an algorithm's parameters
// as the scripts take them (ms), the p of its checks.
func argsType(a *Algorithm) string { return goName(a.Name) + "Args" }

// emitLimits returns the typed limits of the spec's algorithms.
func emitLimits(sp *Spec, o *Output) ([]byte, error) {
	var w writer
	goFileHeader(&w, sp.Source, o.limits.name)
	goImports(&w, []string{"strconv", "time"}, pick(o.qualifier(o.limits, o.contract) != "", o.contract.path, ""),
		pick(!o.localExact(), exactPackage.path, ""), pick(o.names.path == o.limits.path, o.kit.path, ""))
	goConstants(&w, sp, true)
	for _, a := range sp.Algorithms {
		limitType(&w, a)
		limitMethods(&w, sp, a, o)
		if o.names.path == o.limits.path {
			limitRegister(&w, a, o)
		}
	}
	return formatGo(w, "the typed limits")
}

// emitNames returns the registration of the typed limits in a package
// of its own (the catalogue's, in package policyfile).
func emitNames(sp *Spec, o *Output) ([]byte, error) {
	var w writer
	goFileHeader(&w, sp.Source, o.names.name)
	goImports(&w, []string{"time"}, o.contract.path, exactPackage.path, o.kit.path)
	for _, a := range sp.Algorithms {
		limitRegister(&w, a, o)
	}
	return formatGo(w, "the typed limits' registration")
}

// limitType declares an algorithm's typed limit and its Args struct.
func limitType(w *writer, a *Algorithm) {
	typ := goType(a)
	w.line("")
	w.line("// %s is a limit of %s:", typ, a.Name)
	w.line("//")
	for _, l := range strings.Split(a.Doc, "\n") {
		w.line("// %s", l)
	}
	w.line("type %s struct {", typ)
	for _, p := range a.Params {
		opt := ""
		if p.Default != nil {
			opt = "; optional: 0 leaves it out"
		}
		if _, ok := durationName(p); ok {
			w.line("// %s: %s (%s), a whole number of ms in [%d, %d]%s.", limitField(p), p.Doc, p.Name, p.Min, p.Max, opt)
			w.line("%s time.Duration", limitField(p))
		} else {
			w.line("// %s: %s (%s), in [%d, %d]%s.", limitField(p), p.Doc, p.Name, p.Min, p.Max, opt)
			w.line("%s int64", limitField(p))
		}
	}
	w.line("}")
	w.line("")
	w.line("// %s are a %s limit's parameters as the scripts take them.", argsType(a), a.Name)
	w.line("type %s struct {", argsType(a))
	for _, p := range a.Params {
		w.line("%s int64", goExported(p.Name))
	}
	w.line("}")
}

// limitMethods emits Algorithm, Validate, Shapes (for a shaper), InFlight
// (for an algorithm whose decisions write no state), QuotaWindow
// and args.
func limitMethods(w *writer, sp *Spec, a *Algorithm, o *Output) {
	typ, q := goType(a), o.qualifier(o.limits, o.contract)
	w.text(`
// Algorithm is {alg}, of the library {lib}.
func (l {typ}) Algorithm() {q}Algorithm { return {q}Algorithm{Library: "{lib}", Name: "{alg}"} }

// Validate refuses a parameter outside its domain, or parameters the
// spec refuses together, with the scripts' message (see {q}Limit).
func (l {typ}) Validate() error {
	_, err := l.args()
	return err
}

`, "{alg}", a.Name, "{lib}", sp.Library, "{typ}", typ, "{q}", q)
	if a.Shapes(sp.Reply) {
		w.line("// Shapes is true: a decision of %s may tell an admitted request to", a.Name)
		w.line("// wait (its delay_ms), as %sShaper says.", q)
		w.line("func (l %s) Shapes() bool { return true }", typ)
		w.line("")
	}
	if a.InFlight() {
		w.line("// InFlight is true: a decision of %s writes no state, so that its quota", a.Name)
		w.line("// counts what holds take at once, as %sInFlightLimit says.", q)
		w.line("func (l %s) InFlight() bool { return true }", typ)
		w.line("")
	}
	limitWindow(w, a, o)
	limitState(w, a, q)
	w.line("// args checks l and returns its parameters as the scripts take them, in")
	w.line("// the order of the checks of docs/semantics.md, \"Errors\".")
	w.line("func (l %s) args() (p %s, err error) {", typ, argsType(a))
	w.line("var refused string")
	for _, p := range a.Params {
		f := goExported(p.Name)
		if _, ok := durationName(p); ok {
			w.line("if p.%s, refused = %s(l.%s, %q); refused != \"\" {", f, o.exactName("Millis"), limitField(p), a.Name+": "+msgParamPrefix(p))
			w.line("return p, &%sInputError{Msg: refused}", q)
			w.line("}")
		} else {
			w.line("p.%s = l.%s", f, limitField(p))
		}
		if p.Default != nil && *p.Default != 0 {
			w.line("if p.%s == 0 { // left out", f)
			w.line("p.%s = %d", f, *p.Default)
			w.line("}")
		}
		w.line("if refused = %s(p.%s, %d, %d, %q); refused != \"\" {", o.exactName("Outside"), f, p.Min, p.Max, a.Name+": "+msgParamPrefix(p))
		w.line("return p, &%sInputError{Msg: refused}", q)
		w.line("}")
	}
	for _, r := range a.Requires {
		w.line("if !(%s) {", goSaturating(o).print(r.Cond))
		w.line("return p, &%sInputError{Msg: %q}", q, a.Name+": "+r.Doc)
		w.line("}")
	}
	if len(a.Checks) > 0 {
		w.line("// Parameters under which a value could pass 2^53-1 (see gen/bounds.go).")
	}
	for _, c := range a.Checks {
		w.line("if !(%s) {", goSaturating(o).print(c.Cond))
		w.line("return p, &%sInputError{Msg: %q}", q, a.Name+": "+c.Msg)
		w.line("}")
	}
	w.line("return p, nil")
	w.line("}")
}

// limitState emits State: the algorithm's keys after the hash tag, each
// parameter they name written in decimal, joined by spaces (see
// limitspec.StateNamer).
func limitState(w *writer, a *Algorithm, q string) {
	typ := goType(a)
	var templates, exprs []string
	for _, s := range a.States {
		templates = append(templates, strings.TrimPrefix(keySuffix(s, func(p *Param) string { return "<" + p.Name + ">" }), ":"))
		// the suffix as a Go string literal, each parameter spliced in
		expr := `"` + strings.TrimPrefix(keySuffix(s, func(p *Param) string {
			return `" + strconv.FormatInt(p.` + goExported(p.Name) + `, 10) + "`
		}), ":") + `"`
		exprs = append(exprs, strings.ReplaceAll(expr, ` + ""`, ""))
	}
	w.text(`// State names the state l keeps for a key, {templates}: its keys after the
// hash tag, with the parameters its state is measured in and not its
// amounts, the same for two limits exactly when they share their state
// (see {q}StateNamer); "" when l is not valid.
func (l {typ}) State() string {
	{p}, err := l.args()
	if err != nil {
		return ""
	}
	return {exprs}
}

`, "{templates}", strings.Join(templates, " "), "{q}", q, "{typ}", typ, "{exprs}", strings.Join(exprs, ` + " " + `),
		"{p}", argsName(exprs))
}

// argsName is the name State gives its checked parameters: p, or _ when
// no key names one.
func argsName(exprs []string) string {
	if strings.Contains(strings.Join(exprs, ""), "p.") {
		return "p"
	}
	return "_"
}

// limitWindow emits QuotaWindow: the algorithm's window (Algorithm.Window)
// over the limit's parameters, printed as the requirements are, by
// goSaturating (the analysis proved it within [0, 2^53-1] for every
// accepted parameter value, so nothing saturates); 0 for a limit that is
// not valid.
func limitWindow(w *writer, a *Algorithm, o *Output) {
	typ := goType(a)
	if a.Window == nil {
		w.line("// QuotaWindow is 0: %s declares no window in its spec.", a.Name)
		w.line("func (l %s) QuotaWindow() time.Duration { return 0 }", typ)
		w.line("")
		return
	}
	w.line("// QuotaWindow is the time over which l's quota is counted, a fully used")
	w.line("// quota's time to be whole again: %s's window in its spec,", a.Name)
	w.line("//")
	w.line("//\t%s", Format(a.Window))
	w.line("//")
	w.line("// over l's parameters; 0 when it declares none for them, or l is not")
	w.line("// valid.")
	w.line("func (l %s) QuotaWindow() time.Duration {", typ)
	if paramFree(a.Window) {
		w.line("if _, err := l.args(); err != nil {")
	} else {
		w.line("p, err := l.args()")
		w.line("if err != nil {")
	}
	w.line("return 0")
	w.line("}")
	commentLines(w, "//", a.WindowComments)
	w.line("return time.Duration(%s) * time.Millisecond", goSaturating(o).print(a.Window))
	w.line("}")
	w.line("")
}

// limitRegister registers the typed limit for policyfile.NewLimit: from
// parameters named and measured as the spec does.
func limitRegister(w *writer, a *Algorithm, o *Output) {
	typ, q := o.qualifier(o.names, o.limits)+goType(a), o.qualifier(o.names, o.contract)
	var names []string
	for _, p := range a.Params {
		names = append(names, fmt.Sprintf("%q", p.Name))
	}
	w.line("")
	w.line("func init() {")
	w.line("kit.RegisterLimit(%s{}.Algorithm(), func(m map[string]int64) (%sLimit, error) {", typ, q)
	w.line("if refused := exact.Unknown(%q, m, %s); refused != \"\" {", a.Name, strings.Join(names, ", "))
	w.line("return nil, &%sInputError{Msg: refused}", q)
	w.line("}")
	w.line("var l %s", typ)
	for _, p := range a.Params {
		v := "v"
		w.line("if v, ok := m[%q]; ok {", p.Name)
		if _, ok := durationName(p); ok {
			// The domain, checked first, keeps the product within int64.
			w.line("if refused := exact.Outside(v, %d, %d, %q); refused != \"\" {", p.Min, p.Max, a.Name+": "+msgParamPrefix(p))
			w.line("return nil, &%sInputError{Msg: refused}", q)
			w.line("}")
			v = "time.Duration(v) * time.Millisecond"
		}
		w.line("l.%s = %s", limitField(p), v)
		if p.Default == nil {
			w.line("} else {")
			w.line("return nil, &%sInputError{Msg: %q}", q, a.Name+": "+msgMissing(p))
		}
		w.line("}")
	}
	w.line("if err := l.Validate(); err != nil {")
	w.line("return nil, err")
	w.line("}")
	w.line("return l, nil")
	w.line("})")
	w.line("}")
}
