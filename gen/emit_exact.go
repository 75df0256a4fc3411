package gen

import "strings"

// emitExact returns the helpers the typed limits check their parameters
// with: saturating arithmetic, which keeps every comparison of a
// condition on parameters exact whatever the values (they may pass
// int64), and the refusals, in the scripts' words.
func emitExact(sp *Spec, o *Output) ([]byte, error) {
	var w writer
	goFileHeader(&w, sp.Source, o.limits.name)
	q := o.qualifier(o.limits, o.contract)
	w.line("import (")
	for _, imp := range []string{"fmt", "math", "time"} {
		w.line("%q", imp)
	}
	if q != "" {
		w.line("")
		w.line("%q", o.contract.path)
	}
	w.line(")")
	w.raw(strings.ReplaceAll(exactHelpers, "INPUTERROR", q+"InputError"))
	return formatGo(w, "the exact helpers")
}

const exactHelpers = `
func satAdd(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

func satSub(a, b int64) int64 {
	if b == math.MinInt64 {
		return satAdd(satAdd(a, math.MaxInt64), 1)
	}
	return satAdd(a, -b)
}

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	p := a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		if (a > 0) == (b > 0) {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return p
}

func satDiv(a, b int64) int64 { return a / b }

func satCeilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a > 0) == (b > 0) {
		q++
	}
	return q
}

// pick is the conditional value: a if c, else b.
func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

func badInput(format string, args ...any) error {
	return &INPUTERROR{Msg: fmt.Sprintf(format, args...)}
}

// checkParam refuses a parameter outside [lo, hi]; the message is
// refused followed by the value.
func checkParam(v, lo, hi int64, refused string) error {
	if v < lo || v > hi {
		return badInput("%s%d", refused, v)
	}
	return nil
}

// millis is d in whole ms; refused (followed by d) is the refusal of a
// parameter out of its domain, said of one that is no whole number of ms.
func millis(d time.Duration, refused string) (int64, error) {
	if d%time.Millisecond != 0 {
		return 0, badInput("%s%v (not a whole number of ms)", refused, d)
	}
	return int64(d / time.Millisecond), nil
}
`
