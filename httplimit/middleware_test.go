package httplimit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/httplimit"
)

// atTime decides every request at a fixed time, so that expected header
// values are exact.
type atTime struct {
	l   limitspec.Limiter
	now time.Time
}

func (a *atTime) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	req.Now = a.now
	return a.l.Limit(ctx, req)
}

// fake answers every request with res and err, and keeps the last request.
type fake struct {
	res  limitspec.Result
	err  error
	last limitspec.Request
	ctx  context.Context
}

func (f *fake) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	f.last, f.ctx = req, ctx
	return f.res, f.err
}

// hourStart is the start of an hour (and so of a minute and a second),
// in ms since the epoch.
const hourStart = 1_699_999_200_000

// fixedWindow is a fixed_window of limit 3 per 60 s deciding at hourStart
// + 42.5 s: each window ends 17.5 s later.
func fixedWindow(t *testing.T) limitspec.Limiter {
	t.Helper()
	fw, err := goimpl.NewFixedWindow(goimpl.FixedWindowParams{Limit: 3, WindowMs: 60000})
	if err != nil {
		t.Fatal(err)
	}
	fw.StopSweeper()
	return &atTime{l: limitspec.Local("fixed_window", fw), now: time.UnixMilli(hourStart + 42_500)}
}

// ok is the wrapped handler: 200 "ok".
var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })

