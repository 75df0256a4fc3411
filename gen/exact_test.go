package gen

import (
	"math"
	"math/rand"
	"testing"
)

// TestDoubleDivisionExact backs the rule the analysis enforces for every
// division: with 0 <= a, 1 <= b and a + b <= 2^53-1, floor(a / b) computed
// in IEEE doubles (as Lua does) equals the integer quotient, and so does
// the ceiling floor((a + b - 1) / b); and so do the forms the Lua emitter
// writes, which call no math function: (a - a % b) / b and
// (a + (0 - a) % b) / b, with Lua 5.1's a % b, a - floor(a / b) * b in
// doubles (luaMod). Go's float64 is the same IEEE double.
func TestDoubleDivisionExact(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	check := func(a, b int64) {
		if a < 0 || b < 1 || a+b > MaxSafe {
			return
		}
		if got := int64(math.Floor(float64(a) / float64(b))); got != a/b {
			t.Fatalf("floor(%d / %d) = %d in doubles, want %d", a, b, got, a/b)
		}
		if got, want := int64(math.Floor(float64(a+b-1)/float64(b))), (a+b-1)/b; got != want {
			t.Fatalf("ceil(%d / %d) = %d in doubles, want %d", a, b, got, want)
		}
		x, y := float64(a), float64(b)
		if got := (x - luaMod(x, y)) / y; got != float64(a/b) || got != math.Trunc(got) {
			t.Fatalf("(a - a %% b) / b for a = %d, b = %d is %v in doubles, want %d", a, b, got, a/b)
		}
		if got, want := (x+luaMod(0-x, y))/y, (a+b-1)/b; got != float64(want) || got != math.Trunc(got) {
			t.Fatalf("(a + (0 - a) %% b) / b for a = %d, b = %d is %v in doubles, want %d", a, b, got, want)
		}
	}
	for i := 0; i < 2000000; i++ {
		b := rng.Int63n(MaxSafe/2) + 1
		switch i % 4 {
		case 0: // anything
			check(rng.Int63n(MaxSafe-b+1), b)
		case 1: // a quotient just below an integer: a = k*b - r
			k := rng.Int63n(MaxSafe/b+1) + 1
			r := rng.Int63n(3) + 1
			check(k*b-r, b)
		case 2: // small divisors, large dividends
			b = rng.Int63n(1000) + 1
			check(MaxSafe-b-rng.Int63n(1000), b)
		case 3: // a + b at the bound
			check(MaxSafe-b, b)
		}
	}
}

// luaMod is Lua 5.1's a % b on numbers: a - floor(a / b) * b, in doubles.
func luaMod(a, b float64) float64 { return a - math.Floor(a/b)*b }
