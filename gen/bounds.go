package gen

import (
	"errors"
	"fmt"
	"math/big"
)

// The bound analysis.
//
// Every integer value of the logic gets a lower and an upper bound, each an
// expression over the parameters and constants only (now, cost and state
// fields are replaced by their declared domains). Parameters are fixed for
// a limiter, so these symbolic bounds are exact numbers at run time even
// where the declared domains are wide.
//
// Each bound is first evaluated statically over the declared parameter
// domains (interval arithmetic in math/big; a `require E <= K` caps E at K).
// If that proves the value stays within ±(2^53-1), nothing more is needed.
// Otherwise the bound itself becomes a runtime Check on the parameters,
// evaluated in the order the values occur, so the generated code refuses
// the parameters before any value could round. The analysis is
// path-insensitive: branch conditions do not narrow bounds.

type bound struct{ lo, hi Expr }

type analyzer struct {
	sp     *Spec
	alg    *Algorithm
	lets   map[*Let]bound
	facts  map[string]*big.Int // Format(E) -> K for each `require E <= K`
	seen   map[string]bool     // checks already emitted
	errs   []error
	pos    Pos
	maxBig *big.Int
}

// Analyze bounds every value of every algorithm, fills Algorithm.Checks,
// and rejects a spec whose arithmetic cannot be kept exact.
func Analyze(sp *Spec) error {
	var errs []error
	for _, a := range sp.Algorithms {
		an := &analyzer{sp: sp, alg: a, lets: map[*Let]bound{}, facts: map[string]*big.Int{}, seen: map[string]bool{}, maxBig: big.NewInt(MaxSafe)}
		an.run()
		errs = append(errs, an.errs...)
	}
	return errors.Join(errs...)
}

func (an *analyzer) errf(format string, args ...any) {
	an.errs = append(an.errs, fmt.Errorf("%s: %s: %s", an.pos, an.alg.Name, fmt.Sprintf(format, args...)))
}

func (an *analyzer) run() {
	a := an.alg
	an.pos = a.Pos
	for _, r := range a.Requires {
		if b, ok := r.Cond.(*Binary); ok {
			if k, ok := b.Y.(*Lit); ok && (b.Op == OpLe || b.Op == OpLt) {
				v := big.NewInt(k.V)
				if b.Op == OpLt {
					v.Sub(v, big.NewInt(1))
				}
				an.facts[Format(b.X)] = v
			}
		}
	}
	for _, s := range a.States {
		an.pos = s.Pos
		for _, f := range s.Fields {
			if f.Min == nil || f.Max == nil || f.Default == nil {
				continue
			}
			for _, e := range []Expr{f.Min, f.Max, f.Default} {
				an.value(e)
			}
			what := s.Name + "." + f.Name
			an.nonneg(an.sub(f.Max, f.Min), "the domain of "+what+" may be empty")
			an.nonneg(an.sub(f.Default, f.Min), "the default of "+what+" may be below its min")
			an.nonneg(an.sub(f.Max, f.Default), "the default of "+what+" may be above its max")
		}
		if s.MaxEntries != nil {
			an.value(s.MaxEntries)
			an.nonneg(s.MaxEntries, "max_entries of "+s.Name+" may be negative")
		}
		if s.Kind == ZSet && s.Merge == nil && len(s.Entry) > 1 && s.Entry[1].Type == Int && s.Entry[1].Max != nil {
			lo, _ := an.static(s.Entry[1].Min)
			_, hi := an.static(s.Entry[1].Max)
			if lo.Sign() < 0 {
				an.errf("%s.%s orders entries of one score: its min must not be negative", s.Name, s.Entry[1].Name)
			}
			s.PadWidth = len(hi.String())
		}
		if s.Running != nil && !(paramFree(s.RunOf.Min) && paramFree(s.RunOf.Max)) {
			// A domain over parameters would clamp stored values when the
			// parameters change, and the sums built from them would drift.
			an.errf("%s.%s is summed by %s.%s: its domain must not depend on the parameters", s.Name, s.RunOf.Name, s.Name, s.Running.Name)
		}
		if s.Running != nil && s.MaxEntries != nil && s.RunOf.Max != nil {
			// Differences of running sums modulo RUN_MOD are exact while
			// the sum over every entry the zset holds is below RUN_MOD.
			if p := an.staticProduct(s.MaxEntries, s.RunOf.Max, "the sum of "+s.Name+"."+s.RunOf.Name); p >= an.sp.RunMod {
				an.errf("the sum of %s.%s over %s entries may reach %d, not below RUN_MOD", s.Name, s.RunOf.Name, Format(s.MaxEntries), p)
			}
		}
		for _, f := range s.Entry {
			if f.Type != Int || f.Min == nil || f.Max == nil {
				continue
			}
			an.value(f.Min)
			an.value(f.Max)
			an.nonneg(an.sub(f.Max, f.Min), "the domain of "+s.Name+" entry field "+f.Name+" may be empty")
		}
	}
	an.block(a.Body)
	for _, v := range a.Views {
		an.block(v.Body)
	}
	an.window()
}

