package gen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// token is one lexical token of the logic language.
type token struct {
	kind string // "ident", "int", "op", "eof"
	text string
	line int
}

// comment is a comment of the logic language: its text after #, without
// surrounding spaces, and its line.
type comment struct {
	line int
	text string
}

// lex splits src into tokens and comments; line numbers start at
// firstLine.
func lex(src string, firstLine int) ([]token, []comment, error) {
	var toks []token
	var comments []comment
	line := firstLine
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#':
			j := i
			for j < len(src) && src[j] != '\n' {
				j++
			}
			comments = append(comments, comment{line, strings.TrimSpace(src[i+1 : j])})
			i = j
		case isIdentStart(rune(c)):
			j := i
			for j < len(src) && (isIdentStart(rune(src[j])) || unicode.IsDigit(rune(src[j]))) {
				j++
			}
			toks = append(toks, token{"ident", src[i:j], line})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			toks = append(toks, token{"int", src[i:j], line})
			i = j
		default:
			two := ""
			if i+1 < len(src) {
				two = src[i : i+2]
			}
			switch two {
			case "<=", ">=", "==", "!=", "&&", "||":
				toks = append(toks, token{"op", two, line})
				i += 2
				continue
			}
			if strings.ContainsRune("+-*/%<>=!(){},.:", rune(c)) {
				toks = append(toks, token{"op", string(c), line})
				i++
				continue
			}
			return nil, nil, fmt.Errorf("line %d: unexpected character %q", line, c)
		}
	}
	return append(toks, token{"eof", "", line}), comments, nil
}

// yamlComments are the comments of a YAML line comment ("# text"), as
// Commented holds them.
func yamlComments(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "#")); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }

// keywords of the logic language; none may name a value.
var keywords = map[string]bool{
	"let": true, "if": true, "then": true, "else": true, "store": true,
	"ttl": true, "reply": true, "true": true, "false": true,
	"now": true, "cost": true, "force": true, "min": true, "max": true, "ceildiv": true,
	"in": true, "where": true, "sum": true, "last": true, "reach": true,
	"add": true, "drop": true, "upto": true, "clear": true, "show": true,
	"for": true, "tiers": true,
}

// scope resolves names while parsing one algorithm.
type scope struct {
	spec   *Spec
	alg    *Algorithm
	lets   []map[string]*Let
	params bool // whether parameters may be named
	inputs bool // whether now, cost, state and lets may be named
	view   *View
	iters  []*Iter    // the aggregates being parsed, innermost last
	tier   *tierScope // the tier a for or a fold over tiers is parsing
	// tierLets are the names the fors over tiers bind so far.
	tierLets map[string]bool
	added    map[*State]bool // the collections an add statement so far writes
	inAgg    bool            // an aggregate is being parsed
	// wrote is set by the first statement that writes: no aggregate may
	// follow it, so that every read comes before every write and a
	// refusal (BADSTATE) changes nothing.
	wrote bool
}

// parser parses the logic language of one algorithm.
type parser struct {
	toks []token
	pos  int
	file string
	sc   *scope
	// comments are those not yet attached to a statement, in order.
	comments []comment
}

type parseError struct {
	pos Pos
	msg string
}

func (e *parseError) Error() string { return e.pos.String() + ": " + e.msg }

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token { t := p.toks[p.pos]; p.pos++; return t }

func (p *parser) fail(t token, format string, args ...any) {
	panic(&parseError{Pos{p.file, t.line}, fmt.Sprintf(format, args...)})
}

func (p *parser) expect(text string) token {
	t := p.next()
	if t.text != text || t.kind == "int" {
		p.fail(t, "expected %q, found %q", text, t.text)
	}
	return t
}

func (p *parser) is(text string) bool {
	t := p.peek()
	return t.kind != "int" && t.kind != "eof" && t.text == text
}

// fieldName reads a field name: after a dot or in an assignment, where
// a keyword (cost, say) cannot be mistaken for one.
func (p *parser) fieldName() token {
	t := p.next()
	if t.kind != "ident" {
		p.fail(t, "expected a field name, found %q", t.text)
	}
	return t
}

