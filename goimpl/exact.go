package goimpl

import "math"

// Helpers of the generated code.

// field returns a stored field clamped into [lo, hi], or dflt when the key
// is not live.
func field(live bool, v, dflt, lo, hi int64) int64 {
	if !live {
		return dflt
	}
	return min(max(v, lo), hi)
}

// pick is the conditional value: a if c, else b.
func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// ceilDiv is ceil(a / b) for a >= 0, b >= 1, a + b within int64.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// The saturating operations evaluate conditions on parameters, whose
// intermediate values may pass int64; saturation keeps every comparison
// against a bound inside int64 exact.

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

// checkParam refuses a parameter outside [lo, hi]; the message is
// refused followed by the value.
func checkParam(v, lo, hi int64, refused string) error {
	if v < lo || v > hi {
		return badInput("%s%d", refused, v)
	}
	return nil
}

// param reads one parameter from m and checks its domain.
func param(m map[string]int64, name string, lo, hi int64, missing, refused string) (int64, error) {
	v, ok := m[name]
	if !ok {
		return 0, badInput("%s", missing)
	}
	return v, checkParam(v, lo, hi, refused)
}

// knownParams refuses a parameter name the algorithm does not take.
func knownParams(alg string, m map[string]int64, names ...string) error {
	for k := range m {
		found := false
		for _, n := range names {
			found = found || n == k
		}
		if !found {
			return badInput("%s: unknown parameter %q (parameters: %v)", alg, k, names)
		}
	}
	return nil
}
