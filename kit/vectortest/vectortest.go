// Package vectortest replays conformance vectors in a test: the test that
// cmd/gen writes into a package compiled from a user's spec calls Run, so
// that the user's vectors hold the package's algorithms to what they
// expect, on every embedded target (package goimpl's limiter, per
// request and through its bound handles, the Lua scripts in gopher-lua
// and in miniredis), as limitspec's own vectors hold its catalogue. The vector format is docs/vectors.md's.
package vectortest

import (
	"os"
	"testing"

	"github.com/limitspec/limitspec/conformance"
)

// Run replays every vector (*.json, searched recursively) under dir on
// every embedded target, and fails the test at each vector's first step
// where a target departs from the vector or from another target. It
// skips the test when dir holds no vector.
func Run(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		t.Skipf("no vectors: write some under %s (docs/vectors.md) to check this package's algorithms", dir)
	}
	vectors, err := conformance.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(vectors) == 0 {
		t.Skipf("no vectors under %s", dir)
	}
	targets, err := conformance.EmbeddedTargets()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, tg := range targets {
			tg.Close()
		}
	}()
	steps := 0
	for _, r := range conformance.Run(vectors, targets) {
		steps += r.Steps
		if !r.Passed() {
			t.Errorf("%s [%s] (%s): %s%s", r.Vector, r.Target, r.File, r.Failed, r.Skipped)
		}
	}
	t.Logf("%d vectors, %d steps on %d targets", len(vectors), steps, len(targets))
}
