// Package modtest builds, in tests, a Go module of a user's outside the
// repository: a temporary directory whose go.mod requires limitspec,
// replaced by the repository's own tree, as a user's module would
// require a release of it.
package modtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ModulePath is limitspec's module path.
const ModulePath = "github.com/limitspec/limitspec"

// Module is a temporary module.
type Module struct {
	t   *testing.T
	Dir string
	// Env is added to the go command's environment (after
	// GOFLAGS=-mod=mod), such as GOPROXY=off for a test that must find
	// every module in the module cache.
	Env []string
}

// New makes the module named path in a temporary directory, requiring
// limitspec from the repository at root (its go.sum copied along).
func New(t *testing.T, path, root string) *Module {
	t.Helper()
	root, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	m := &Module{t: t, Dir: t.TempDir()}
	m.Write("go.mod", []byte("module "+path+"\n\ngo 1.26\n\nrequire "+ModulePath+" v0.0.0\n\nreplace "+ModulePath+" => "+root+"\n"))
	m.Write("go.sum", sum)
	return m
}

// Write writes a file of the module, at a slash-separated path.
func (m *Module) Write(name string, b []byte) {
	m.t.Helper()
	path := filepath.Join(m.Dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		m.t.Fatal(err)
	}
}

// Copy writes the file at from (a path of the test's) into the module
// at name.
func (m *Module) Copy(from, name string) {
	m.t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		m.t.Fatal(err)
	}
	m.Write(name, b)
}

// Go runs the go command in the module and returns its standard
// output; it fails the test, with everything the command printed, if
// the command fails.
func (m *Module) Go(args ...string) string {
	m.t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = m.Dir
	cmd.Env = append(append(os.Environ(), "GOFLAGS=-mod=mod"), m.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		m.t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// TestVectors runs the vectors test of the package at pkg ("./quota"),
// and the tests named after it, and fails unless each ran and passed.
func (m *Module) TestVectors(pkg string, tests ...string) {
	m.t.Helper()
	tests = append([]string{"TestVectors"}, tests...)
	out := m.Go("test", "-count=1", "-v", "-run", "^("+strings.Join(tests, "|")+")$", pkg)
	for _, name := range tests {
		if !strings.Contains(out, "--- PASS: "+name+" ") {
			m.t.Fatalf("%s of %s did not run:\n%s", name, pkg, out)
		}
	}
}