// window bounds the algorithm's window (Algorithm.Window): it must be at
// least 0 and, for every parameter value the spec accepts, at most
// 2^53-1. A window is only read off the parameters, so it may not add a
// runtime check of its own: a bound the domains, the requirements and the
// checks of the logic cannot prove refuses the spec. Every intermediate
// value is then within ±(2^53-1) too, so the saturating rendering of it in
// a typed limit's QuotaWindow never saturates.
func (an *analyzer) window() {
	w := an.alg.Window
	if w == nil {
		return
	}
	an.pos = an.alg.WindowPos
	checks := len(an.alg.Checks)
	b := an.value(w)
	if len(an.alg.Checks) > checks {
		an.alg.Checks = an.alg.Checks[:checks]
		an.errf("the window %s may pass 2^53-1 for parameters the spec accepts: bound it with a require", Format(w))
	}
	if lo, _ := an.static(b.lo); lo.Sign() < 0 {
		an.errf("the window %s may be negative (as low as %s)", Format(w), lo)
	}
}

func (an *analyzer) block(body []Stmt) {
	for _, s := range body {
		switch s := s.(type) {
		case *Let:
			an.pos = s.Pos
			if s.X.Type() == Int {
				an.lets[s] = an.value(s.X)
			} else {
				an.cond(s.X)
			}
		case *If:
			an.pos = s.Pos
			an.cond(s.Cond)
			an.block(s.Then)
			an.block(s.Else)
		case *Store:
			an.pos = s.Pos
			for _, v := range s.Values {
				an.value(v)
			}
			an.ttl(s.TTL, "store "+s.State.Name)
		case *Add:
			an.pos = s.Pos
			for _, v := range s.Values {
				if v != nil && v.Type() == Int {
					an.value(v)
				}
			}
			an.ttl(s.TTL, "add "+s.State.Name)
		case *Drop:
			an.pos = s.Pos
			an.value(s.Upto)
		case *Show:
			an.pos = s.Pos
			an.cond(s.Cond)
		case *Reply:
			an.pos = s.Pos
			for _, v := range s.Values {
				if v != nil && v.Type() == Int {
					an.value(v)
				} else {
					an.cond(v)
				}
			}
		}
	}
}

// ttl requires a TTL expression to be at least 1 ms.
func (an *analyzer) ttl(e Expr, what string) {
	ttl := an.value(e)
	if lo, _ := an.static(ttl.lo); lo.Cmp(big.NewInt(1)) < 0 {
		an.errf("the ttl of %s may be below 1 ms (it is at least %s): every write must expire, and PEXPIRE 0 deletes", what, lo)
	}
}

// cond analyzes the integer operands inside a boolean expression.
func (an *analyzer) cond(e Expr) {
	switch e := e.(type) {
	case *Binary:
		for _, x := range []Expr{e.X, e.Y} {
			if x.Type() == Int {
				an.value(x)
			} else {
				an.cond(x)
			}
		}
	case *Unary:
		an.cond(e.X)
	case *Cond:
		an.cond(e.C)
		an.cond(e.A)
		an.cond(e.B)
	case *Agg:
		an.value(e)
	}
}

// value bounds an integer expression and makes sure it stays exact.
func (an *analyzer) value(e Expr) bound {
	b := an.bound(e)
	an.safe(b, e)
	return b
}