// serve sends one GET from remote with the header pairs hdr.
func serve(h http.Handler, remote string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	r.RemoteAddr = remote
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func handler(t *testing.T, l limitspec.Limiter, opts httplimit.Options) http.Handler {
	t.Helper()
	m, err := httplimit.New(l, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m.Handler(ok)
}

// want is the expected response; a field "-" must be absent, "" is not
// checked.
type want struct {
	status                      int
	policy, limit, retry, ctype string
	legacy                      [3]string // X-RateLimit-Limit, -Remaining, -Reset
}

func check(t *testing.T, i int, w *httptest.ResponseRecorder, x want) {
	t.Helper()
	if w.Code != x.status {
		t.Errorf("request %d: status %d, want %d (body %s)", i, w.Code, x.status, w.Body)
	}
	fields := []struct{ name, want string }{
		{"RateLimit-Policy", x.policy}, {"RateLimit", x.limit}, {"Retry-After", x.retry},
		{"Content-Type", x.ctype}, {"X-RateLimit-Limit", x.legacy[0]},
		{"X-RateLimit-Remaining", x.legacy[1]}, {"X-RateLimit-Reset", x.legacy[2]},
	}
	for _, f := range fields {
		got := w.Header().Values(f.name)
		present := len(got) > 0
		switch {
		case f.want == "-" && present:
			t.Errorf("request %d: %s: %q, want none", i, f.name, got)
		case f.want != "" && f.want != "-" && (len(got) != 1 || got[0] != f.want):
			t.Errorf("request %d: %s: %q, want %q", i, f.name, got, f.want)
		}
	}
}

func TestFixedWindowHeaders(t *testing.T) {
	h := handler(t, fixedWindow(t), httplimit.Options{})
	const policy = `"fixed_window";q=3;w=60`
	steps := []want{
		{status: 200, policy: policy, limit: `"fixed_window";r=2;t=18`, retry: "-", legacy: [3]string{"-", "-", "-"}},
		{status: 200, policy: policy, limit: `"fixed_window";r=1;t=18`, retry: "-"},
		{status: 200, policy: policy, limit: `"fixed_window";r=0;t=18`, retry: "-"},
		{status: 429, policy: policy, limit: `"fixed_window";r=0;t=18`, retry: "18", ctype: "application/problem+json"},
	}
	for i, x := range steps {
		check(t, i+1, serve(h, "192.0.2.1:1234"), x)
	}
	// Another client has its own limit.
	check(t, 5, serve(h, "192.0.2.2:1234"), want{status: 200, limit: `"fixed_window";r=2;t=18`})
}

func TestProblemBody(t *testing.T) {
	h := handler(t, fixedWindow(t), httplimit.Options{QuotaName: func(n string) string { return "per-ip" }})
	var w *httptest.ResponseRecorder
	for range 4 {
		w = serve(h, "192.0.2.1:1234")
	}
	check(t, 4, w, want{status: 429, policy: `"per-ip";q=3;w=60`, limit: `"per-ip";r=0;t=18`, retry: "18"})
	var p map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatalf("body %s: %v", w.Body, err)
	}
	x := map[string]any{
		"type":              "https://iana.org/assignments/http-problem-types#quota-exceeded",
		"title":             "Request cannot be satisfied as assigned quota has been exceeded",
		"status":            429.0,
		"detail":            "Retry after 18 s.",
		"violated-policies": []any{"per-ip"},
	}
	if fmt.Sprint(p) != fmt.Sprint(x) {
		t.Errorf("body\n%v\nwant\n%v", p, x)
	}
}

func TestPolicyHeaders(t *testing.T) {
	p, err := goimpl.NewPolicy("ip_user", nil)
	if err != nil {
		t.Fatal(err)
	}
	p.StopSweeper()
	// 1234.567 s into the hour: the second ends in 433 ms, the minute in
	// 25.433 s, the hour in 2365.433 s.
	l := &atTime{l: limitspec.LocalPolicy(p), now: time.UnixMilli(hourStart + 1_234_567)}
	h := handler(t, l, httplimit.Options{IDs: map[string]httplimit.KeyFunc{
		"ip": httplimit.RemoteIP, "user": httplimit.Header("X-User"),
	}})
	const policy = `"ip_second";q=10;w=1, "ip_minute";q=120;w=60, "ip_hour";q=240;w=3600, ` +
		`"user_second";q=10;w=1, "user_minute";q=120;w=60, "user_hour";q=240;w=3600`
	check(t, 1, serve(h, "192.0.2.1:1", "X-User", "u1"), want{status: 200, policy: policy,
		limit: `"ip_second";r=9;t=1, "ip_minute";r=119;t=26, "ip_hour";r=239;t=2366, ` +
			`"user_second";r=9;t=1, "user_minute";r=119;t=26, "user_hour";r=239;t=2366`})
	for i := 2; i <= 10; i++ {
		serve(h, "192.0.2.1:1", "X-User", fmt.Sprint("u", i))
	}
	// The 11th request from the IP, by a fresh user: ip_second denies; the
	// others report a peek.
	w := serve(h, "192.0.2.1:1", "X-User", "u11")
	check(t, 11, w, want{status: 429, policy: policy, retry: "1",
		limit: `"ip_second";r=0;t=1, "ip_minute";r=110;t=26, "ip_hour";r=230;t=2366, ` +
			`"user_second";r=10;t=0, "user_minute";r=120;t=0, "user_hour";r=240;t=0`})
	if !strings.Contains(w.Body.String(), `"violated-policies":["ip_second"]`) {
		t.Errorf("body %s: want violated-policies [ip_second]", w.Body)
	}
}

func TestRetryAfterRounding(t *testing.T) {
	for _, c := range []struct {
		ms    int64
		retry string
	}{{0, "0"}, {1, "1"}, {999, "1"}, {1000, "1"}, {1001, "2"}, {59_999, "60"}, {-1, "-"}} {
		f := &fake{res: limitspec.Result{Result: goimpl.Result{Limit: 5, RetryAfterMs: c.ms, ResetAfterMs: 1001}}}
		f.res.Limits = []limitspec.Quota{{Name: "q", Window: 1500 * time.Millisecond, Result: f.res.Result}}
		w := serve(handler(t, f, httplimit.Options{}), "192.0.2.1:1")
		check(t, int(c.ms), w, want{status: 429, retry: c.retry, policy: `"q";q=5;w=2`, limit: `"q";r=0;t=2`})
	}
}

func TestNeverAdmitted(t *testing.T) {
	// A cost of 4 can never pass a limit of 3: 429 without Retry-After.
	h := handler(t, fixedWindow(t), httplimit.Options{Cost: func(*http.Request) (int64, error) { return 4, nil }})
	w := serve(h, "192.0.2.1:1")
	check(t, 1, w, want{status: 429, retry: "-", limit: `"fixed_window";r=3;t=0`})
	if !strings.Contains(w.Body.String(), "never be admitted") {
		t.Errorf("body %s", w.Body)
	}
}

func TestLegacyHeaders(t *testing.T) {
	h := handler(t, fixedWindow(t), httplimit.Options{LegacyHeaders: true})
	for i, legacy := range [][3]string{{"3", "2", "18"}, {"3", "1", "18"}, {"3", "0", "18"}, {"3", "0", "18"}} {
		check(t, i+1, serve(h, "192.0.2.1:1"), want{status: []int{200, 200, 200, 429}[i], legacy: legacy})
	}
}

func TestDryRun(t *testing.T) {
	var allowed []bool
	h := handler(t, fixedWindow(t), httplimit.Options{DryRun: true,
		OnDecision: func(r *http.Request, res limitspec.Result, err error) {
			if err != nil {
				t.Errorf("OnDecision: %v", err)
			}
			allowed = append(allowed, res.Allowed)
		}})
	for i := 1; i <= 5; i++ {
		w := serve(h, "192.0.2.1:1")
		check(t, i, w, want{status: 200, retry: "-", policy: `"fixed_window";q=3;w=60`,
			limit: fmt.Sprintf(`"fixed_window";r=%d;t=18`, max(0, 3-i))})
		if w.Body.String() != "ok" {
			t.Errorf("request %d: body %q: the handler did not run", i, w.Body)
		}
	}
	if fmt.Sprint(allowed) != "[true true true false false]" {
		t.Errorf("OnDecision saw %v", allowed)
	}
}

func TestErrors(t *testing.T) {
	unavailable := fmt.Errorf("dial: %w", limitspec.ErrUnavailable)
	badInput := &goimpl.InputError{Msg: "gcra: key must not be empty"}
	failed := errors.New("lookup failed")
	cases := []struct {
		name   string
		l      limitspec.Limiter
		opts   httplimit.Options
		status int
		detail string
	}{
		{"unavailable", &fake{err: unavailable}, httplimit.Options{}, 503, "The rate limiter is unavailable."},
		{"unavailable, fail open", &fake{err: unavailable}, httplimit.Options{FailOpen: true}, 200, ""},
		{"unavailable, dry run", &fake{err: unavailable}, httplimit.Options{DryRun: true}, 200, ""},
		{"bad state", &fake{err: limitspec.ErrBadState}, httplimit.Options{}, 503, "The rate limiter is unavailable."},
		{"bad input", &fake{err: badInput}, httplimit.Options{}, 400, "The rate limiter refused the request: gcra: key must not be empty"},
		{"bad input, fail open", &fake{err: badInput}, httplimit.Options{FailOpen: true}, 400, ""},
		{"empty key", fixedWindow(t), httplimit.Options{Key: func(*http.Request) (string, error) { return "", nil }},
			400, "The rate limiter refused the request: fixed_window: key must not be empty"},
		{"missing header", &fake{}, httplimit.Options{Key: httplimit.Header("X-API-Key")}, 400, "missing header X-Api-Key"},
		{"missing header, fail open", &fake{}, httplimit.Options{Key: httplimit.Header("X-API-Key"), FailOpen: true}, 400, ""},
		{"missing header, dry run", &fake{}, httplimit.Options{Key: httplimit.Header("X-API-Key"), DryRun: true}, 200, ""},
		{"key func error", &fake{}, httplimit.Options{Key: func(*http.Request) (string, error) { return "", failed }},
			500, "the request's rate-limit key or cost could not be computed"},
		{"key func *Error", &fake{}, httplimit.Options{Key: func(*http.Request) (string, error) {
			return "", &httplimit.Error{Status: 403, Detail: "unknown tenant"}
		}}, 403, "unknown tenant"},
		{"cost error", &fake{}, httplimit.Options{Cost: func(*http.Request) (int64, error) {
			return 0, &httplimit.Error{Detail: "bad size"}
		}}, 400, "bad size"},
		{"bad RemoteAddr", &fake{}, httplimit.Options{}, 500, "the client's address could not be read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var seen error
			c.opts.OnDecision = func(_ *http.Request, _ limitspec.Result, err error) { seen = err }
			remote := "192.0.2.1:1"
			if c.name == "bad RemoteAddr" {
				remote = "pipe"
			}
			w := serve(handler(t, c.l, c.opts), remote)
			if seen == nil {
				t.Error("OnDecision got no error")
			}
			if c.status == 200 {
				check(t, 1, w, want{status: 200, policy: "-", limit: "-"})
				return
			}
			checkRefusal(t, w, c.status, c.detail)
		})
	}
}