func (p *parser) ident() token {
	t := p.next()
	if t.kind != "ident" || keywords[t.text] {
		p.fail(t, "expected a name, found %q", t.text)
	}
	return t
}

// catch turns a parse panic into an error.
func catch(err *error) {
	if r := recover(); r != nil {
		pe, ok := r.(*parseError)
		if !ok {
			panic(r)
		}
		*err = pe
	}
}

// parseExprText parses a standalone expression (a domain bound, a
// requirement) that may name only constants and, if params is set,
// parameters; and a tier's, in a requirement's for over tiers (tier not
// nil).
func parseExprText(sp *Spec, alg *Algorithm, src string, pos Pos, params bool, tier *tierScope) (e Expr, err error) {
	defer catch(&err)
	toks, _, lerr := lex(src, pos.Line)
	if lerr != nil {
		return nil, fmt.Errorf("%s: %v", pos.File, lerr)
	}
	p := &parser{toks: toks, file: pos.File, sc: &scope{spec: sp, alg: alg, params: params, tier: tier}}
	e = p.expr()
	if t := p.peek(); t.kind != "eof" {
		p.fail(t, "unexpected %q after expression", t.text)
	}
	return e, nil
}

// parseLogic parses the body of an algorithm, or of one of its views
// when view is not nil.
func parseLogic(sp *Spec, alg *Algorithm, view *View, src string, pos Pos) (body []Stmt, err error) {
	defer catch(&err)
	toks, comments, lerr := lex(src, pos.Line)
	if lerr != nil {
		return nil, fmt.Errorf("%s: %v", pos.File, lerr)
	}
	sc := &scope{spec: sp, alg: alg, params: true, inputs: true, view: view, added: map[*State]bool{}, tierLets: map[string]bool{}}
	p := &parser{toks: toks, file: pos.File, sc: sc, comments: comments}
	body = p.block(true)
	if t := p.peek(); t.kind != "eof" {
		p.fail(t, "unexpected %q", t.text)
	}
	if len(body) == 0 {
		p.fail(p.peek(), "empty logic")
	}
	last := body[len(body)-1]
	if _, ok := last.(*Reply); !ok && view == nil {
		p.fail(p.peek(), "logic must end with a reply")
	}
	if _, ok := last.(*Show); !ok && view != nil {
		p.fail(p.peek(), "a view must end with show")
	}
	return body, nil
}

// block parses statements until "}" or the end.
func (p *parser) block(top bool) []Stmt {
	p.sc.lets = append(p.sc.lets, map[string]*Let{})
	defer func() { p.sc.lets = p.sc.lets[:len(p.sc.lets)-1] }()
	var out []Stmt
	replied := false
	for !p.is("}") && p.peek().kind != "eof" {
		t := p.peek()
		if replied {
			p.fail(t, "statement after reply")
		}
		if p.is("for") {
			out = append(out, p.forTiers(p.next())...)
			continue
		}
		s := p.stmt(top)
		switch s.(type) {
		case *Reply, *Show:
			replied = true
		}
		out = append(out, s)
	}
	for _, s := range out {
		if l, ok := s.(*Let); ok && l.uses == 0 {
			panic(&parseError{l.Pos, fmt.Sprintf("%q is never used", l.Name)})
		}
	}
	return slices.DeleteFunc(out, settled)
}

// stmt parses a statement with its comments (see Commented): those on
// the lines above it not yet attached, then the one at the end of its
// last line (an if takes the one of its opening brace's line in
// statement).
func (p *parser) stmt(top bool) Stmt {
	above := p.takeComments(p.peek().line - 1)
	s := p.statement(top)
	c := s.commented()
	if _, ok := s.(*If); !ok {
		c.Comments = p.takeComments(p.toks[p.pos-1].line)
	}
	c.Comments = append(above, c.Comments...)
	return s
}

// takeComments removes and returns the comments not yet attached up to
// line.
func (p *parser) takeComments(line int) []string {
	var out []string
	for len(p.comments) > 0 && p.comments[0].line <= line {
		out = append(out, p.comments[0].text)
		p.comments = p.comments[1:]
	}
	return out
}