func (an *analyzer) bound(e Expr) bound {
	switch e := e.(type) {
	case *Lit:
		return bound{e, e}
	case *ParamRef:
		return bound{e, e}
	case *InputRef:
		return bound{&Lit{V: e.In.Min}, &Lit{V: e.In.Max, Name: e.In.MaxName}}
	case *FieldRef:
		return bound{e.F.Min, e.F.Max}
	case *EntryRef:
		return bound{e.F.Min, e.F.Max}
	case *Agg:
		return an.aggregate(e)
	case *VarRef:
		return an.lets[e.L]
	case *Unary: // integer negation
		return an.opBound(e, e.Op, an.value(e.X), bound{})
	case *Cond:
		an.cond(e.C)
		a, b := an.value(e.A), an.value(e.B)
		return bound{an.min(a.lo, b.lo), an.max(a.hi, b.hi)}
	case *Call:
		return an.opBound(e, e.Fn, an.value(e.Args[0]), an.value(e.Args[1]))
	case *Binary:
		return an.opBound(e, e.Op, an.value(e.X), an.value(e.Y))
	}
	panic(fmt.Sprintf("bound of %T", e))
}

// opBound is the bound analysis's rule for the integer operator op of e,
// whose operands are bounded by x and y (y unused for -x).
func (an *analyzer) opBound(e Expr, op Op, x, y bound) bound {
	switch op {
	case OpNeg:
		return bound{an.sub(&Lit{}, x.hi), an.sub(&Lit{}, x.lo)}
	case OpMin:
		return bound{an.min(x.lo, y.lo), an.min(x.hi, y.hi)}
	case OpMax:
		return bound{an.max(x.lo, y.lo), an.max(x.hi, y.hi)}
	case OpCeilDiv:
		an.division(e, x, y)
		return bound{an.quotient(OpCeilDiv, x.lo, y.hi), an.quotient(OpCeilDiv, x.hi, y.lo)}
	case OpAdd:
		return bound{an.add(x.lo, y.lo), an.add(x.hi, y.hi)}
	case OpSub:
		return bound{an.sub(x.lo, y.hi), an.sub(x.hi, y.lo)}
	case OpMul:
		an.nonneg(x.lo, fmt.Sprintf("the left operand of %s may be negative", Format(e)))
		an.nonneg(y.lo, fmt.Sprintf("the right operand of %s may be negative", Format(e)))
		return bound{an.mul(x.lo, y.lo), an.mul(x.hi, y.hi)}
	case OpDiv:
		an.division(e, x, y)
		return bound{an.quotient(OpDiv, x.lo, y.hi), an.quotient(OpDiv, x.hi, y.lo)}
	case OpMod:
		an.division(e, x, y)
		return bound{&Lit{}, an.min(x.hi, an.sub(y.hi, &Lit{V: 1}))}
	}
	panic(fmt.Sprintf("no bound rule for %s in %s", op, Format(e)))
}

// aggregate bounds sum, last and reach. A sum adds at most MaxEntries
// values, each at least 0; reach keeps the same running sum.
func (an *analyzer) aggregate(e *Agg) bound {
	if e.Where != nil {
		an.cond(e.Where)
	}
	v := an.value(e.V)
	var total bound
	if e.Fn == Sum || e.Fn == Reach {
		an.nonneg(v.lo, fmt.Sprintf("the values %s summed by %s may be negative", Format(e.V), e.Fn))
		total = bound{&Lit{}, an.mul(e.It.State.MaxEntries, v.hi)}
		if e.It.State.Kind == ZSet {
			// A zset may hold more than today's parameters allow (they
			// may have been lowered since): bound it for every parameter.
			e.Cap = an.staticProduct(e.It.State.MaxEntries, v.hi, "the sum of "+Format(e))
			total = bound{&Lit{}, &Lit{V: e.Cap}}
		}
		an.safe(total, e)
	}
	switch e.Fn {
	case Sum:
		return total
	case Last:
		d := an.value(e.D)
		return bound{an.min(v.lo, d.lo), an.max(v.hi, d.hi)}
	}
	an.value(e.N)
	r, d := an.value(e.R), an.value(e.D)
	return bound{an.min(r.lo, d.lo), an.max(r.hi, d.hi)}
}

// paramFree reports whether e reads no parameter.
func paramFree(e Expr) bool {
	if _, ok := e.(*ParamRef); ok {
		return false
	}
	for _, x := range children(e) {
		if x != nil && !paramFree(x) {
			return false
		}
	}
	return true
}

// staticProduct is the largest value of a * b over every parameter value,
// at most 2^53-1 (else an error).
func (an *analyzer) staticProduct(a, b Expr, what string) int64 {
	_, x := an.static(a)
	_, y := an.static(b)
	p := new(big.Int).Mul(x, y)
	if p.Cmp(an.maxBig) > 0 {
		an.errf("%s may reach %s, past 2^53-1", what, p)
		return MaxSafe
	}
	return p.Int64()
}

