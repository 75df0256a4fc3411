package gen

import (
	"fmt"
	"strings"
)

// dialect renders the expression tree in one target language.
// leafNames says how one target's code names each kind of leaf: a
// named constant, force, a parameter, an input, a state field, a let, a
// string input, an entry's field. Other literals are written alike.
type leafNames struct {
	constant func(name string) string
	force    string
	param    func(*Param) string
	input    func(*Input) string
	field    func(*Field) string
	let      func(*Let) string
	str      func(*StrInput) string
	entry    func(*EntryRef) string
}

// leaf renders a literal or a reference.
func (n leafNames) leaf(e Expr) string {
	if l, ok := e.(*Lit); ok && l.Name != "" {
		return n.constant(l.Name)
	}
	if s, ok := literal(e); ok {
		return s
	}
	switch e := e.(type) {
	case *ForceRef:
		return n.force
	case *ParamRef:
		return n.param(e.P)
	case *InputRef:
		return n.input(e.In)
	case *FieldRef:
		return n.field(e.F)
	case *VarRef:
		return n.let(e.L)
	case *StrRef:
		return n.str(e.In)
	case *EntryRef:
		return n.entry(e)
	}
	panic(fmt.Sprintf("leaf %T", e))
}

type dialect struct {
	// leaf renders literals and references.
	leaf func(e Expr) string
	// ops says how each operator is written: infix (or prefix), or as a
	// call, which call renders.
	ops *[numOps]opForm
	// call renders the operators written as calls: fn is their text.
	call func(fn string, args []string) string
	// cond renders if-then-else.
	cond func(c, a, b string, t Type) string
	// agg renders an aggregate, printing its parts with d.
	agg func(d dialect, e *Agg) string
	// condExpr, when set, renders if-then-else in place of cond, from
	// its parts unprinted (see luaEmitter.condExpr).
	condExpr func(e *Cond) string
}

// opForm is how a dialect writes an operator: text between its operands
// (before its operand, for a unary one), or a call of text (call).
type opForm struct {
	text string
	call bool
}

// opForms are the operators written as the spec writes them: a function
// as a call, the others infix.
func opForms() *[numOps]opForm {
	var f [numOps]opForm
	for o := range numOps {
		f[o] = opForm{text: o.String(), call: o >= OpMin}
	}
	return &f
}

// literal is an integer or bool literal as Go and Lua write it; ok is
// false for any other expression.
func literal(e Expr) (text string, ok bool) {
	switch e := e.(type) {
	case *Lit:
		return fmt.Sprint(e.V), true
	case *BoolLit:
		return fmt.Sprint(e.V), true
	}
	return "", false
}

// specDialect prints expressions as the spec writes them.
var specDialect = dialect{
	leaf: func(e Expr) string {
		switch e := e.(type) {
		case *Lit:
			if e.Name != "" && e.Name != maxSafeName { // MAX_SAFE is no constant of the spec
				return e.Name
			}
			return fmt.Sprint(e.V)
		case *BoolLit:
			return fmt.Sprint(e.V)
		case *ForceRef:
			return "force"
		case *ParamRef:
			return e.P.Name
		case *InputRef:
			return e.In.Name
		case *FieldRef:
			return e.F.State.Name + "." + e.F.Name
		case *VarRef:
			return e.L.Name
		case *StrRef:
			return e.In.Name
		case *EntryRef:
			return e.It.Name + "." + e.F.Name
		}
		panic(fmt.Sprintf("leaf %T", e))
	},
	ops:  opForms(),
	call: callText,
	cond: func(c, a, b string, _ Type) string { return "if " + c + " then " + a + " else " + b },
	agg:  formatAgg,
}

// callText is fn(args...).
func callText(fn string, args []string) string {
	return fn + "(" + strings.Join(args, ", ") + ")"
}

func formatAgg(d dialect, e *Agg) string {
	s := e.Fn.String() + "(" + e.It.Name + " in " + e.It.State.Name
	if e.Where != nil {
		s += " where " + d.print(e.Where)
	}
	s += ": " + d.print(e.V)
	if e.Fn == Reach {
		s += " >= " + d.print(e.N) + " then " + d.print(e.R)
	}
	if e.D != nil {
		s += " else " + d.print(e.D)
	}
	return s + ")"
}

// Format prints e in the syntax of the spec.
func Format(e Expr) string { return specDialect.print(e) }

func (d dialect) print(e Expr) string { return d.prec(e, 0) }

// prec prints e, parenthesised if its precedence is below min.
func (d dialect) prec(e Expr, min int) string {
	switch e := e.(type) {
	case *Binary:
		p := e.Op.Prec()
		form := d.ops[e.Op]
		if form.call {
			return d.call(form.text, []string{d.print(e.X), d.print(e.Y)})
		}
		// Left-associative: the right operand binds tighter; comparisons
		// do not chain, so both of their sides bind tighter.
		left := p
		if p == 3 {
			left = p + 1
		}
		s := d.prec(e.X, left) + " " + form.text + " " + d.prec(e.Y, p+1)
		if p < min {
			return "(" + s + ")"
		}
		return s
	case *Unary:
		s := d.ops[e.Op].text + d.prec(e.X, 6)
		if 6 < min {
			return "(" + s + ")"
		}
		return s
	case *Lit:
		s := d.leaf(e)
		if e.V < 0 && min > 0 {
			return "(" + s + ")"
		}
		return s
	case *Agg:
		return d.agg(d, e)
	case *Call:
		args := make([]string, len(e.Args))
		for i, a := range e.Args {
			args[i] = d.print(a)
		}
		return d.call(d.ops[e.Fn].text, args)
	case *Cond:
		if d.condExpr != nil {
			return d.condExpr(e)
		}
		s := d.cond(d.print(e.C), d.print(e.A), d.print(e.B), e.Type())
		if min > 0 && strings.HasPrefix(s, "if ") {
			return "(" + s + ")"
		}
		return s
	}
	return d.leaf(e)
}
