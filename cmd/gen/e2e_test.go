package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/limitspec/limitspec/internal/modtest"
	"github.com/limitspec/limitspec/internal/redistest"
)

// TestUsersModule is the generator as a service's team uses it, end to
// end, in a fresh module outside the repository: the spec of
// examples/quota (a daily quota whose day starts at 05:00 UTC, and a
// policy over it and the catalogue's gcra) goes through
//
//	go run github.com/limitspec/limitspec/cmd/gen -spec quota.yaml -out quota -package quota
//
// into a package that vets and builds, is the package examples/quota
// holds, and passes its vectors (worked by hand) through package
// conformance: on every embedded target, and on the limiters of a test
// of the module's own (examples/quota/conformance_test.go: a wrapper of
// goimpl's, redislimit's). A program of the module (testdata/quotademo) then decides its
// limits on a real Redis, by the scripts and by its Functions library
// loaded beside the catalogue's, and prints what testdata/quotademo/want.txt
// says, worked by hand from the spec.
func TestUsersModule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	root := filepath.Join("..", "..")
	example := filepath.Join(root, "examples", "quota")
	m := modtest.New(t, "example.com/svc", root)
	m.Copy(filepath.Join(example, "quota.yaml"), "quota.yaml")
	m.Copy(filepath.Join(example, "testdata", "vectors", "daily_quota.json"), "quota/testdata/vectors/daily_quota.json")
	m.Copy(filepath.Join(example, "conformance_test.go"), "quota/conformance_test.go")
	m.Copy(filepath.Join("testdata", "quotademo", "main.go"), "quotademo/main.go")

	m.Go("run", modtest.ModulePath+"/cmd/gen", "-spec", "quota.yaml", "-out", "quota", "-package", "quota")
	sameFiles(t, example, filepath.Join(m.Dir, "quota"))
	m.Go("vet", "./...")
	m.Go("build", "./...")
	m.TestVectors("./quota", "TestVectorsOnLimiters")

	srv := redistest.StartServer(t)
	got := m.Go("run", "./quotademo", srv.URL())
	want, err := os.ReadFile(filepath.Join("testdata", "quotademo", "want.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("quotademo on Redis (-want +got):\n%s", diff)
	}
}

// sameFiles checks that the files cmd/gen wrote under got are those the
// repository holds under want, and no more or fewer (their testdata
// aside, and want's hand-written files: those not named *_gen*.go or
// under lua/).
func sameFiles(t *testing.T, want, got string) {
	t.Helper()
	generated := func(dir string) map[string][]byte {
		out := map[string][]byte{}
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			rel = filepath.ToSlash(rel)
			if strings.HasPrefix(rel, "testdata/") || !(strings.HasPrefix(rel, "lua/") || strings.Contains(rel, "_gen")) {
				return nil
			}
			b, err := os.ReadFile(path)
			out[rel] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b := generated(want), generated(got)
	all := maps.Clone(a)
	maps.Copy(all, b)
	for _, rel := range slices.Sorted(maps.Keys(all)) {
		if !bytes.Equal(a[rel], b[rel]) {
			t.Errorf("%s differs from examples/quota's (or one lacks it): run go generate ./examples/quota", rel)
		}
	}
}
