package gen

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestGolden generates from testdata/small.yaml and compares every file
// with testdata/golden; run with -update after an intended change.
func TestGolden(t *testing.T) {
	sp, err := LoadFile("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(sp)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		golden := filepath.Join("testdata", "golden", strings.ReplaceAll(name, "/", "__"))
		if *update {
			if err := os.WriteFile(golden, files[name], 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%s: %v (run go test ./gen -update)", name, err)
		}
		if diff := cmp.Diff(string(want), string(files[name])); diff != "" {
			t.Errorf("%s differs from %s (-golden +generated):\n%s", name, golden, diff)
		}
	}
}

// TestDeterministic generates twice and expects the same bytes.
func TestDeterministic(t *testing.T) {
	var outs [2]map[string][]byte
	for i := range outs {
		sp, err := LoadDir("../../spec")
		if err != nil {
			t.Fatal(err)
		}
		if outs[i], err = Generate(sp); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(outs[0], outs[1]); diff != "" {
		t.Errorf("two runs differ:\n%s", diff)
	}
}

// TestCheckedInUpToDate regenerates the repository's spec in memory and
// fails on any difference from the checked-in files.
func TestCheckedInUpToDate(t *testing.T) {
	sp, err := LoadDir("../../spec")
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(sp)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		have, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Errorf("%s: %v: stale generated files, run go generate ./...", name, err)
			continue
		}
		if string(have) != string(want) {
			t.Errorf("%s: stale generated file, run go generate ./...", name)
		}
	}
}

// TestSpecEditReachesBothTargets edits a parameter's domain and the TTL
// margin and expects both the Lua and the Go of the algorithm to change.
func TestSpecEditReachesBothTargets(t *testing.T) {
	src, err := os.ReadFile("../../spec/algorithms.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base := generateFrom(t, string(src))
	edits := []struct {
		name, old, new, want string
	}{
		{"window domain", "{name: window_ms, min: 1, max: 100000000000,", "{name: window_ms, min: 1, max: 99999999999,", "99999999999"},
		{"ttl margin", "TTL_MARGIN_MS: 60000", "TTL_MARGIN_MS: 61234", "61234"},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			if !strings.Contains(string(src), e.old) {
				t.Fatalf("spec no longer contains %q", e.old)
			}
			edited := generateFrom(t, strings.Replace(string(src), e.old, e.new, 1))
			for _, f := range []string{"lua/fixed_window.lua", "goimpl/fixed_window_gen.go"} {
				if string(edited[f]) == string(base[f]) {
					t.Errorf("%s did not change", f)
				}
				if !strings.Contains(string(edited[f]), e.want) {
					t.Errorf("%s does not contain %s", f, e.want)
				}
			}
		})
	}
}

func generateFrom(t *testing.T, src string) map[string][]byte {
	t.Helper()
	sp, err := Load("spec.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(sp)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestGoldenGoCompiles builds the golden Go files together with the
// hand-written runtime of package goimpl, in a module of their own.
func TestGoldenGoCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	dir := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", []byte("module golden\n\ngo 1.26\n"))
	for _, f := range []string{"api.go", "store.go", "sweeper.go", "exact.go", "entries.go"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "goimpl", f))
		if err != nil {
			t.Fatal(err)
		}
		write(f, b)
	}
	golden, _ := filepath.Glob("testdata/golden/goimpl__*.go")
	for _, g := range golden {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		write(strings.TrimPrefix(filepath.Base(g), "goimpl__"), b)
	}
	cmd := exec.Command("go", "vet", ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("golden Go does not build: %v\n%s", err, out)
	}
}
