package conformance

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/limitspec/limitspec/kit"
)

// TestManifestRegistrations: what RegisterScripts reads of the
// catalogue's lua/manifest.json is, script for script, what package lua
// registers from the files cmd/gen writes beside it, so that cmd/verify
// -spec runs a spec compiled at run time as the catalogue's run.
func TestManifestRegistrations(t *testing.T) {
	fsys := os.DirFS("../lua")
	raw, err := os.ReadFile("../lua/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	lib, scripts, err := m.registrations(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := kit.LookupLibrary(lib.Name)
	if diff := cmp.Diff(want, lib); diff != "" {
		t.Errorf("library (-registered +manifest):\n%s", diff)
	}
	if len(scripts) != len(want.Algorithms) {
		t.Errorf("%d algorithms in the manifest; the library decides %d", len(scripts), len(want.Algorithms))
	}
	for _, s := range scripts {
		reg, ok := kit.LookupScripts(s.ID)
		if !ok {
			t.Errorf("%v: in the manifest, not registered", s.ID)
			continue
		}
		if diff := cmp.Diff(reg, s, cmpopts.IgnoreFields(kit.Scripts{}, "Args")); diff != "" {
			t.Errorf("%v (-registered +manifest):\n%s", s.ID, diff)
		}
	}
}
