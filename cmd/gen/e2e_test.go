package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
// holds, and passes its vectors (worked by hand) on every embedded
// target. A program of the module (testdata/quotademo) then decides its
// limits on a real Redis, by the scripts and by its Functions library
// loaded beside the catalogue's, and prints what testdata/quotademo/want.txt
// says, worked by hand from the spec.
func TestUsersModule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "go.mod"), []byte("module example.com/svc\n\ngo 1.26\n\nrequire "+modulePath+" v0.0.0\n\nreplace "+modulePath+" => "+root+"\n"))
	writeFile(t, filepath.Join(dir, "go.sum"), sum)
	copyFile(t, filepath.Join(root, "examples", "quota", "quota.yaml"), filepath.Join(dir, "quota.yaml"))
	copyFile(t, filepath.Join(root, "examples", "quota", "testdata", "vectors", "daily_quota.json"), filepath.Join(dir, "quota", "testdata", "vectors", "daily_quota.json"))
	copyFile(t, filepath.Join("testdata", "quotademo", "main.go"), filepath.Join(dir, "quotademo", "main.go"))

	goTool(t, dir, "run", modulePath+"/cmd/gen", "-spec", "quota.yaml", "-out", "quota", "-package", "quota")
	sameFiles(t, filepath.Join(root, "examples", "quota"), filepath.Join(dir, "quota"))
	goTool(t, dir, "vet", "./...")
	goTool(t, dir, "build", "./...")
	if out := goTool(t, dir, "test", "-count=1", "-v", "-run", "TestVectors", "./quota"); !strings.Contains(out, "--- PASS: TestVectors") {
		t.Fatalf("the package's vectors did not run:\n%s", out)
	}

	srv := redistest.StartServer(t)
	got := goTool(t, dir, "run", "./quotademo", srv.URL())
	want, err := os.ReadFile(filepath.Join("testdata", "quotademo", "want.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("quotademo on Redis (-want +got):\n%s", diff)
	}
}

// modulePath is limitspec's module path.
const modulePath = "github.com/limitspec/limitspec"

// goTool runs the go command in dir and returns its standard output; it
// fails the test with everything the command printed if it fails.
func goTool(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// sameFiles checks that every file cmd/gen wrote under got is the one
// the repository holds under want.
func sameFiles(t *testing.T, want, got string) {
	t.Helper()
	err := filepath.WalkDir(got, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(path, "testdata") {
			return err
		}
		rel, _ := filepath.Rel(got, path)
		a, errA := os.ReadFile(filepath.Join(want, rel))
		b, errB := os.ReadFile(path)
		switch {
		case errA != nil || errB != nil:
			t.Errorf("%s: %v %v", rel, errA, errB)
		case !bytes.Equal(a, b):
			t.Errorf("%s differs from examples/quota's: run go generate ./examples/quota", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, b)
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
