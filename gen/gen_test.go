package gen

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/limitspec/limitspec/internal/modtest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// catalogue loads the repository's spec.
func catalogue(tb testing.TB) *Spec {
	tb.Helper()
	sp, err := LoadCatalogue(os.DirFS("../spec"))
	if err != nil {
		tb.Fatal(err)
	}
	return sp
}

// userFiles generates testdata/user.yaml, a user's spec over the
// catalogue, as the package small.
func userFiles(tb testing.TB) map[string][]byte {
	tb.Helper()
	src, err := os.ReadFile("testdata/user.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	sp, err := LoadUser(catalogue(tb), "small", "testdata/user.yaml", src)
	if err != nil {
		tb.Fatal(err)
	}
	files, err := Generate(sp, PackageOutput("small"))
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

// TestGolden generates a user's package from testdata/user.yaml and
// compares every file with testdata/golden; run with -update after an
// intended change.
func TestGolden(t *testing.T) {
	files := userFiles(t)
	var names []string
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	have, _ := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	for _, g := range have {
		if _, ok := files[strings.ReplaceAll(filepath.Base(g), "__", "/")]; !ok {
			if *update {
				os.Remove(g)
			} else {
				t.Errorf("%s: a golden file Generate no longer writes (run go test ./gen -update)", g)
			}
		}
	}
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
		var err error
		if outs[i], err = Generate(catalogue(t), CatalogueOutput()); err != nil {
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
	files, err := Generate(catalogue(t), CatalogueOutput())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		have, err := os.ReadFile(filepath.Join("..", name))
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
// margin and expects both the Lua and the Go of the algorithm (or the Go
// constants it reads) to change.
func TestSpecEditReachesBothTargets(t *testing.T) {
	src, err := os.ReadFile("../spec/algorithms.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base := generateFrom(t, string(src))
	edits := []struct {
		name, old, new, want string
		files                []string
	}{
		{"window domain", "{name: window_ms, min: 1, max: 100000000000,", "{name: window_ms, min: 1, max: 99999999999,", "99999999999",
			[]string{"lua/fixed_window.lua", "limits_gen.go"}},
		{"ttl margin", "TTL_MARGIN_MS: 60000", "TTL_MARGIN_MS: 61234", "61234",
			[]string{"lua/fixed_window.lua", "goimpl/constants_gen.go"}}, // which goimpl/fixed_window_gen.go reads
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			if !strings.Contains(string(src), e.old) {
				t.Fatalf("spec no longer contains %q", e.old)
			}
			edited := generateFrom(t, strings.Replace(string(src), e.old, e.new, 1))
			for _, f := range e.files {
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
	files, err := Generate(sp, CatalogueOutput())
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestGoldenGoCompiles vets and tests the golden package (a user's spec)
// in a module of its own that requires this one, as a user's module does.
func TestGoldenGoCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	m := modtest.New(t, "example.com/small", "..")
	for name, b := range userFiles(t) {
		m.Write(name, b)
	}
	// A vector worked by hand from user.yaml, with a string input other
	// than meta and a view: the generated test replays it.
	m.Copy(filepath.Join("testdata", "user_vectors", "trail.json"), "testdata/vectors/trail.json")
	m.Go("vet", ".")
	m.TestVectors(".")
}
