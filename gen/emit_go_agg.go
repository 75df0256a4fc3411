package gen

import (
	"fmt"
	"regexp"
	"strings"
)

// goAggs are the aggregates of one algorithm's generated Go, each a
// method of its table that one call computes: aggregates that differ
// only in values that read no entry share one, which takes those values
// as arguments.
type goAggs struct {
	a      *Algorithm
	byText map[string]string // a method's body: its name
	decls  []string          // the methods, in order of first use
	count  map[string]int    // methods per collection and function
}

func newGoAggs(a *Algorithm) *goAggs {
	return &goAggs{a: a, byText: map[string]string{}, count: map[string]int{}}
}

// call is the call of the method that computes st's aggregate, declaring
// the method at its first use.
func (g *goAggs) call(st aggStep) string {
	shape, args := goShape(st.Agg)
	shapeStep := st
	shapeStep.Agg = shape
	if shape.It.State.Kind == ZSet {
		shapeStep.Index, _ = planIndex(shape) // as the aggregate's own
	}
	none := "0"
	if shape.D != nil {
		none = goExact.print(shape.D)
	}
	cuts := goAggCuts(shapeStep)
	body := strings.Join(append(cuts, "return "+goAggExpr(g.a, shapeStep, none)), "\n")
	coll := shape.It.State
	name, ok := g.byText[body]
	if !ok {
		base := goName(coll.Name + "_" + shape.Fn.String())
		g.count[base]++
		name = base
		if n := g.count[base]; n > 1 {
			name = fmt.Sprintf("%s%d", base, n)
		}
		g.byText[body] = name
		params := []string{fmt.Sprintf("%s []%s", goName(coll.Name), goEntryType(g.a, coll))}
		if usesParams.MatchString(body) { // a field's domain may depend on them
			params = append([]string{"p " + memParams(g.a)}, params...)
		}
		for i, x := range args { // a1, a2 int64: a type after the last of a run
			typ := "int64"
			if x.Type() == Bool {
				typ = "bool"
			}
			if i+1 < len(args) && args[i+1].Type() == x.Type() {
				typ = ""
			}
			params = append(params, strings.TrimSpace(fmt.Sprintf("a%d %s", i+1, typ)))
		}
		var w writer
		w.line("// %s is %s.", name, goShapeDoc(shape, len(args)))
		w.line("func (t *%s) %s(%s) %s {", tableType(g.a), name, strings.Join(params, ", "), goValueType(shape))
		for _, l := range strings.Split(body, "\n") {
			w.line("%s", l)
		}
		w.line("}")
		g.decls = append(g.decls, w.b.String())
	}
	vals := []string{goName(coll.Name)}
	if usesParams.MatchString(body) {
		vals = append([]string{"p"}, vals...)
	}
	for _, x := range args {
		vals = append(vals, goExact.print(x))
	}
	return fmt.Sprintf("t.%s(%s)", name, strings.Join(vals, ", "))
}

// usesParams matches a method's body that reads the parameters p.
var usesParams = regexp.MustCompile(`\bp\.`)

// emit declares the methods.
func (g *goAggs) emit(w *writer) {
	for _, d := range g.decls {
		w.line("")
		w.b.WriteString(d)
	}
}

// goShapeDoc is a shape in the spec's words, its arguments a1, a2, ...
func goShapeDoc(shape *Agg, n int) string {
	switch n {
	case 0:
		return Format(shape)
	case 1:
		return Format(shape) + ", of the argument a1"
	case 2:
		return Format(shape) + ", of the arguments a1 and a2"
	}
	return Format(shape) + fmt.Sprintf(", of the arguments a1 to a%d", n)
}

// goShape abstracts an aggregate: each largest part of its clauses that
// reads no entry, but a literal or a constant, becomes an argument, a1,
// a2, ... in order; it returns the aggregate so written and the parts.
func goShape(ag *Agg) (*Agg, []Expr) {
	var args []Expr
	var abs func(e Expr) Expr
	abs = func(e Expr) Expr {
		if e == nil {
			return nil
		}
		if !refersTo(e, ag.It) {
			if _, lit := e.(*Lit); lit {
				return e
			}
			args = append(args, e)
			return &VarRef{L: &Let{Name: fmt.Sprintf("a%d", len(args)), X: e}}
		}
		switch e := e.(type) {
		case *Unary:
			return &Unary{Op: e.Op, X: abs(e.X)}
		case *Binary:
			return &Binary{Op: e.Op, X: abs(e.X), Y: abs(e.Y)}
		case *Call:
			c := &Call{Fn: e.Fn}
			for _, x := range e.Args {
				c.Args = append(c.Args, abs(x))
			}
			return c
		case *Cond:
			return &Cond{C: abs(e.C), A: abs(e.A), B: abs(e.B)}
		}
		return e
	}
	shape := *ag
	shape.Where, shape.V, shape.N, shape.R, shape.D = abs(ag.Where), abs(ag.V), abs(ag.N), abs(ag.R), abs(ag.D)
	return &shape, args
}
