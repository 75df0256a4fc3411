package fallback

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/redislimit"
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

// TestBind: a bound limit and a bound policy decide through the
// Limiter, on the primary while it answers and on the local limiter
// while it does not, as Limit does; a request naming another limit or
// policy, a bad limit and a holding policy are refused as bad input.
func TestBind(t *testing.T) {
	ctx := context.Background()
	f := newFake(succeed)
	l := mustNew(t, f, local(t), Options{}, newClock())
	b, err := l.Bind(fixedWindow(2))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := b.Allow(ctx, "k"); err != nil || !res.Allowed || f.calls.Load() != 1 {
		t.Fatalf("Allow on a primary that answers: %+v, %v, %d primary calls; want admitted by it", res, err, f.calls.Load())
	}
	f.set(fail)
	for i, want := range []bool{true, false} { // 1 of 2 spent on the primary, 1 left
		if res, err := b.Allow(ctx, "k"); err != nil || res.Allowed != want || res.Quota != 2 {
			t.Fatalf("Allow %d with the primary down: %+v, %v; want allowed %v, quota 2", i, res, err, want)
		}
	}
	if st := l.Stats(); st.Fallback != 2 {
		t.Errorf("%d local decisions; want 2", st.Fallback)
	}
	if _, err := b.Limit(ctx, limitspec.Request{Key: "k", Limit: fixedWindow(3), Cost: 1}); !errors.Is(err, limitspec.ErrBadInput) {
		t.Errorf("a request naming another limit: %v; want ErrBadInput", err)
	}
	if _, err := l.Bind(limitspec.FixedWindow{Limit: 0, Window: time.Second}); !errors.Is(err, limitspec.ErrBadInput) {
		t.Errorf("Bind of a limit of 0: %v; want ErrBadInput", err)
	}
	p, err := limitspec.NewPolicy("two", limitspec.PolicyLimit{Name: "a", Limit: fixedWindow(2), Identity: "user"})
	if err != nil {
		t.Fatal(err)
	}
	bp, err := l.BindPolicy(p)
	if err != nil {
		t.Fatal(err)
	}
	var res limitspec.Result
	if err := bp.LimitInto(ctx, limitspec.Request{IDs: map[string]string{"user": "u"}, Cost: 1, Now: t0}, &res); err != nil ||
		!res.Allowed || res.Side != limitspec.Fallback || len(res.Limits) != 1 {
		t.Errorf("the bound policy, the primary down: %+v, %v; want admitted locally", res, err)
	}
	if _, err := l.BindPolicy(p.WithHolds()); !errors.Is(err, limitspec.ErrBadInput) {
		t.Errorf("BindPolicy of a holding policy: %v; want ErrBadInput", err)
	}
}

// TestSameMethods: the Limiter has every method of the limiters it
// wraps in production (goimpl's and redislimit's), but for those that
// only serve the one (Close, the local limiter's; the allocation-free
// LimitInto and HoldInto, goimpl's), so that a service swaps them for a
// fallback pair without changing its calls.
func TestSameMethods(t *testing.T) {
	not := map[string]bool{"Close": true, "LimitInto": true, "HoldInto": true}
	have := reflect.TypeFor[*Limiter]()
	for _, typ := range []reflect.Type{reflect.TypeFor[*goimpl.Limiter](), reflect.TypeFor[*redislimit.Limiter]()} {
		for m := range typ.Methods() {
			if _, ok := have.MethodByName(m.Name); !ok && !not[m.Name] {
				t.Errorf("%v has %s, *fallback.Limiter not", typ, m.Name)
			}
		}
	}
}