// checkRefusal checks a refusal's status and its about:blank problem.
func checkRefusal(t *testing.T, w *httptest.ResponseRecorder, status int, detail string) {
	t.Helper()
	check(t, 1, w, want{status: status, ctype: "application/problem+json", policy: "-", limit: "-", retry: "-"})
	var p struct {
		Type, Title, Detail string
		Status              int
	}
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	if p.Type != "about:blank" || p.Title != http.StatusText(status) || p.Status != status || (detail != "" && p.Detail != detail) {
		t.Errorf("body %s", w.Body)
	}
}

func TestFailClosedAndNoLimits(t *testing.T) {
	closed := &fake{res: limitspec.Result{Result: goimpl.Result{RetryAfterMs: -1}, Side: limitspec.FailClosed}}
	w := serve(handler(t, closed, httplimit.Options{}), "192.0.2.1:1")
	check(t, 1, w, want{status: 503, policy: "-", limit: "-", retry: "-", ctype: "application/problem+json"})
	if !strings.Contains(w.Body.String(), "temporary-reduced-capacity") {
		t.Errorf("body %s", w.Body)
	}
	open := &fake{res: limitspec.Result{Result: goimpl.Result{Allowed: true}, Side: limitspec.FailOpen}}
	check(t, 2, serve(handler(t, open, httplimit.Options{LegacyHeaders: true}), "192.0.2.1:1"),
		want{status: 200, policy: "-", limit: "-", legacy: [3]string{"-", "-", "-"}})
}

