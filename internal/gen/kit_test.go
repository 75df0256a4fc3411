package gen

import (
	"os"
	"testing"

	"github.com/limitspec/limitspec/kit"
)

// TestKitConsts checks that the constants the generated Go reads from
// package kit (goKitConsts) hold the catalogue's values.
func TestKitConsts(t *testing.T) {
	sp, err := LoadCatalogue(os.DirFS("../../spec"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"NOW_MAX": kit.NowMax, "COST_MAX": kit.CostMax}
	for name := range goKitConsts {
		found := false
		for _, c := range sp.Consts {
			if c.Name == name {
				found = true
				if c.Value != want[name] {
					t.Errorf("%s is %d in the spec, %d in package kit", name, c.Value, want[name])
				}
			}
		}
		if !found {
			t.Errorf("the catalogue has no constant %s", name)
		}
	}
}