func (p *parser) statement(top bool) Stmt {
	t := p.next()
	pos := Pos{p.file, t.line}
	if v := p.sc.view; v != nil && t.text != "let" && t.text != "show" {
		p.fail(t, "view %s: only let and show are allowed in a view", v.Name)
	}
	switch t.text {
	case "add":
		return p.add(pos)
	case "drop":
		return p.drop(t, pos)
	case "clear":
		st := p.collection(p.ident())
		if len(st.Fields) > 0 {
			p.fail(t, "clear deletes the key: %s also holds fields", st.Name)
		}
		p.sc.wrote = true
		return &Clear{State: st, Pos: pos}
	case "show":
		if p.sc.view == nil {
			p.fail(t, "show ends a view; the logic of an algorithm ends with reply")
		}
		if !top {
			p.fail(t, "show must be the last statement of the view, outside any if")
		}
		s := &Show{State: p.collection(p.ident()), Cond: &BoolLit{V: true}, Pos: pos}
		s.Fields = s.State.Entry
		if p.is("{") {
			s.Fields = p.shownFields(s.State)
		}
		if p.is("if") {
			p.next()
			s.Cond = p.typed(Bool)
		}
		return s
	case "let":
		return p.let(pos)
	case "if":
		s := &If{Cond: p.typed(Bool), Pos: pos}
		s.Comments = p.takeComments(p.expect("{").line)
		s.Then = p.block(false)
		p.expect("}")
		if p.is("else") {
			p.next()
			p.expect("{")
			s.Else = p.block(false)
			p.expect("}")
		}
		return s
	case "store":
		p.sc.wrote = true
		return p.store(pos)
	case "reply":
		if !top {
			p.fail(t, "reply must be the last statement of the logic, outside any if")
		}
		return p.reply(pos)
	}
	p.fail(t, "expected let, if, store, add, drop, clear or reply, found %q", t.text)
	return nil
}

// drop parses a drop statement after its keyword t.
func (p *parser) drop(t token, pos Pos) Stmt {
	st := p.collection(p.ident())
	if st.Kind == List {
		p.fail(t, "a list keeps arrival order: clear it instead of dropping entries")
	}
	if p.sc.added[st] {
		p.fail(t, "drop %s after add %s: drop first, so that it removes only entries read when the call began", st.Name, st.Name)
	}
	p.expect("upto")
	d := &Drop{State: st, Upto: p.typed(Int), Pos: pos}
	p.sc.wrote = true
	return d
}

// let parses a let statement after its keyword; in a for over tiers, the
// name it binds is the tier's (tierLetName).
func (p *parser) let(pos Pos) Stmt {
	name := p.letName()
	p.expect("=")
	l := &Let{Name: name.text, X: p.expr(), Pos: pos}
	if tier := p.sc.tier; tier != nil {
		l.Name, l.tier, l.tierBase = tierLetName(name.text, tier.index), tier.index, name.text
		if p.lookup(l.Name) != nil {
			p.fail(name, "%q of tier %d is already defined as %s", name.text, tier.index, l.Name)
		}
		p.sc.tierLets[name.text] = true
	}
	p.sc.lets[len(p.sc.lets)-1][l.Name] = l
	return l
}

// letName reads the name a let binds: not yet defined, without __ (kept
// for the generated code's own locals), and not a constant's name in Go
// (goConstName), which a local would hide.
func (p *parser) letName() token {
	name := p.ident()
	if p.lookup(name.text) != nil || p.sc.tierLets[name.text] && p.sc.tier == nil {
		p.fail(name, "%q is already defined", name.text)
	}
	if strings.Contains(name.text, "__") {
		p.fail(name, "%q: names with __ are kept for generated code", name.text)
	}
	for _, c := range constants(p.sc.spec) {
		if goName(name.text) == goConstName(c.Name) {
			p.fail(name, "%q: in Go it would hide the constant %s (%s); rename it", name.text, c.Name, goConstName(c.Name))
		}
	}
	return name
}

// collection resolves the name of a state that holds entries.
func (p *parser) collection(name token) *State {
	for _, s := range p.sc.alg.States {
		if s.Name == name.text {
			if !s.Collection() {
				p.fail(name, "state %s has no entries", s.Name)
			}
			return s
		}
	}
	p.fail(name, "unknown state %q", name.text)
	return nil
}