// division checks the operands of / % ceildiv: a non-negative dividend, a
// divisor of at least 1, and dividend + divisor within 2^53-1, under which
// floor(a/b) computed in doubles is exact.
func (an *analyzer) division(e Expr, x, y bound) {
	an.nonneg(x.lo, fmt.Sprintf("the dividend of %s may be negative", Format(e)))
	if lo, _ := an.static(y.lo); lo.Cmp(big.NewInt(1)) < 0 {
		an.errf("the divisor of %s may be below 1", Format(e))
	}
	an.safe(bound{&Lit{}, an.add(x.hi, y.hi)}, &Binary{Op: OpAdd, X: dividend(e), Y: divisor(e)})
}

func dividend(e Expr) Expr {
	if c, ok := e.(*Call); ok {
		return c.Args[0]
	}
	return e.(*Binary).X
}

func divisor(e Expr) Expr {
	if c, ok := e.(*Call); ok {
		return c.Args[1]
	}
	return e.(*Binary).Y
}

func (an *analyzer) nonneg(lo Expr, msg string) {
	if l, _ := an.static(lo); l.Sign() < 0 {
		an.errf("%s (it may be as low as %s); write max(0, ...) where a branch guarantees it", msg, l)
	}
}

// safe makes sure a value with bound b stays within ±(2^53-1), statically
// or by a runtime check on the parameters.
func (an *analyzer) safe(b bound, e Expr) {
	neg := new(big.Int).Neg(an.maxBig)
	if lo, hi := an.static(b.hi); hi.Cmp(an.maxBig) > 0 {
		if lo.Cmp(an.maxBig) > 0 {
			an.errf("%s exceeds 2^53-1 for every parameter value", Format(e))
			return
		}
		an.check(&Binary{Op: OpLe, X: b.hi, Y: &Lit{V: MaxSafe, Name: maxSafeName}}, e)
	}
	if lo, hi := an.static(b.lo); lo.Cmp(neg) < 0 {
		if hi.Cmp(neg) < 0 {
			an.errf("%s is below -(2^53-1) for every parameter value", Format(e))
			return
		}
		an.check(&Binary{Op: OpGe, X: b.lo, Y: &Unary{Op: OpNeg, X: &Lit{V: MaxSafe, Name: maxSafeName}}}, e)
	}
}

func (an *analyzer) check(cond Expr, e Expr) {
	key := Format(cond)
	if an.seen[key] {
		return
	}
	an.seen[key] = true
	an.alg.Checks = append(an.alg.Checks, &Check{
		Cond: cond,
		Msg:  fmt.Sprintf("parameters too large for exact arithmetic: %s could pass 2^53-1", Format(e)),
	})
}

// inf stands for a bound beyond any value of interest.
var inf = new(big.Int).Lsh(big.NewInt(1), 200)

// static evaluates a bound expression over the declared parameter domains.
func (an *analyzer) static(e Expr) (lo, hi *big.Int) {
	lo, hi = an.static1(e)
	if k, ok := an.facts[Format(e)]; ok && hi.Cmp(k) > 0 {
		hi = new(big.Int).Set(k)
	}
	return lo, hi
}

func (an *analyzer) static1(e Expr) (lo, hi *big.Int) {
	switch e := e.(type) {
	case *Lit:
		return big.NewInt(e.V), big.NewInt(e.V)
	case *ParamRef:
		return big.NewInt(e.P.Min), big.NewInt(e.P.Max)
	case *Call:
		xl, xh := an.static(e.Args[0])
		yl, yh := an.static(e.Args[1])
		switch e.Fn {
		case OpMin:
			return bigMin(xl, yl), bigMin(xh, yh)
		case OpMax:
			return bigMax(xl, yl), bigMax(xh, yh)
		}
		if yl.Sign() <= 0 || xl.Sign() < 0 {
			return new(big.Int).Neg(inf), inf
		}
		return ceilDivBig(xl, yh), ceilDivBig(xh, yl)
	case *Binary:
		xl, xh := an.static(e.X)
		yl, yh := an.static(e.Y)
		switch e.Op {
		case OpAdd:
			return new(big.Int).Add(xl, yl), new(big.Int).Add(xh, yh)
		case OpSub:
			return new(big.Int).Sub(xl, yh), new(big.Int).Sub(xh, yl)
		case OpMul:
			if xl.Sign() < 0 || yl.Sign() < 0 {
				return new(big.Int).Neg(inf), inf
			}
			hi := new(big.Int).Mul(xh, yh)
			if q, ok := an.quotientTimesDivisor(e.X, e.Y); ok && q.Cmp(hi) < 0 {
				hi = q
			}
			if q, ok := an.quotientTimesDivisor(e.Y, e.X); ok && q.Cmp(hi) < 0 {
				hi = q
			}
			return new(big.Int).Mul(xl, yl), hi
		case OpDiv:
			if yl.Sign() <= 0 || xl.Sign() < 0 {
				return new(big.Int).Neg(inf), inf
			}
			return new(big.Int).Quo(xl, yh), new(big.Int).Quo(xh, yl)
		}
	}
	panic(fmt.Sprintf("static bound of %s", Format(e)))
}

