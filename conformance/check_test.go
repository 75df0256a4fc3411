package conformance

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
)

// recorder is a testing.TB that records what Test reports instead of
// failing the test that runs it.
type recorder struct {
	testing.TB
	errors, logs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(f, args...))
}
func (r *recorder) Logf(f string, args ...any)   { r.logs = append(r.logs, fmt.Sprintf(f, args...)) }
func (r *recorder) Fatal(args ...any)            { r.TB.Fatal(args...) }
func (r *recorder) Skipf(f string, args ...any)  { r.TB.Fatalf("skipped: "+f, args...) }
func (r *recorder) Fatalf(f string, args ...any) { r.TB.Fatalf(f, args...) }

// bare is a limiter with Limit alone: no Reset, no View.
type bare struct{ lim limitspec.Limiter }

func (b bare) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	return b.lim.Limit(ctx, req)
}

// doubled charges every request twice its cost.
type doubled struct{ *goimpl.Limiter }

func (d doubled) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	req.Cost *= 2
	return d.Limiter.Limit(ctx, req)
}

// TestTest: Test passes a limiter that decides as the vectors say, fails
// one that does not at each vector's first departing step, naming the
// vector, the target and the step, and skips (saying why)
// the vectors a limiter cannot run for want of a method.
func TestTest(t *testing.T) {
	fresh := func(wrap func(*goimpl.Limiter) limitspec.Limiter) func() (limitspec.Limiter, error) {
		return func() (limitspec.Limiter, error) {
			lim, err := goimpl.New(goimpl.Options{NoSweeper: true})
			return wrap(lim), err
		}
	}
	tests := []struct {
		name, dir   string
		wrap        func(*goimpl.Limiter) limitspec.Limiter
		errors      int    // the least number of failures
		errorHas    string // in every failure
		skippedLogs int
	}{
		{"goimpl", "../vectors/gcra", func(l *goimpl.Limiter) limitspec.Limiter { return l }, 0, "", 0},
		{"doubled", "../vectors/gcra", func(l *goimpl.Limiter) limitspec.Limiter { return doubled{l} }, 20, "[doubled]", 0},
		{"bare", "../vectors/meta_window", func(l *goimpl.Limiter) limitspec.Limiter { return bare{l} }, 0, "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			Test(rec, tt.dir, NewLimiterTarget(tt.name, fresh(tt.wrap)))
			if len(rec.errors) < tt.errors || tt.errors == 0 && len(rec.errors) > 0 {
				t.Fatalf("%d failures, want %d or more:\n%s", len(rec.errors), tt.errors, strings.Join(rec.errors, "\n"))
			}
			for _, e := range rec.errors {
				if !strings.Contains(e, tt.errorHas) || !strings.Contains(e, ": step ") {
					t.Errorf("a failure without its target or step:\n%s", e)
				}
			}
			skipped := 0
			for _, l := range rec.logs {
				if strings.Contains(l, "] skipped: ") && strings.Contains(l, "has no View method") {
					skipped++
				}
			}
			if skipped < tt.skippedLogs || tt.skippedLogs == 0 && skipped > 0 {
				t.Errorf("%d vectors skipped for want of View, want %d or more:\n%s", skipped, tt.skippedLogs, strings.Join(rec.logs, "\n"))
			}
		})
	}
}