func (p *parser) add(pos Pos) Stmt {
	st := p.collection(p.ident())
	var names []string
	var types []Type
	for _, f := range st.Entry {
		if f != st.Running { // computed by the generator
			names = append(names, f.Name)
			types = append(types, f.Type)
		}
	}
	s := &Add{State: st, Values: p.assignments("add "+st.Name, names, types, nil), Pos: pos}
	if st.Running != nil {
		s.Values = append(s.Values[:st.Running.Index], append([]Expr{nil}, s.Values[st.Running.Index:]...)...)
	}
	p.sc.added[st] = true
	p.sc.wrote = true
	if !p.is("ttl") {
		panic(&parseError{pos, fmt.Sprintf("add %s needs a ttl: every key a script writes must expire", st.Name)})
	}
	p.next()
	s.TTL = p.typed(Int)
	return s
}

// shownFields parses the fields a show returns, `{ name, ... }`: entry
// fields of st, each once, in the order given.
func (p *parser) shownFields(st *State) []*Field {
	p.expect("{")
	var out []*Field
	for {
		n := p.fieldName()
		i := slices.IndexFunc(st.Entry, func(f *Field) bool { return f.Name == n.text })
		switch {
		case i < 0:
			p.fail(n, "an entry of %s has no field %q", st.Name, n.text)
		case slices.Contains(out, st.Entry[i]):
			p.fail(n, "field %q shown twice", n.text)
		}
		out = append(out, st.Entry[i])
		if !p.is(",") {
			break
		}
		p.next()
	}
	p.expect("}")
	return out
}

// assignments parses `{ name = expr, ... }` against the declared names;
// a name with a default in defaults may be left out.
func (p *parser) assignments(what string, names []string, types []Type, defaults []*int64) []Expr {
	p.expect("{")
	vals := make([]Expr, len(names))
	for !p.is("}") {
		n := p.fieldName()
		i := indexOf(names, n.text)
		if i < 0 {
			p.fail(n, "%s has no field %q (fields: %s)", what, n.text, strings.Join(names, ", "))
		}
		if vals[i] != nil {
			p.fail(n, "field %q set twice", n.text)
		}
		p.expect("=")
		vals[i] = p.typed(types[i])
		if !p.is(",") {
			break
		}
		p.next()
	}
	end := p.expect("}")
	for i, v := range vals {
		if v == nil && defaults != nil && defaults[i] != nil {
			vals[i] = &Lit{V: *defaults[i]}
			continue
		}
		if v == nil {
			p.fail(end, "%s: field %q is not set", what, names[i])
		}
	}
	return vals
}

func (p *parser) store(pos Pos) Stmt {
	name := p.ident()
	var st *State
	for _, s := range p.sc.alg.States {
		if s.Name == name.text {
			st = s
		}
	}
	if st == nil {
		p.fail(name, "unknown state %q", name.text)
	}
	var names []string
	var types []Type
	for _, f := range st.Fields {
		names = append(names, f.Name)
		types = append(types, Int)
	}
	if len(names) == 0 {
		p.fail(name, "state %s has no fields to store; add writes its entries", st.Name)
	}
	s := &Store{State: st, Values: p.assignments("store "+st.Name, names, types, nil), Pos: pos}
	if !p.is("ttl") {
		panic(&parseError{pos, fmt.Sprintf("store %s needs a ttl: every key a script writes must expire", st.Name)})
	}
	p.next()
	s.TTL = p.typed(Int)
	return s
}

