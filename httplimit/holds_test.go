package httplimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/httplimit"
)

// heldMiddleware is a middleware of a holding policy, per client IP, of
// limits, on an in-process limiter it returns too.
func heldMiddleware(t *testing.T, opts httplimit.Options, limits ...limitspec.PolicyLimit) (*httplimit.Middleware, *goimpl.Limiter, *limitspec.Policy) {
	t.Helper()
	p, err := limitspec.NewPolicy("api", limits...)
	if err != nil {
		t.Fatal(err)
	}
	lim, _ := goimpl.New(goimpl.Options{})
	t.Cleanup(func() { lim.Close() })
	opts.Policy, opts.IDs = p.WithHolds(), map[string]httplimit.KeyFunc{"ip": httplimit.RemoteIP}
	m, err := httplimit.New(lim, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m, lim, opts.Policy
}

// TestInFlight: 2 requests in flight at most per client. Two handlers
// block; a third request is denied (429, Retry-After 1: the holds'
// end, HoldFor, a minute, capped at DefaultInFlightRetryAfter) while the RateLimit-Policy field gives the slots
// with qu="concurrent-requests"; once one response ends, a request is
// served again. A handler that panics, and one whose client went away,
// free their slots too.
func TestInFlight(t *testing.T) {
	m, _, _ := heldMiddleware(t, httplimit.Options{}, limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: 2}, Identity: "ip"})
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	ctx, gone := context.WithCancel(t.Context())
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/block":
			started <- struct{}{}
			<-release
		case "/panic":
			panic(http.ErrAbortHandler)
		case "/gone": // the client goes away while the handler works
			gone()
			<-r.Context().Done()
		}
	}))
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequestWithContext(ctx, "GET", path, nil)
		func() {
			defer func() { recover() }() // the panic handler's, as net/http's server recovers it
			h.ServeHTTP(rec, req)
		}()
		return rec
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { get("/block") })
	}
	<-started
	<-started
	denied := get("/")
	policy := denied.Header().Get("RateLimit-Policy")
	if denied.Code != http.StatusTooManyRequests || denied.Header().Get("Retry-After") != "1" ||
		!strings.Contains(policy, `"slots";q=2;qu="concurrent-requests"`) {
		t.Errorf("a third request in flight: %d, Retry-After %q, RateLimit-Policy %q; want 429, 1, the slots' quota with qu", denied.Code, denied.Header().Get("Retry-After"), policy)
	}
	close(release)
	wg.Wait()
	for _, path := range []string{"/panic", "/panic", "/gone"} {
		get(path)
	}
	ctx = t.Context()
	for _, path := range []string{"/", "/"} {
		if rec := get(path); rec.Code == http.StatusTooManyRequests {
			t.Errorf("%s after the others ended: 429; want served, every slot free", path)
		}
	}
}

// TestReportCost: a request reserves its estimate, 10 of 100 an hour;
// while it is served the 10 are held (90 left); the handler reports 3,
// which is what is committed: 97 left.
func TestReportCost(t *testing.T) {
	hour := limitspec.FixedWindow{Limit: 100, Window: time.Hour}
	m, lim, pol := heldMiddleware(t, httplimit.Options{Cost: func(*http.Request) (int64, error) { return 10, nil }},
		limitspec.PolicyLimit{Name: "tokens", Limit: hour, Identity: "ip"})
	var during int64
	peek := func(*http.Request) int64 {
		p := limitspec.Request{Policy: pol, IDs: map[string]string{"ip": "192.0.2.1"}, Peek: true}
		res, err := lim.Limit(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		return res.Limits[0].Remaining
	}
	req := httptest.NewRequest("GET", "/", nil)
	rec := httptest.NewRecorder()
	m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		during = peek(r)
		httplimit.ReportCost(r, 3)
	})).ServeHTTP(rec, req)
	if after := peek(req); during != 90 || after != 97 || rec.Code != http.StatusOK {
		t.Errorf("%d left while served, %d after, status %d; want 90, 97, 200", during, after, rec.Code)
	}
}

