package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/limitspec/limitspec"
)

// Test replays every vector (*.json, searched recursively) under dir on
// targets, and fails t at each vector's first step where a target departs
// from the vector or from another target, with the diff. With no target
// it runs the embedded ones (EmbeddedTargets): package goimpl's limiter,
// per call and through its bound handles, and the Lua scripts in
// gopher-lua and in miniredis. Test closes every target when it returns.
//
// A package cmd/gen compiled from a user's spec holds a test that calls
// Test on its testdata/vectors; a test of a user's own limiter, a wrapper
// or another implementation hands it a target of its own:
//
//	conformance.Test(t, "testdata/vectors", conformance.NewLimiterTarget("mine", newLimiter))
//
// A target may skip a vector it cannot run (ErrNotApplicable; Test logs
// why), but a target that runs none of them fails t. Test skips t when dir
// holds no vector.
func Test(t testing.TB, dir string, targets ...Target) {
	t.Helper()
	defer func() { closeAll(t, targets) }() // the embedded ones too, when Test opens them
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		t.Skipf("no vectors: write some under %s (docs/vectors.md) to check these algorithms", dir)
	}
	vectors, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(vectors) == 0 {
		t.Skipf("no vectors under %s (docs/vectors.md)", dir)
	}
	if len(targets) == 0 {
		if targets, err = EmbeddedTargets(); err != nil {
			t.Fatal(err)
		}
	}
	steps, ran := 0, map[string]int{}
	for _, r := range Run(vectors, targets) {
		steps += r.Steps
		if r.Skipped != "" {
			t.Logf("%s [%s] skipped: %s", r.Vector, r.Target, r.Skipped)
			continue
		}
		ran[r.Target]++
		if r.Failed != "" {
			t.Errorf("%s [%s] (%s): %s", r.Vector, r.Target, r.File, r.Failed)
		}
	}
	for _, tg := range targets {
		if ran[tg.Name()] == 0 {
			t.Errorf("%s ran none of the %d vectors under %s", tg.Name(), len(vectors), dir)
		}
	}
	t.Logf("%d vectors, %d steps on %d targets", len(vectors), steps, len(targets))
}

func closeAll(t testing.TB, targets []Target) {
	for _, tg := range targets {
		if err := tg.Close(); err != nil {
			t.Errorf("closing %s: %v", tg.Name(), err)
		}
	}
}

// NewLimiterTarget is a target of any limitspec.Limiter: a user's
// generated limits on package goimpl's or redislimit's limiter, a wrapper
// of one, or another implementation of the contract. fresh makes the
// limiter of one vector, with no state (on Redis: an empty database, or
// a key prefix of its own); the target closes it after the vector when it
// is an io.Closer. Each step decides as a service calls the limiter, the
// step's time as Request.Now. A vector that resets needs a
// limitspec.Resetter, one that runs a view a limiter with the View method
// of goimpl's and redislimit's, one of a holding policy a
// limitspec.Holder; without them the target skips it
// (ErrNotApplicable). A step the limiter refuses with an error that is
// not limitspec.ErrBadInput, or limitspec.ErrBadState wrapping a Redis
// error, is a failure.
func NewLimiterTarget(name string, fresh func() (limitspec.Limiter, error)) Target {
	return &anyLimiterTarget{name: name, fresh: fresh}
}

type anyLimiterTarget struct {
	limiterTarget
	name  string
	fresh func() (limitspec.Limiter, error)
	open  limitspec.Limiter
}

func (t *anyLimiterTarget) Name() string { return t.name }

func (t *anyLimiterTarget) Begin(v *Vector) error {
	if err := t.Close(); err != nil {
		return err
	}
	lim, err := t.fresh()
	if err != nil {
		return fmt.Errorf("%s: %w", t.name, err)
	}
	t.open = lim
	_, resets := lim.(limitspec.Resetter)
	_, views := lim.(viewer)
	if _, holds := lim.(limitspec.Holder); v.Policy != nil && v.Policy.Holds && !holds {
		return fmt.Errorf("%w: %T is no limitspec.Holder, and the vector's policy holds", ErrNotApplicable, lim)
	}
	for _, s := range v.Steps {
		switch {
		case s.Reset && !resets:
			return fmt.Errorf("%w: %T is no limitspec.Resetter, and the vector resets", ErrNotApplicable, lim)
		case s.View != "" && !views:
			return fmt.Errorf("%w: %T has no View method, and the vector runs view %q", ErrNotApplicable, lim, s.View)
		}
	}
	t.lim = anyLimiter{lim}
	return nil
}

// Close closes the limiter of the last vector when it is an io.Closer.
func (t *anyLimiterTarget) Close() error {
	lim := t.open
	t.open, t.lim = nil, nil
	if c, ok := lim.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// viewer is a limiter that runs the views of its algorithms, as goimpl's
// and redislimit's do.
type viewer interface {
	View(ctx context.Context, view string, req limitspec.Request) ([][]any, error)
}

// anyLimiter is a viewLimiter and a limitspec.Holder of any limiter:
// Begin has skipped the vectors that reset, view or hold on one that
// cannot.
type anyLimiter struct{ limitspec.Limiter }

func (a anyLimiter) Hold(ctx context.Context, req limitspec.Request, h limitspec.Hold) (limitspec.Result, error) {
	return a.Limiter.(limitspec.Holder).Hold(ctx, req, h)
}

func (a anyLimiter) Reset(ctx context.Context, req limitspec.Request) error {
	return a.Limiter.(limitspec.Resetter).Reset(ctx, req)
}

func (a anyLimiter) View(ctx context.Context, view string, req limitspec.Request) ([][]any, error) {
	return a.Limiter.(viewer).View(ctx, view, req)
}