func (p *parser) reply(pos Pos) Stmt {
	var names []string
	var types []Type
	var defaults []*int64
	for _, f := range p.sc.spec.Reply {
		names = append(names, f.Name)
		types = append(types, f.Type)
		defaults = append(defaults, f.Default)
	}
	return &Reply{Values: p.assignments("reply", names, types, defaults), Pos: pos}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func (p *parser) lookup(name string) *Let {
	for i := len(p.sc.lets) - 1; i >= 0; i-- {
		if l, ok := p.sc.lets[i][name]; ok {
			return l
		}
	}
	return nil
}

// typed parses an expression and checks its type.
func (p *parser) typed(want Type) Expr {
	t := p.peek()
	e := p.expr()
	if e.Type() != want {
		p.fail(t, "expected an %s expression, found %s", want, e.Type())
	}
	return e
}

func (p *parser) expr() Expr {
	if p.is("if") {
		t := p.next()
		c := p.typed(Bool)
		p.expect("then")
		a := p.expr()
		p.expect("else")
		b := p.expr()
		if a.Type() != b.Type() {
			p.fail(t, "the branches of if-then-else have types %s and %s", a.Type(), b.Type())
		}
		return settle(&Cond{c, a, b})
	}
	return p.binary(1)
}

// binary parses operators of precedence at least min.
func (p *parser) binary(min int) Expr {
	x := p.unary()
	for {
		t := p.peek()
		op, ok := binaryOps[t.text]
		if t.kind != "op" || !ok || op.Prec() < min {
			return x
		}
		p.next()
		prec := op.Prec()
		y := p.binary(prec + 1)
		b := &Binary{Op: op, X: x, Y: y}
		switch prec {
		case 1, 2:
			if x.Type() != Bool || y.Type() != Bool {
				p.fail(t, "%s needs bool operands", op)
			}
		case 3:
			if x.Type() != Int || y.Type() != Int {
				p.fail(t, "%s needs int operands", op)
			}
			if n := p.peek(); n.kind == "op" && binaryOps[n.text].Comparison() {
				p.fail(n, "comparisons do not chain; use &&")
			}
		default:
			if x.Type() != Int || y.Type() != Int {
				p.fail(t, "%s needs int operands", op)
			}
		}
		x = settle(b)
	}
}

func (p *parser) unary() Expr {
	t := p.peek()
	if p.is("-") || p.is("!") {
		p.next()
		x := p.unary()
		if want := map[string]Type{"-": Int, "!": Bool}[t.text]; x.Type() != want {
			p.fail(t, "%s needs an %s operand", t.text, want)
		}
		if l, ok := x.(*Lit); ok && t.text == "-" {
			return &Lit{V: -l.V}
		}
		return settle(&Unary{Op: map[string]Op{"-": OpNeg, "!": OpNot}[t.text], X: x})
	}
	return p.primary()
}

func (p *parser) primary() Expr {
	t := p.next()
	switch {
	case t.kind == "int":
		v, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil || v > MaxSafe {
			p.fail(t, "integer %s is larger than 2^53-1", t.text)
		}
		return &Lit{V: v}
	case t.text == "(":
		e := p.expr()
		p.expect(")")
		return e
	case t.text == "true" || t.text == "false":
		return &BoolLit{V: t.text == "true"}
	case t.text == "sum" || t.text == "last" || t.text == "reach":
		return p.aggregate(t)
	case (t.text == "min" || t.text == "max" || t.text == "all" || t.text == "first") && p.foldAhead():
		return p.fold(t)
	case t.text == "min" || t.text == "max" || t.text == "ceildiv":
		p.expect("(")
		a := p.typed(Int)
		p.expect(",")
		b := p.typed(Int)
		p.expect(")")
		return &Call{Fn: funcOps[t.text], Args: []Expr{a, b}}
	case t.text == "force":
		if !p.sc.inputs || p.sc.view != nil {
			p.fail(t, "force cannot be used here: only in an algorithm's logic")
		}
		return &ForceRef{}
	case t.text == "now" || t.text == "cost":
		if !p.sc.inputs {
			p.fail(t, "%s cannot be used here: only parameters and constants", t.text)
		}
		if p.sc.view != nil && t.text == "cost" {
			p.fail(t, "a view takes no cost")
		}
		for _, in := range p.sc.spec.Inputs {
			if in.Name == t.text {
				return &InputRef{In: in}
			}
		}
	case t.kind == "ident":
		return p.name(t)
	}
	p.fail(t, "expected an expression, found %q", t.text)
	return nil
}

// aggregate parses sum(...), last(...) or reach(...) after its name.
func (p *parser) aggregate(t token) Expr {
	if !p.sc.inputs {
		p.fail(t, "%s cannot be used here: only parameters and constants", t.text)
	}
	p.expect("(")
	name := p.ident()
	if p.lookup(name.text) != nil || p.iter(name.text) != nil {
		p.fail(name, "%q is already defined", name.text)
	}
	p.expect("in")
	cn := p.ident()
	st := p.collection(cn)
	if p.sc.wrote {
		p.fail(t, "an aggregate of %s after a statement that writes: aggregates read the state as it was when the call began, before the first store, add, drop or clear", st.Name)
	}
	if p.sc.inAgg {
		p.fail(t, "an aggregate may not hold another")
	}
	p.sc.inAgg = true
	defer func() { p.sc.inAgg = false }()
	a := &Agg{Fn: aggFns[t.text], It: &Iter{Name: name.text, State: st}}
	p.sc.iters = append(p.sc.iters, a.It)
	defer func() { p.sc.iters = p.sc.iters[:len(p.sc.iters)-1] }()
	if p.is("where") {
		p.next()
		a.Where = p.typed(Bool)
	}
	p.expect(":")
	if a.Fn == Reach {
		vt := p.peek()
		a.V = p.binary(4) // stops at >=
		if a.V.Type() != Int {
			p.fail(vt, "expected an int expression, found %s", a.V.Type())
		}
	} else {
		a.V = p.typed(Int)
	}
	if a.Fn == Reach {
		p.expect(">=")
		a.N = p.typed(Int)
		p.expect("then")
		a.R = p.typed(Int)
	}
	if a.Fn != Sum {
		p.expect("else")
		p.sc.iters = p.sc.iters[:len(p.sc.iters)-1] // the default sees no entry
		a.D = p.typed(Int)
		p.sc.iters = append(p.sc.iters, a.It)
	}
	p.expect(")")
	switch {
	case st.Kind == ZSet:
		if _, err := planIndex(a); err != nil {
			p.fail(t, "%v", err)
		}
	case p.sc.view == nil && (a.Fn != Last || a.Where != nil):
		p.fail(t, "a decision reads a list's newest entry alone (last with no where clause): the list %s is read whole by views only; keep entries a decision aggregates in a zset", st.Name)
	}
	return a
}

func (p *parser) iter(name string) *Iter {
	for i := len(p.sc.iters) - 1; i >= 0; i-- {
		if p.sc.iters[i].Name == name {
			return p.sc.iters[i]
		}
	}
	return nil
}

func (p *parser) name(t token) Expr {
	if tier := p.sc.tier; tier != nil && t.text == tier.name {
		return p.tierName(t)
	}
	if p.sc.tier != nil && p.sc.tierLets[t.text] && p.iter(t.text) == nil {
		return p.tierLet(t)
	}
	if it := p.iter(t.text); it != nil {
		p.expect(".")
		f := p.fieldName()
		for _, fd := range it.State.Entry {
			if fd.Name == f.text {
				return &EntryRef{It: it, F: fd}
			}
		}
		p.fail(f, "an entry of %s has no field %q", it.State.Name, f.text)
	}
	if p.is(".") {
		p.next()
		f := p.ident()
		if !p.sc.inputs {
			p.fail(t, "state cannot be read here")
		}
		for _, s := range p.sc.alg.States {
			if s.Name != t.text {
				continue
			}
			for _, fd := range s.Fields {
				if fd.Name == f.text {
					return &FieldRef{F: fd}
				}
			}
			p.fail(f, "state %s has no field %q", s.Name, f.text)
		}
		p.fail(t, "unknown state %q", t.text)
	}
	if p.sc.inputs {
		if l := p.lookup(t.text); l != nil {
			if l.tier > 0 {
				p.fail(t, "%s", tierLetError(l))
			}
			return letRef(l)
		}
	}
	if p.sc.inputs && p.sc.view == nil {
		for _, in := range p.sc.alg.Strings {
			if in.Name == t.text {
				return &StrRef{In: in}
			}
		}
	}
	if p.sc.params && p.sc.alg != nil {
		for _, prm := range p.sc.alg.Params {
			if prm.Name == t.text {
				return &ParamRef{P: prm}
			}
		}
	}
	for _, c := range p.sc.spec.Consts {
		if c.Name == t.text {
			return &Lit{V: c.Value, Name: c.Name}
		}
	}
	p.fail(t, "unknown name %q", t.text)
	return nil
}
