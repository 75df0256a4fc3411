package httplimit_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/httplimit"
)

// items is the per-route limit of the stacked tests: a GCRA of burst 2 at
// 1 a second (T = 1 s, τ = 2 s, so q=2, w=2). On a fresh key the first
// request leaves 1 and a TAT 1 s ahead (t=1); the second 0 and 2 s
// (t=2); the third, at the same instant, would push the TAT 3 s ahead,
// past τ: denied, retry when the TAT is back to τ, in 1 s.
var items = limitspec.GCRA{Burst: 2, Rate: 1, Period: time.Second}

// stacked is a global fixed window of globalLimit a minute around a
// ServeMux, and items inside it on GET /items/{id} only, both deciding on
// one limiter at 42.5 s into an hour (the minute ends in 17.5 s: t=18),
// with opts' Fields and LegacyHeaders.
func stacked(t *testing.T, globalLimit int64, opts httplimit.Options) http.Handler {
	t.Helper()
	lim := at(t, 42_500)
	outer, inner := opts, opts
	outer.Limit, outer.Name = limitspec.FixedWindow{Limit: globalLimit, Window: time.Minute}, "global"
	inner.Limit, inner.Name = items, "items"
	mux := http.NewServeMux()
	mux.Handle("GET /items/{id}", mustNew(t, lim, inner).Handler(ok))
	mux.Handle("GET /other", ok)
	return mustNew(t, lim, outer).Handler(mux)
}

// TestStacked: the inner middleware appends its items to the outer's
// fields rather than replacing them. A request the inner one denies has
// used the global quota (the two decisions are not one); once the global
// quota is spent, the outer one denies alone.
func TestStacked(t *testing.T) {
	h := stacked(t, 4, httplimit.Options{})
	const both, global = `"global";q=4;w=60, "items";q=2;w=2`, `"global";q=4;w=60`
	run(t, h, []step{
		{"GET", "/items/1", want{status: 200, policy: both, limit: `"global";r=3;t=18, "items";r=1;t=1`, retry: "-"}},
		{"GET", "/items/1", want{status: 200, policy: both, limit: `"global";r=2;t=18, "items";r=0;t=2`, retry: "-"}},
		{"GET", "/items/1", want{status: 429, policy: both, limit: `"global";r=1;t=18, "items";r=0;t=2`, retry: "1"}},
		{"GET", "/other", want{status: 200, policy: global, limit: `"global";r=0;t=18`, retry: "-"}},
		{"GET", "/items/1", want{status: 429, policy: global, limit: `"global";r=0;t=18`, retry: "18"}},
	})
}

// TestStackedViolated: the problem names the limit of the middleware
// that denied.
func TestStackedViolated(t *testing.T) {
	h := stacked(t, 3, httplimit.Options{})
	var bodies []string
	for range 4 {
		bodies = append(bodies, send(h, "GET", "/items/1", "192.0.2.1:1").Body.String())
	}
	// The third is denied by items (global has 0 left after it), the
	// fourth by global.
	for i, v := range map[int]string{2: `"violated-policies":["items"]`, 3: `"violated-policies":["global"]`} {
		if !strings.Contains(bodies[i], v) {
			t.Errorf("request %d: body %s, want %s", i+1, bodies[i], v)
		}
	}
}

// TestStackedLegacyHeaders: of two middlewares with LegacyHeaders, the
// X-RateLimit-* fields are the binding limit's that leaves less
// remaining; on a tie, the outer one's.
func TestStackedLegacyHeaders(t *testing.T) {
	for _, c := range []struct {
		name        string
		globalLimit int64
		legacy      [3]string // after one request: items has 1 left, reset in 1 s
	}{
		{"the inner leaves less", 4, [3]string{"2", "1", "1"}},  // global: 3 left
		{"the outer leaves less", 1, [3]string{"1", "0", "18"}}, // global: 0 left
		{"a tie", 2, [3]string{"2", "1", "18"}},                 // global: 1 left
	} {
		t.Run(c.name, func(t *testing.T) {
			h := stacked(t, c.globalLimit, httplimit.Options{LegacyHeaders: true})
			check(t, 1, send(h, "GET", "/items/1", "192.0.2.1:1"), want{status: 200, legacy: c.legacy})
		})
	}
}

// TestCustomFields: renamed fields and parameters are used by both
// middlewares, merged alike, and Draft11's are sent by neither.
func TestCustomFields(t *testing.T) {
	f := httplimit.Fields{Policy: "X-Quota-Policy", Limit: "X-Quota", Quota: "limit", Window: "window", Remaining: "remaining", Reset: "reset"}
	h := stacked(t, 4, httplimit.Options{Fields: f})
	const policy = `"global";limit=4;window=60, "items";limit=2;window=2`
	for i, x := range []struct {
		status       int
		quota, retry string
	}{
		{200, `"global";remaining=3;reset=18, "items";remaining=1;reset=1`, "-"},
		{200, `"global";remaining=2;reset=18, "items";remaining=0;reset=2`, "-"},
		{429, `"global";remaining=1;reset=18, "items";remaining=0;reset=2`, "1"},
	} {
		w := send(h, "GET", "/items/1", "192.0.2.1:1")
		check(t, i+1, w, want{status: x.status, policy: "-", limit: "-", retry: x.retry})
		checkField(t, i+1, w.Header(), "X-Quota-Policy", policy)
		checkField(t, i+1, w.Header(), "X-Quota", x.quota)
	}
}

// TestFieldsOfAnotherMiddleware: items set on several lines by another
// middleware are kept, ahead of this one's, in one line.
func TestFieldsOfAnotherMiddleware(t *testing.T) {
	m := mustNew(t, at(t, 42_500), httplimit.Options{Limit: threePerMinute})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("RateLimit-Policy", `"a";q=1`)
		w.Header().Add("RateLimit-Policy", `"b";q=2`)
		w.Header().Add("RateLimit", `"a";r=1;t=1`)
		m.Handler(ok).ServeHTTP(w, r)
	})
	check(t, 1, serve(h, "192.0.2.1:1"), want{status: 200,
		policy: `"a";q=1, "b";q=2, "fixed_window";q=3;w=60`,
		limit:  `"a";r=1;t=1, "fixed_window";r=2;t=18`})
}
