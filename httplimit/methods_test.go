package httplimit_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/httplimit"
)

// counting counts the decisions of the limiter it wraps.
type counting struct {
	limitspec.Limiter
	calls int
}

func (c *counting) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	c.calls++
	return c.Limiter.Limit(ctx, req)
}

// TestMethods: OPTIONS and HEAD requests reach the handler undecided (no
// limiter call, no header fields, no OnDecision) unless the options ask
// for them; any other method, "head" among them, is decided.
func TestMethods(t *testing.T) {
	const limit = `"fixed_window";r=2;t=18`
	for _, c := range []struct {
		name   string
		method string
		opts   httplimit.Options
		calls  int
	}{
		{"GET", http.MethodGet, httplimit.Options{}, 1},
		{"POST", http.MethodPost, httplimit.Options{}, 1},
		{"OPTIONS", http.MethodOptions, httplimit.Options{}, 0},
		{"HEAD", http.MethodHead, httplimit.Options{}, 0},
		{"OPTIONS, DecideOptions", http.MethodOptions, httplimit.Options{DecideOptions: true}, 1},
		{"HEAD, DecideHead", http.MethodHead, httplimit.Options{DecideHead: true}, 1},
		{"OPTIONS, DecideHead", http.MethodOptions, httplimit.Options{DecideHead: true}, 0},
		{"HEAD, DecideOptions", http.MethodHead, httplimit.Options{DecideOptions: true}, 0},
		{"head, not HEAD", "head", httplimit.Options{}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &counting{Limiter: at(t, 42_500)}
			decided := 0
			c.opts.Limit = threePerMinute
			c.opts.OnDecision = func(*http.Request, limitspec.Result, error) { decided++ }
			w := send(handler(t, l, c.opts), c.method, "/x", "192.0.2.1:1")
			x := want{status: 200, policy: "-", limit: "-"}
			if c.calls > 0 {
				x.policy, x.limit = `"fixed_window";q=3;w=60`, limit
			}
			check(t, 1, w, x)
			if l.calls != c.calls || decided != c.calls || w.Body.String() != "ok" {
				t.Errorf("%d Limit calls, %d OnDecision calls, body %q; want %d, %d and the handler's ok",
					l.calls, decided, w.Body, c.calls, c.calls)
			}
		})
	}
}

// TestMethodsBeforeRules: the method is looked at before Select and
// Routes: a route of its own for HEAD, or a Select that would refuse,
// applies to a HEAD request only with DecideHead.
func TestMethodsBeforeRules(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("HEAD /x", ok)
	mux.Handle("GET /x", ok)
	head := httplimit.Rule{Limit: threePerMinute, Name: "head"}
	for _, c := range []struct {
		decide        bool
		calls         int // of the limiter, and of Select
		policy, limit string
	}{
		{false, 0, "-", "-"},
		{true, 1, `"head";q=3;w=60`, `"head";r=2;t=18`},
	} {
		l := &counting{Limiter: at(t, 42_500)}
		selects := 0
		m := mustNew(t, l, httplimit.Options{Mux: mux, Routes: map[string]httplimit.Rule{"HEAD /x": head}, DecideHead: c.decide,
			Select: func(*http.Request) (httplimit.Rule, error) { selects++; return httplimit.Rule{}, nil }})
		w := send(m.Handler(mux), http.MethodHead, "/x", "192.0.2.1:1")
		check(t, 1, w, want{status: 200, policy: c.policy, limit: c.limit})
		if l.calls != c.calls || selects != c.calls {
			t.Errorf("DecideHead %v: %d Limit calls, %d Select calls; want %d of each", c.decide, l.calls, selects, c.calls)
		}
	}
}

// TestHandlerPanics: the decision is made before the handler runs, and
// stands when it panics: the request has used its quota, and the next
// one finds it so.
func TestHandlerPanics(t *testing.T) {
	l := &counting{Limiter: at(t, 42_500)}
	m := mustNew(t, l, httplimit.Options{Limit: threePerMinute})
	crash := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("crash") }))
	var recovered any
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if recovered = recover(); recovered != nil {
				w.WriteHeader(http.StatusInternalServerError)
			}
		}()
		crash.ServeHTTP(w, r)
	})
	check(t, 1, serve(h, "192.0.2.1:1"), want{status: 500, limit: `"fixed_window";r=2;t=18`})
	if recovered != "crash" || l.calls != 1 {
		t.Errorf("recovered %v after %d Limit calls; want the handler's panic after 1", recovered, l.calls)
	}
	check(t, 2, serve(m.Handler(ok), "192.0.2.1:1"), want{status: 200, limit: `"fixed_window";r=1;t=18`})
}

// TestHandlerOfNil: Handler refuses a nil handler at once, as
// ServeMux.Handle does, not at the first request.
func TestHandlerOfNil(t *testing.T) {
	m := mustNew(t, &fake{}, httplimit.Options{Limit: fakeLimit})
	defer func() {
		if v := recover(); v != "httplimit: Handler of a nil http.Handler" {
			t.Errorf("Handler(nil) panicked with %v", v)
		}
	}()
	m.Handler(nil)
}
