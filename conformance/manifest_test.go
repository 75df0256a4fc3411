package conformance

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/redis/go-redis/v9"

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

// TestManifestRequestKey: the request key lua/manifest.json describes is
// the one gcra.lua takes, on miniredis: an id of max_id_bytes is taken
// and one byte more refused; a retry within replay_ms gets the first
// reply again, uncharged, and one a ms later is a new request.
func TestManifestRequestKey(t *testing.T) {
	raw, err := os.ReadFile("../lua/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		RequestKey struct {
			Template   string `json:"template"`
			MaxIDBytes int    `json:"max_id_bytes"`
			ReplayMs   int64  `json:"replay_ms"`
		} `json:"request_key"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../lua/gcra.lua")
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	defer rdb.Close()
	const t0 = 1_700_000_000_000
	call := func(id string, now int64) ([]any, error) { // burst 3, one per s
		rq := strings.NewReplacer("<key>", "k", "<id>", id).Replace(m.RequestKey.Template)
		r, err := rdb.Eval(t.Context(), string(src), []string{"{k}:gc:1:1000", rq}, now, 1, 0, 3, 1, 1000).Slice()
		return r, err
	}
	if _, err := call(strings.Repeat("x", m.RequestKey.MaxIDBytes+1), t0); err == nil || !strings.HasPrefix(err.Error(), "BADINPUT") {
		t.Errorf("an id of %d bytes: %v; want BADINPUT", m.RequestKey.MaxIDBytes+1, err)
	}
	id := strings.Repeat("x", m.RequestKey.MaxIDBytes)
	steps := []struct {
		id        string
		now       int64
		remaining int64
	}{
		{id, t0, 2},                              // charged
		{id, t0 + m.RequestKey.ReplayMs, 2},      // replayed: the same reply, nothing charged
		{"other", t0 + m.RequestKey.ReplayMs, 2}, // a minute on, the burst is whole: 3, less this request
		{id, t0 + m.RequestKey.ReplayMs + 1, 1},  // too late to replay: a new request
	}
	for i, s := range steps {
		r, err := call(s.id, s.now)
		if err != nil || r[0] != int64(1) || r[2] != s.remaining {
			t.Errorf("step %d: %v, %v; want admitted with %d remaining", i, r, err, s.remaining)
		}
	}
}