// TestReportUnitCost: an LLM call's policy of 100 requests and 1000
// tokens an hour. A request reserves 1 request and, by Options.Costs, its
// max tokens, 400: while it is served, 99 requests and 600 tokens are
// left. The handler reports the 150 tokens it used, which is what is
// committed beside the request: 99 and 850 left. The RateLimit-Policy
// field names the tokens' unit, qu="tokens", and none for requests.
func TestReportUnitCost(t *testing.T) {
	hour := func(n int64) limitspec.FixedWindow { return limitspec.FixedWindow{Limit: n, Window: time.Hour} }
	maxTokens := func(*http.Request) (map[string]int64, error) { return map[string]int64{"tokens": 400}, nil }
	m, lim, pol := heldMiddleware(t, httplimit.Options{Costs: maxTokens},
		limitspec.PolicyLimit{Name: "requests", Limit: hour(100), Identity: "ip"},
		limitspec.PolicyLimit{Name: "tokens", Limit: hour(1000), Identity: "ip", Unit: "tokens"})
	left := func() [2]int64 {
		res, err := lim.Limit(t.Context(), limitspec.Request{Policy: pol, IDs: map[string]string{"ip": "192.0.2.1"}, Peek: true})
		if err != nil {
			t.Fatal(err)
		}
		return [2]int64{res.Limits[0].Remaining, res.Limits[1].Remaining}
	}
	var during [2]int64
	rec := httptest.NewRecorder()
	m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		during = left()
		httplimit.ReportUnitCost(r, "tokens", 150)
	})).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if after := left(); during != [2]int64{99, 600} || after != [2]int64{99, 850} || rec.Code != http.StatusOK {
		t.Errorf("left while served %v, after %v, status %d; want [99 600], [99 850], 200", during, after, rec.Code)
	}
	want := `"requests";q=100;w=3600, "tokens";q=1000;w=3600;qu="tokens"`
	if got := rec.Header().Get("RateLimit-Policy"); got != want {
		t.Errorf("RateLimit-Policy %q; want %q", got, want)
	}
}

// TestQuotaUnits: each RateLimit-Policy item names its limit's unit as
// the IETF draft does: nothing for requests (its default, with no unit or
// the unit requests), content-bytes for bytes, concurrent-requests for an
// in-flight limit, and any other unit by its own name.
func TestQuotaUnits(t *testing.T) {
	minute := limitspec.FixedWindow{Limit: 1000, Window: time.Minute}
	m, _, _ := heldMiddleware(t, httplimit.Options{},
		limitspec.PolicyLimit{Name: "a", Limit: minute, Identity: "ip"},
		limitspec.PolicyLimit{Name: "b", Limit: minute, Identity: "ip", Unit: "requests"},
		limitspec.PolicyLimit{Name: "c", Limit: minute, Identity: "ip", Unit: "bytes"},
		limitspec.PolicyLimit{Name: "d", Limit: minute, Identity: "ip", Unit: "tokens"},
		limitspec.PolicyLimit{Name: "e", Limit: limitspec.Concurrency{Limit: 5}, Identity: "ip", Unit: "slots"})
	rec := httptest.NewRecorder()
	m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	want := `"a";q=1000;w=60, "b";q=1000;w=60, "c";q=1000;w=60;qu="content-bytes", "d";q=1000;w=60;qu="tokens", "e";q=5;qu="concurrent-requests"`
	if got := rec.Header().Get("RateLimit-Policy"); got != want {
		t.Errorf("RateLimit-Policy %q;\nwant %q", got, want)
	}
}