func TestQuotaNames(t *testing.T) {
	r := goimpl.Result{Allowed: true, Limit: 1_000_000_000_000_000, Remaining: 7, ResetAfterMs: 500}
	f := &fake{res: limitspec.Result{Result: r, Limits: []limitspec.Quota{
		{Name: `a"b\c` + "\u00e9\n", Result: r},
		{Name: "", Window: time.Hour + time.Millisecond, Result: r},
	}}}
	check(t, 1, serve(handler(t, f, httplimit.Options{}), "192.0.2.1:1"), want{status: 200,
		policy: `"a\"b\\c???";q=999999999999999, "";q=999999999999999;w=3601`,
		limit:  `"a\"b\\c???";r=7;t=1, "";r=7;t=1`})
	check(t, 2, serve(handler(t, f, httplimit.Options{QuotaName: func(n string) string { return "api-" + strings.ToLower(n[:min(1, len(n))]) }}), "192.0.2.1:1"),
		want{status: 200, limit: `"api-a";r=7;t=1, "api-";r=7;t=1`})
}

func TestRequestFields(t *testing.T) {
	type ctxKey struct{}
	f := &fake{res: limitspec.Result{Result: goimpl.Result{Allowed: true}}}
	h := handler(t, f, httplimit.Options{
		Key:  httplimit.Join(httplimit.RemoteIP, httplimit.Route),
		IDs:  map[string]httplimit.KeyFunc{"ip": httplimit.RemoteIP, "user": httplimit.Header("x-user")},
		Cost: func(r *http.Request) (int64, error) { return 7, nil },
	})
	r := httptest.NewRequest(http.MethodPost, "/items/3", nil)
	r.RemoteAddr = "[::ffff:192.0.2.9]:5555"
	r.Header.Set("X-User", " alice ")
	r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, "mine"))
	h.ServeHTTP(httptest.NewRecorder(), r)
	got := fmt.Sprintf("%q %v %d", f.last.Key, f.last.IDs, f.last.Cost)
	if x := `"192.0.2.9|POST /items/3" map[ip:192.0.2.9 user:alice] 7`; got != x {
		t.Errorf("request %s, want %s", got, x)
	}
	if f.ctx.Value(ctxKey{}) != "mine" {
		t.Error("the limiter did not get the request's context")
	}
}

func TestRoutePattern(t *testing.T) {
	f := &fake{res: limitspec.Result{Result: goimpl.Result{Allowed: true}}}
	m, err := httplimit.New(f, httplimit.Options{Key: httplimit.Route})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /items/{id}", m.Handler(ok))
	for _, path := range []string{"/items/1", "/items/2"} {
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
		if f.last.Key != "GET /items/{id}" {
			t.Errorf("%s: key %q, want the pattern", path, f.last.Key)
		}
	}
	// Around the whole mux, no pattern is known yet: method and path.
	plain := http.NewServeMux()
	plain.Handle("GET /items/{id}", ok)
	m.Handler(plain).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/items/1", nil))
	if f.last.Key != "GET /items/1" {
		t.Errorf("key %q, want GET /items/1", f.last.Key)
	}
}

func TestNew(t *testing.T) {
	if _, err := httplimit.New(nil, httplimit.Options{}); err == nil {
		t.Error("New accepted a nil limiter")
	}
	if _, err := httplimit.New(&fake{}, httplimit.Options{IDs: map[string]httplimit.KeyFunc{"ip": nil}}); err == nil {
		t.Error("New accepted a nil KeyFunc")
	}
}
