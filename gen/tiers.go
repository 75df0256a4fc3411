package gen

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A Tier is one of the limits an algorithm checks over one state, as
// bucket_window's "1000 per 1 s, 5000 per 10 s": its parameters by the
// role they play, the same roles in every tier (limit: limit_2, say).
//
// The logic names them through a loop over the tiers, which the parser
// unrolls, so that the IR and both emitters see plain lets:
//
//	for t in tiers {
//	  let used = sum(e in win where e.start > bucket - t.window_ms: e.count)
//	}
//	let worst = max(t in tiers: t.used)
//
// In the for, t.role is the tier's parameter, t.index its number from 1,
// and a name the for binds (used) is the tier's own, bound as used1,
// used2, ... Only lets may stand in a for; a later for reads an earlier
// one's names bare, and outside a for they are read through a fold:
// min, max, all (&&), or first(t in tiers where c: e), which is e of the
// first tier where c holds, or of the last tier. A require may loop over
// the tiers too (tierRequires). What a tier's parameter domains decide
// (tier 1's t.limit > 0, when limit is at least 1) is settled while
// parsing, so that the unrolled code is what one would write by hand.
type Tier struct {
	Params map[string]*Param
}

// tierScope is the tier a for or a fold over tiers is parsing.
type tierScope struct {
	name  string // the loop's variable
	index int    // the tier's number, from 1
}

// tiers reads an algorithm's tiers: each maps a role to a parameter.
func (l *loader) tiers(a *Algorithm, yts []map[string]string, pos Pos) {
	if len(yts) == 1 {
		l.errf(pos, "%s: tiers: one tier is no tiers; declare two or more, or none", a.Name)
		return
	}
	for i, yt := range yts {
		t := Tier{Params: map[string]*Param{}}
		for role, name := range yt {
			at := slices.IndexFunc(a.Params, func(p *Param) bool { return p.Name == name })
			switch {
			case !nameRE.MatchString(role) || role == "index":
				l.errf(pos, "%s: tiers: role %q: roles are lower_case names, and index is each tier's number", a.Name, role)
			case at < 0:
				l.errf(pos, "%s: tiers: %s names no parameter (%q)", a.Name, role, name)
			default:
				t.Params[role] = a.Params[at]
			}
		}
		if i > 0 && !sameRoles(t, a.Tiers[0]) {
			l.errf(pos, "%s: tiers: tier %d's roles differ from tier 1's: every tier names the same roles", a.Name, i+1)
		}
		a.Tiers = append(a.Tiers, t)
	}
}

func sameRoles(a, b Tier) bool {
	if len(a.Params) != len(b.Params) {
		return false
	}
	for role := range a.Params {
		if b.Params[role] == nil {
			return false
		}
	}
	return true
}

// forTiers parses a for over the tiers after its keyword, once per tier,
// into that tier's lets (block drops those the domains settle).
func (p *parser) forTiers(t token) []Stmt {
	if p.sc.view != nil || p.sc.tier != nil || len(p.sc.lets) != 1 {
		p.fail(t, "a for over tiers stands at the top of an algorithm's logic")
	}
	v := p.loopHead(t)
	p.expect("{")
	var out []Stmt
	p.eachTier(v, func(int) {
		for !p.is("}") && p.peek().kind != "eof" {
			if !p.is("let") {
				p.fail(p.peek(), "only let may stand in a for over tiers")
			}
			out = append(out, p.stmt(false))
		}
	})
	p.expect("}")
	return out
}

// eachTier parses the tokens from where the parser stands once per
// tier, v naming the tier, by parse; it stands after them then.
func (p *parser) eachTier(v string, parse func(i int)) {
	start := p.pos
	for i := range p.sc.alg.Tiers {
		p.pos = start
		p.sc.tier = &tierScope{name: v, index: i + 1}
		parse(i)
	}
	p.sc.tier = nil
}

// loopHead reads "v in tiers" and returns v.
func (p *parser) loopHead(t token) string {
	if len(p.sc.alg.Tiers) == 0 {
		p.fail(t, "%s declares no tiers to loop over", p.sc.alg.Name)
	}
	v := p.ident()
	if p.lookup(v.text) != nil || p.sc.tierLets[v.text] {
		p.fail(v, "%q is already defined", v.text)
	}
	p.expect("in")
	p.expect("tiers")
	return v.text
}

// foldAhead tells whether the tokens after a function's name open a fold
// over the tiers: "(v in tiers".
func (p *parser) foldAhead() bool {
	if p.pos+3 >= len(p.toks) {
		return false
	}
	t := p.toks[p.pos : p.pos+4]
	return t[0].text == "(" && t[1].kind == "ident" && t[2].text == "in" && t[3].text == "tiers"
}

