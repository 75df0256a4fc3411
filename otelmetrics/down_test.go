package otelmetrics

import (
	"testing"

	"github.com/limitspec/limitspec/fallback"
)

// TestDownCount: down is PrimaryErrors less PrimarySlow, never negative
// and never less than before, when Stats has read a slow failure that
// its PrimaryErrors missed.
func TestDownCount(t *testing.T) {
	var o observer
	for _, tt := range []struct {
		errs, slow uint64
		want       int64
	}{
		{0, 0, 0},
		{5, 2, 3},
		{5, 3, 3}, // a slow failure counted after PrimaryErrors was read
		{6, 3, 3},
		{6, 7, 3}, // the same, one failure on
		{9, 4, 5},
	} {
		if got := o.downCount(fallback.Stats{PrimaryErrors: tt.errs, PrimarySlow: tt.slow}); got != tt.want {
			t.Errorf("PrimaryErrors %d, PrimarySlow %d: down %d, want %d", tt.errs, tt.slow, got, tt.want)
		}
	}
}
