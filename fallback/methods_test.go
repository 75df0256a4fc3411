package fallback

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
)

// TestAllow: Allow decides a cost of 1, on the primary while it answers
// and on the local limiter while it does not, as Limit does.
func TestAllow(t *testing.T) {
	ctx := context.Background()
	f := newFake(succeed)
	l := mustNew(t, f, local(t), Options{}, newClock())
	res, err := l.Allow(ctx, "k", fixedWindow(2))
	if err != nil || !res.Allowed || res.Side != limitspec.Primary || f.calls.Load() != 1 {
		t.Fatalf("Allow on a primary that answers: %+v, %v, %d calls", res, err, f.calls.Load())
	}
	f.set(fail)
	// the local limiter goes on from the primary's last report: 1 of 2
	// spent, 1 left
	for i, want := range []bool{true, false} {
		res, err := l.Allow(ctx, "k", fixedWindow(2))
		if err != nil || res.Allowed != want || res.Side != limitspec.Fallback {
			t.Fatalf("Allow %d with the primary down: %+v, %v; want allowed %v by the local limiter", i, res, err, want)
		}
	}
}

// TestView: View reads the primary's state, never the local limiter's,
// and says so when the primary has no views or does not answer.
func TestView(t *testing.T) {
	ctx := context.Background()
	mw := limitspec.MetaWindow{Limit: 3, Window: time.Second}
	req := func(cost int64, meta string) limitspec.Request {
		return limitspec.Request{Key: "10.0.0.7", Limit: mw, Cost: cost, Now: t0, Inputs: map[string]string{"meta": meta}}
	}
	primary, loc := local(t), local(t)
	l := mustNew(t, primary, loc, Options{}, newClock())
	if _, err := l.Limit(ctx, req(1, "alice")); err != nil {
		t.Fatal(err)
	}
	if _, err := loc.Limit(ctx, req(2, "bob")); err != nil { // the local side's own, never shown
		t.Fatal(err)
	}
	got, err := l.View(ctx, "entries", req(0, ""))
	if want := fmt.Sprint([][]any{{t0.UnixMilli(), int64(1), "alice"}}); fmt.Sprint(got) != want || err != nil {
		t.Errorf("View = %v, %v; want the primary's entries %s", got, err, want)
	}
	if _, err := l.View(ctx, "entries", limitspec.Request{Key: "k", Limit: fixedWindow(2), Now: t0}); !errors.Is(err, limitspec.ErrBadInput) ||
		!strings.Contains(err.Error(), `unknown view "entries"`) {
		t.Errorf("an unknown view: %v; want the primary's refusal", err)
	}
	nv := mustNew(t, newFake(succeed), loc, Options{}, newClock())
	if _, err := nv.View(ctx, "entries", req(0, "")); !errors.Is(err, limitspec.ErrBadInput) || !strings.Contains(err.Error(), "has no View") {
		t.Errorf("View of a primary without views: %v; want ErrBadInput naming it", err)
	}
}