// fold parses min, max, all or first over the tiers after its name.
func (p *parser) fold(t token) Expr {
	p.expect("(")
	if p.sc.tier != nil {
		p.fail(t, "a fold over tiers inside a for or a fold over tiers: read the tier's own names")
	}
	v := p.loopHead(t)
	var conds, vals []Expr
	p.eachTier(v, func(i int) {
		if t.text == "first" {
			p.expect("where")
			conds = append(conds, p.typed(Bool))
		}
		p.expect(":")
		vt := p.peek()
		vals = append(vals, p.expr())
		if want, ok := map[string]Type{"min": Int, "max": Int, "all": Bool}[t.text]; ok && vals[i].Type() != want {
			p.fail(vt, "%s needs %s values, found %s", t.text, want, vals[i].Type())
		}
		if i > 0 && vals[i].Type() != vals[0].Type() {
			p.fail(vt, "%s's values differ in type across the tiers: %s and %s", t.text, vals[0].Type(), vals[i].Type())
		}
	})
	p.expect(")")
	return combineFold(t.text, conds, vals)
}

// combineFold joins a fold's values, one per tier: max(a, max(b, c)),
// a && b && c, or if ca then a else if cb then b else c.
func combineFold(fn string, conds, vals []Expr) Expr {
	if fn == "all" {
		x := vals[0]
		for _, y := range vals[1:] {
			x = &Binary{Op: OpAnd, X: x, Y: y}
		}
		return x
	}
	x := vals[len(vals)-1]
	for i := len(vals) - 2; i >= 0; i-- {
		if fn == "first" {
			x = &Cond{conds[i], vals[i], x}
		} else {
			x = &Call{Fn: funcOps[fn], Args: []Expr{vals[i], x}}
		}
	}
	return x
}

// tierName resolves t.role, t.index or t.name (a name a for binds) in a
// for or a fold over the tiers.
func (p *parser) tierName(t token) Expr {
	p.expect(".")
	f := p.fieldName()
	tier := p.sc.tier
	if f.text == "index" {
		return &Lit{V: int64(tier.index)}
	}
	if prm := p.sc.alg.Tiers[tier.index-1].Params[f.text]; prm != nil {
		return &ParamRef{P: prm}
	}
	if p.sc.tierLets[f.text] {
		return p.tierLet(f)
	}
	p.fail(f, "a tier has no %q: its roles, index, or a name a for over tiers binds", f.text)
	return nil
}

// tierLet resolves a name a for over tiers binds to the current tier's
// let.
func (p *parser) tierLet(t token) Expr {
	l := p.lookup(tierLetName(t.text, p.sc.tier.index))
	if l == nil {
		p.fail(t, "%q is not yet bound for tier %d", t.text, p.sc.tier.index)
	}
	return letRef(l)
}

// tierLetName is the name of tier index's let of name.
func tierLetName(name string, index int) string {
	return name + strconv.Itoa(index)
}

// tierLetError is the refusal of a tier's let named outside a for or a
// fold over tiers.
func tierLetError(l *Let) string {
	return fmt.Sprintf("%q is tier %d's %s: read it as v.%s in a fold over tiers", l.Name, l.tier, l.tierBase, l.tierBase)
}

// tierRequires reads a requirement's for over tiers: each of its Each,
// for tier 1, then for tier 2, ..., its doc naming the tier's parameters
// as {t.role} and its number as {t.index}. A requirement the tier's
// parameter domains settle (tier 1's limit > 0) is left out.
func (l *loader) tierRequires(a *Algorithm, yr yamlRequire) {
	v, ok := strings.CutSuffix(strings.TrimSpace(yr.For), " in tiers")
	if !ok || !nameRE.MatchString(v) || len(yr.Each) == 0 || yr.Expr.Kind != 0 || yr.Doc != "" || len(a.Tiers) == 0 {
		l.errf(a.Pos, "%s: a require over tiers is {for: t in tiers, each: [requires]}, with tiers declared", a.Name)
		return
	}
	for i, tier := range a.Tiers {
		for _, each := range yr.Each {
			pos := l.pos(&each.Expr)
			e, err := parseExprText(l.sp, a, each.Expr.Value, pos, true, &tierScope{name: v, index: i + 1})
			if err != nil {
				l.errs = append(l.errs, fmt.Errorf("%v (in require)", err))
				continue
			}
			doc, err := tierDoc(each.Doc, v, tier, i+1)
			if err != nil {
				l.errf(pos, "%s: %v", a.Name, err)
			}
			l.require(a, e, doc, pos)
		}
	}
}

// tierDoc is doc with each {v.role} replaced by the tier's parameter and
// {v.index} by its number.
func tierDoc(doc, v string, tier Tier, index int) (string, error) {
	var err error
	out := tierRef.ReplaceAllStringFunc(doc, func(m string) string {
		sub := tierRef.FindStringSubmatch(m)
		switch {
		case sub[1] != v:
			return m
		case sub[2] == "index":
			return strconv.Itoa(index)
		case tier.Params[sub[2]] != nil:
			return tier.Params[sub[2]].Name
		}
		err = fmt.Errorf("require: %s names no role of a tier", m)
		return m
	})
	return out, err
}

// tierRef is {v.role} in a requirement's doc.
var tierRef = regexp.MustCompile(`\{(\w+)\.(\w+)\}`)
