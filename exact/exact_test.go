package exact

import (
	"math"
	"testing"
	"time"
)

// TestSaturating pins each operation at and past the bounds of int64.
func TestSaturating(t *testing.T) {
	tests := []struct {
		name      string
		got, want int64
	}{
		{"Add", Add(2, 3), 5},
		{"Add past the top", Add(math.MaxInt64, 1), math.MaxInt64},
		{"Add past the bottom", Add(math.MinInt64, -1), math.MinInt64},
		{"Sub", Sub(2, 3), -1},
		{"Sub of the bottom", Sub(0, math.MinInt64), math.MaxInt64},
		{"Sub past the bottom", Sub(math.MinInt64, 1), math.MinInt64},
		{"Mul", Mul(-4, 5), -20},
		{"Mul past the top", Mul(1<<32, 1<<32), math.MaxInt64},
		{"Mul past the bottom", Mul(-(1 << 32), 1<<32), math.MinInt64},
		{"Mul of -1 and the bottom", Mul(-1, math.MinInt64), math.MaxInt64},
		{"Div", Div(7, 2), 3},
		{"CeilDiv", CeilDiv(7, 2), 4},
		{"CeilDiv exact", CeilDiv(8, 2), 4},
		{"CeilDiv of 0", CeilDiv(0, 5), 0},
		{"CeilDiv of a negative", CeilDiv(-7, 2), -3},
		{"CeilDiv by a negative", CeilDiv(-7, -2), 4},
		{"Pick true", Pick(true, int64(1), 2), 1},
		{"Pick false", Pick(false, int64(1), 2), 2},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

// TestChecks pins the refusals' words, and "" for a value accepted.
func TestChecks(t *testing.T) {
	if got := Outside(5, 1, 10, "limit must be in [1, 10], got "); got != "" {
		t.Errorf("Outside of a value within: %q", got)
	}
	if got, want := Outside(11, 1, 10, "limit must be in [1, 10], got "), "limit must be in [1, 10], got 11"; got != want {
		t.Errorf("Outside: %q, want %q", got, want)
	}
	if ms, got := Millis(1500*time.Millisecond, "x: "); ms != 1500 || got != "" {
		t.Errorf("Millis of 1.5s: %d, %q", ms, got)
	}
	if _, got := Millis(1500*time.Microsecond, "window_ms must be whole, got "); got != "window_ms must be whole, got 1.5ms (not a whole number of ms)" {
		t.Errorf("Millis of 1.5ms: %q", got)
	}
	if got := Unknown("gcra", map[string]int64{"burst": 1}, "burst", "rate"); got != "" {
		t.Errorf("Unknown of known names: %q", got)
	}
	if got, want := Unknown("gcra", map[string]int64{"brust": 1}, "burst", "rate"), `gcra: unknown parameter "brust" (parameters: [burst rate])`; got != want {
		t.Errorf("Unknown: %q, want %q", got, want)
	}
}