// TestStackedHolds: two holding middlewares, requests outside (10 a
// minute) and tokens inside (100 a minute, 60 a request): when the
// inner one denies (429), the outer one releases its hold rather than
// commit it, so that a request never served is not counted; and a
// served one is committed by both. A plain (not holding) middleware
// inside that denies releases the outer hold too.
func TestStackedHolds(t *testing.T) {
	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lim.Close() })
	ids := map[string]httplimit.KeyFunc{"ip": httplimit.RemoteIP}
	policy := func(name, unit string, limit int64) *limitspec.Policy {
		p, err := limitspec.NewPolicy(name, limitspec.PolicyLimit{Name: name, Identity: "ip", Unit: unit,
			Limit: limitspec.FixedWindow{Limit: limit, Window: time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		return p.WithHolds()
	}
	requests, tokens := policy("requests", "", 10), policy("tokens", "tokens", 100)
	outer, err := httplimit.New(lim, httplimit.Options{Policy: requests, IDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	inner, err := httplimit.New(lim, httplimit.Options{Policy: tokens, IDs: ids,
		Costs: func(*http.Request) (map[string]int64, error) { return map[string]int64{"tokens": 60}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := httplimit.New(lim, httplimit.Options{Limit: limitspec.FixedWindow{Limit: 1, Window: time.Minute}, Key: httplimit.RemoteIP})
	if err != nil {
		t.Fatal(err)
	}
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	left := func(p *limitspec.Policy) int64 {
		res, err := lim.Limit(t.Context(), limitspec.Request{Policy: p, IDs: map[string]string{"ip": "192.0.2.1"}, Peek: true})
		if err != nil {
			t.Fatal(err)
		}
		return res.Limits[0].Remaining
	}
	for i, step := range []struct {
		h              http.Handler
		status         int
		requests, toks int64 // left after it
	}{
		{outer.Handler(inner.Handler(ok)), http.StatusOK, 9, 40},
		{outer.Handler(inner.Handler(ok)), http.StatusTooManyRequests, 9, 40}, // the tokens deny: the request is released
		{outer.Handler(plain.Handler(ok)), http.StatusOK, 8, 40},
		{outer.Handler(plain.Handler(ok)), http.StatusTooManyRequests, 8, 40}, // the plain limit denies
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = "192.0.2.1:1234"
		step.h.ServeHTTP(rec, req)
		if rec.Code != step.status {
			t.Fatalf("request %d: status %d; want %d", i, rec.Code, step.status)
		}
		if r, tk := left(requests), left(tokens); r != step.requests || tk != step.toks {
			t.Errorf("request %d: %d requests and %d tokens left; want %d and %d", i, r, tk, step.requests, step.toks)
		}
	}
}

// TestInFlightRetryAfter: a denial for want of a slot says Retry-After
// Options.InFlightRetryAfter (not the holds' end, a minute), but a
// longer wait of another limit that denies too is sent as it is. One
// request holds the only slot (and, where the policy has it, the
// minute's only request); the next is denied.
func TestInFlightRetryAfter(t *testing.T) {
	slot := limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: 1}, Identity: "ip"}
	minute := limitspec.PolicyLimit{Name: "minute", Limit: limitspec.FixedWindow{Limit: 1, Window: time.Minute}, Identity: "ip"}
	for _, tc := range []struct {
		name   string
		opts   httplimit.Options
		limits []limitspec.PolicyLimit
		want   string
	}{
		{"the slot alone, the default", httplimit.Options{}, []limitspec.PolicyLimit{slot}, "1"},
		{"the slot alone, 3 s", httplimit.Options{InFlightRetryAfter: 3 * time.Second}, []limitspec.PolicyLimit{slot}, "3"},
		{"the slot and the minute", httplimit.Options{}, []limitspec.PolicyLimit{slot, minute}, "60"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, _ := heldMiddleware(t, tc.opts, tc.limits...)
			release, started := make(chan struct{}), make(chan struct{})
			h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/block" {
					close(started)
					<-release
				}
			}))
			var wg sync.WaitGroup
			wg.Go(func() { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/block", nil)) })
			<-started
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			close(release)
			wg.Wait()
			if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != tc.want {
				t.Errorf("%d, Retry-After %q; want 429, %s", rec.Code, rec.Header().Get("Retry-After"), tc.want)
			}
		})
	}
}