// quotientTimesDivisor bounds q * d where q is a / d, ceildiv(a, d), or
// the min of one of them and anything: a / d * d is at most a, and
// ceildiv(a, d) * d at most a + d - 1, for 0 <= a and 1 <= d. The
// intervals alone would multiply the largest quotient by the largest
// divisor, which no pair of values reaches: min(NOW_MAX, ceildiv(x, r))
// * r is below x + r, not NOW_MAX * r.
func (an *analyzer) quotientTimesDivisor(q, d Expr) (*big.Int, bool) {
	for {
		c, ok := q.(*Call)
		if !ok || c.Fn != OpMin {
			break
		}
		if x, ok := an.quotientTimesDivisor(c.Args[0], d); ok {
			return x, true
		}
		q = c.Args[1]
	}
	var a, b Expr
	ceil := false
	switch q := q.(type) {
	case *Call:
		if q.Fn != OpCeilDiv {
			return nil, false
		}
		a, b, ceil = q.Args[0], q.Args[1], true
	case *Binary:
		if q.Op != OpDiv {
			return nil, false
		}
		a, b = q.X, q.Y
	default:
		return nil, false
	}
	al, ah := an.static(a)
	bl, bh := an.static(b)
	if Format(b) != Format(d) || al.Sign() < 0 || bl.Sign() <= 0 {
		return nil, false
	}
	if !ceil {
		return ah, true
	}
	return new(big.Int).Sub(new(big.Int).Add(ah, bh), big.NewInt(1)), true
}

func bigMin(a, b *big.Int) *big.Int {
	if a.Cmp(b) <= 0 {
		return a
	}
	return b
}

func bigMax(a, b *big.Int) *big.Int {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}

func quoBig(a, b *big.Int) *big.Int { return new(big.Int).Quo(a, b) }

