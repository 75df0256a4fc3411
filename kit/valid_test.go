package kit

import (
	"sync"
	"testing"
)

// TestValid: a Valid remembers the first validLimits distinct limits
// added, each once, and no other, also when added concurrently.
func TestValid(t *testing.T) {
	type limit struct{ a, b int64 }
	var v Valid[limit]
	if v.Has(limit{1, 2}) {
		t.Fatal("the zero Valid remembers a limit")
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range int64(2 * validLimits) {
				v.Add(limit{i, int64(g % 2)})
			}
		})
	}
	wg.Wait()
	known := *v.known.Load()
	if len(known) != validLimits {
		t.Fatalf("remembers %d limits, want %d", len(known), validLimits)
	}
	for i, k := range known {
		if !v.Has(k) {
			t.Errorf("does not have %v, which it holds", k)
		}
		for _, o := range known[:i] {
			if o == k {
				t.Errorf("holds %v twice", k)
			}
		}
	}
	if v.Has(limit{100, 0}) {
		t.Error("has a limit never added")
	}
}
