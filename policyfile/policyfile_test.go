package policyfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/policyfile"
)

func TestNewLimit(t *testing.T) {
	got, err := policyfile.NewLimit("gcra", map[string]int64{"burst": 3, "rate": 7, "period_ms": 1000})
	if err != nil {
		t.Fatal(err)
	}
	if want := (limitspec.GCRA{Burst: 3, Rate: 7, Period: time.Second}); got != want {
		t.Errorf("NewLimit = %#v, want %#v", got, want)
	}
	for _, tt := range []struct {
		alg    string
		params map[string]int64
		want   string
	}{
		{"gcra", map[string]int64{"burst": 3, "rate": 7}, "gcra: missing parameter period_ms"},
		{"gcra", map[string]int64{"burst": 3, "rate": 7, "period_ms": 1000, "limit": 1}, `gcra: unknown parameter "limit"`},
		{"gcra", map[string]int64{"burst": 0, "rate": 7, "period_ms": 1000}, "gcra: parameter burst must be an integer in"},
		{"fixed_window", map[string]int64{"limit": 1, "window_ms": 1 << 62}, "fixed_window: parameter window_ms must be an integer in"},
		{"no_such", nil, `unknown algorithm "no_such" (known: [`},
		{"lib.no_such", nil, `unknown algorithm "lib.no_such"`},
	} {
		_, err := policyfile.NewLimit(tt.alg, tt.params)
		if !errors.Is(err, limitspec.ErrBadInput) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewLimit(%q, %v): %v; want ErrBadInput saying %q", tt.alg, tt.params, err, tt.want)
		}
	}
}

// TestAlgorithms: NewLimit knows every algorithm of the catalogue, and
// each builds its own typed limit.
func TestAlgorithms(t *testing.T) {
	var got []string
	for _, a := range policyfile.Algorithms() {
		got = append(got, a.String())
	}
	want := []string{"bucket_window", "concurrency", "fixed_window", "gcra", "leaky_bucket", "meta_window", "sliding_log", "sliding_window", "token_bucket"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Algorithms (-want +got):\n%s", diff)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tt := range []struct{ name, yaml, want string }{
		{"an unknown field", "name: api\nlimits: []\nowner: me\n", "field owner not found"},
		{"an unknown algorithm", "name: api\nlimits:\n  - {name: a, algorithm: nope, identity: user, params: {}}\n", `api.a: unknown algorithm "nope"`},
		{"an unknown parameter", "name: api\nlimits:\n  - {name: a, algorithm: fixed_window, identity: user, params: {limit: 1, window_ms: 10, burst: 2}}\n", `api.a: fixed_window: unknown parameter "burst"`},
		{"no identity nor constant", "name: api\nlimits:\n  - {name: a, algorithm: fixed_window, params: {limit: 1, window_ms: 10}}\n", "api.a: give an Identity"},
		{"no limits", "name: api\n", "api: a policy needs at least one limit"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policyfile.Parse([]byte(tt.yaml))
			if !errors.Is(err, limitspec.ErrBadInput) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse: %v; want ErrBadInput saying %q", err, tt.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "api.json")
	json := `{"name": "api", "limits": [{"name": "global", "algorithm": "fixed_window", "constant": "all", "params": {"limit": 100, "window_ms": 1000}}]}`
	if err := os.WriteFile(good, []byte(json), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := policyfile.Load(good)
	if err != nil {
		t.Fatal(err)
	}
	want := []limitspec.PolicyLimit{{Name: "global", Limit: limitspec.FixedWindow{Limit: 100, Window: time.Second}, Constant: "all"}}
	if diff := cmp.Diff(want, p.Limits()); p.Name() != "api" || diff != "" {
		t.Errorf("Load: policy %s, limits (-want +got):\n%s", p.Name(), diff)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: api\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := policyfile.Load(bad); !errors.Is(err, limitspec.ErrBadInput) || !strings.HasPrefix(err.Error(), bad+": ") {
		t.Errorf("Load of a bad policy: %v; want ErrBadInput after the file's name", err)
	}
	if _, err := policyfile.Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of no file: %v; want os.ErrNotExist", err)
	}
}