func ceilDivBig(a, b *big.Int) *big.Int {
	q, m := new(big.Int).QuoRem(a, b, new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// The builders below make bound expressions, folding constants and
// dropping what the static bounds show to be redundant, so that the
// runtime checks stay short and readable.

func lit(e Expr) (int64, bool) {
	l, ok := e.(*Lit)
	if !ok {
		return 0, false
	}
	return l.V, true
}

func isLit(e Expr, v int64) bool { x, ok := lit(e); return ok && x == v }

// foldOr is a op b: folded into a literal when both are, else the
// expression.
func foldOr(op Op, a, b Expr, f func(x, y *big.Int) *big.Int) Expr {
	if r := fold(a, b, f); r != nil {
		return r
	}
	return &Binary{Op: op, X: a, Y: b}
}

// fold computes a constant operation if both sides are literals and the
// result fits int64; else nil.
func fold(a, b Expr, f func(x, y *big.Int) *big.Int) Expr {
	x, okx := lit(a)
	y, oky := lit(b)
	if !okx || !oky {
		return nil
	}
	r := f(big.NewInt(x), big.NewInt(y))
	if !r.IsInt64() {
		return nil
	}
	return &Lit{V: r.Int64()}
}

func (an *analyzer) add(a, b Expr) Expr {
	switch {
	case isLit(a, 0):
		return b
	case isLit(b, 0):
		return a
	}
	return foldOr(OpAdd, a, b, func(x, y *big.Int) *big.Int { return x.Add(x, y) })
}

func (an *analyzer) sub(a, b Expr) Expr {
	switch {
	case isLit(b, 0):
		return a
	case Format(a) == Format(b):
		return &Lit{}
	}
	if f := fold(a, b, func(x, y *big.Int) *big.Int { return x.Sub(x, y) }); f != nil {
		return f
	}
	// (x + y) - x = y
	if s, ok := a.(*Binary); ok && s.Op == OpAdd && Format(s.X) == Format(b) {
		return s.Y
	}
	// x - (x - y) = y
	if s, ok := b.(*Binary); ok && s.Op == OpSub && Format(s.X) == Format(a) {
		return s.Y
	}
	return &Binary{Op: OpSub, X: a, Y: b}
}

func (an *analyzer) mul(a, b Expr) Expr {
	switch {
	case isLit(a, 0) || isLit(b, 0):
		return &Lit{}
	case isLit(a, 1):
		return b
	case isLit(b, 1):
		return a
	}
	if f := fold(a, b, func(x, y *big.Int) *big.Int { return x.Mul(x, y) }); f != nil {
		return f
	}
	// Products are distributed over sums, differences and maxima ((x + z)
	// * y = x * y + z * y, max(x, z) * y = max(x * y, z * y): bounds are
	// never negative here) and literals move out ((k * x) * y = k * (x * y)),
	// so that a requirement on x * y still applies.
	switch s := a.(type) {
	case *Binary:
		switch _, k := lit(s.X); {
		case s.Op == OpAdd:
			return an.add(an.mul(s.X, b), an.mul(s.Y, b))
		case s.Op == OpSub:
			return an.sub(an.mul(s.X, b), an.mul(s.Y, b))
		case s.Op == OpMul && k:
			return an.mul(s.X, an.mul(s.Y, b))
		}
	case *Call:
		if s.Fn == OpMax {
			return an.max(an.mul(s.Args[0], b), an.mul(s.Args[1], b))
		}
	}
	return &Binary{Op: OpMul, X: a, Y: b}
}

// quotient is a / b (op OpDiv) or ceildiv(a, b) (OpCeilDiv), of a
// divisor of at least 1: 0 over anything is 0, anything over 1 is
// itself, and literals fold.
func (an *analyzer) quotient(op Op, a, b Expr) Expr {
	switch {
	case isLit(a, 0):
		return &Lit{}
	case isLit(b, 1):
		return a
	}
	if y, ok := lit(b); ok && y > 0 {
		if f := fold(a, b, pick(op == OpDiv, quoBig, ceilDivBig)); f != nil {
			return f
		}
	}
	if op == OpDiv {
		return &Binary{Op: OpDiv, X: a, Y: b}
	}
	return &Call{Fn: OpCeilDiv, Args: []Expr{a, b}}
}

func (an *analyzer) min(a, b Expr) Expr {
	if lo, _, ok := an.order(a, b); ok {
		return lo
	}
	return &Call{Fn: OpMin, Args: []Expr{a, b}}
}

func (an *analyzer) max(a, b Expr) Expr {
	if _, hi, ok := an.order(a, b); ok {
		return hi
	}
	return &Call{Fn: OpMax, Args: []Expr{a, b}}
}

// order returns a and b, the lower first, when one is known to be at most
// the other for every parameter value (the same expression, bounds that
// do not overlap, or one grown from the other); ok is false otherwise.
func (an *analyzer) order(a, b Expr) (lo, hi Expr, ok bool) {
	if Format(a) == Format(b) {
		return a, a, true
	}
	al, ah := an.static(a)
	bl, bh := an.static(b)
	switch {
	case ah.Cmp(bl) <= 0, an.grows(a, b):
		return a, b, true
	case bh.Cmp(al) <= 0, an.grows(b, a):
		return b, a, true
	}
	return nil, nil, false
}

// grows reports whether b is a + x or x + a with x statically >= 0, or
// a is b - x likewise, so that a <= b for every parameter value.
func (an *analyzer) grows(a, b Expr) bool {
	if s, ok := b.(*Binary); ok && s.Op == OpAdd {
		if Format(s.X) == Format(a) {
			l, _ := an.static(s.Y)
			return l.Sign() >= 0
		}
		if Format(s.Y) == Format(a) {
			l, _ := an.static(s.X)
			return l.Sign() >= 0
		}
	}
	if s, ok := a.(*Binary); ok && s.Op == OpSub && Format(s.X) == Format(b) {
		l, _ := an.static(s.Y)
		return l.Sign() >= 0
	}
	return false
}
