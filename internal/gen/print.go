package gen

import (
	"fmt"
	"strings"
)

// dialect renders the expression tree in one target language.
type dialect struct {
	// leaf renders literals and references.
	leaf func(e Expr) string
	// op maps a binary or unary operator; ok is false when the operator
	// is rendered as a call instead (fn(x, y)).
	op func(op string) (text string, infix bool)
	// call renders min, max, ceildiv and operators rendered as calls.
	call func(fn string, args []string) string
	// cond renders if-then-else.
	cond func(c, a, b string, t Type) string
	// agg renders an aggregate, printing its parts with d.
	agg func(d dialect, e *Agg) string
}

// specDialect prints expressions as the spec writes them.
var specDialect = dialect{
	leaf: func(e Expr) string {
		switch e := e.(type) {
		case *Lit:
			if e.Name != "" {
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
	op: func(op string) (string, bool) { return op, true },
	call: func(fn string, args []string) string {
		return fn + "(" + strings.Join(args, ", ") + ")"
	},
	cond: func(c, a, b string, _ Type) string { return "if " + c + " then " + a + " else " + b },
	agg:  formatAgg,
}

func formatAgg(d dialect, e *Agg) string {
	s := e.Fn + "(" + e.It.Name + " in " + e.It.State.Name
	if e.Where != nil {
		s += " where " + d.print(e.Where)
	}
	s += ": " + d.print(e.V)
	if e.Fn == "reach" {
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
		p := precedence(e.Op)
		text, infix := d.op(e.Op)
		if !infix {
			return d.call(text, []string{d.print(e.X), d.print(e.Y)})
		}
		// Left-associative: the right operand binds tighter; comparisons
		// do not chain, so both of their sides bind tighter.
		left := p
		if p == 3 {
			left = p + 1
		}
		s := d.prec(e.X, left) + " " + text + " " + d.prec(e.Y, p+1)
		if p < min {
			return "(" + s + ")"
		}
		return s
	case *Unary:
		text, _ := d.op(e.Op)
		s := text + d.prec(e.X, 6)
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
		return d.call(e.Fn, args)
	case *Cond:
		s := d.cond(d.print(e.C), d.print(e.A), d.print(e.B), e.Type())
		if min > 0 && strings.HasPrefix(s, "if ") {
			return "(" + s + ")"
		}
		return s
	}
	return d.leaf(e)
}
