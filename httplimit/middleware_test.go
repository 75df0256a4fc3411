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
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/httplimit"
)

// hourStart is the start of an hour (and so of a minute and a second),
// in ms since the epoch: 472222 hours.
const hourStart = 1_699_999_200_000

// at is an in-process limiter whose clock stands still at hourStart + ms,
// so that expected header values are exact.
func at(t testing.TB, ms int64) *goimpl.Limiter {
	t.Helper()
	now := time.UnixMilli(hourStart + ms)
	l, err := goimpl.New(goimpl.Options{NoSweeper: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// threePerMinute is a fixed window of 3 per 60 s. Decided at hourStart +
// 42.5 s (at(t, 42_500)), each window ends 17.5 s later: t=18.
var threePerMinute = limitspec.FixedWindow{Limit: 3, Window: time.Minute}

// fakeLimit is the rule of the fakes: valid, of a 1.5 s window (w=2).
var fakeLimit = limitspec.FixedWindow{Limit: 5, Window: 1500 * time.Millisecond}

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

// ok is the wrapped handler: 200 "ok".
var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })

// serve sends one GET /x from remote with the header pairs hdr.
func serve(h http.Handler, remote string, hdr ...string) *httptest.ResponseRecorder {
	return send(h, http.MethodGet, "/x", remote, hdr...)
}

// send sends one request from remote with the header pairs hdr.
func send(h http.Handler, method, path, remote string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	r.RemoteAddr = remote
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func mustNew(t *testing.T, l limitspec.Limiter, opts httplimit.Options) *httplimit.Middleware {
	t.Helper()
	m, err := httplimit.New(l, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func handler(t *testing.T, l limitspec.Limiter, opts httplimit.Options) http.Handler {
	t.Helper()
	return mustNew(t, l, opts).Handler(ok)
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
		checkField(t, i, w.Header(), f.name, f.want)
	}
}

// checkField checks one field: "-" absent, "" unchecked, else one line
// equal to want.
func checkField(t *testing.T, i int, h http.Header, name, want string) {
	t.Helper()
	got := h.Values(name)
	switch {
	case want == "-" && len(got) > 0:
		t.Errorf("request %d: %s: %q, want none", i, name, got)
	case want != "" && want != "-" && (len(got) != 1 || got[0] != want):
		t.Errorf("request %d: %s: %q, want %q", i, name, got, want)
	}
}

func TestFixedWindowHeaders(t *testing.T) {
	h := handler(t, at(t, 42_500), httplimit.Options{Limit: threePerMinute})
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
	h := handler(t, at(t, 42_500), httplimit.Options{Limit: threePerMinute, Name: "per-ip"})
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
	p, err := limitspec.IPUserPolicy()
	if err != nil {
		t.Fatal(err)
	}
	// 1234.567 s into the hour: the second ends in 433 ms, the minute in
	// 25.433 s, the hour in 2365.433 s.
	h := handler(t, at(t, 1_234_567), httplimit.Options{Policy: p, IDs: map[string]httplimit.KeyFunc{
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
	// Without the user's header: refused before any decision.
	checkRefusal(t, serve(h, "192.0.2.1:1"), 400, "missing header X-User")
}

// TestPolicyLegacyHeaders: the X-RateLimit-* fields are the binding
// limit's, wherever it is in the policy. Ten requests by one user from
// ten IPs spend user_second (10 a second); the eleventh, from a fresh IP,
// is denied by it, the fourth limit: 10, 0 left, whole again when the
// second ends in 433 ms. A result whose Binding is out of range (a
// limiter of one's own) gets the first limit's, not a panic.
func TestPolicyLegacyHeaders(t *testing.T) {
	p, err := limitspec.IPUserPolicy()
	if err != nil {
		t.Fatal(err)
	}
	h := handler(t, at(t, 1_234_567), httplimit.Options{Policy: p, LegacyHeaders: true, IDs: map[string]httplimit.KeyFunc{
		"ip": httplimit.RemoteIP, "user": httplimit.Header("X-User"),
	}})
	for i := 1; i <= 10; i++ {
		check(t, i, serve(h, fmt.Sprintf("192.0.2.%d:1", i), "X-User", "u1"), want{status: 200})
	}
	check(t, 11, serve(h, "192.0.2.11:1", "X-User", "u1"), want{status: 429, retry: "1", legacy: [3]string{"10", "0", "1"}})

	r := limitspec.LimitResult{Name: "q", Limit: fakeLimit, Allowed: true, Quota: 5, Remaining: 4, ResetAfter: time.Second}
	f := &fake{res: limitspec.Result{Allowed: true, Binding: 7, Limits: []limitspec.LimitResult{r}}}
	check(t, 12, serve(handler(t, f, httplimit.Options{Limit: fakeLimit, LegacyHeaders: true}), "192.0.2.1:1"),
		want{status: 200, legacy: [3]string{"5", "4", "1"}})
}

// denial is a fake's denial after d, of one limit "q" with 0 remaining,
// whole again in 1001 ms.
func denial(d time.Duration) limitspec.Result {
	return limitspec.Result{RetryAfter: d, Limits: []limitspec.LimitResult{
		{Name: "q", Limit: fakeLimit, Quota: 5, RetryAfter: d, ResetAfter: 1001 * time.Millisecond}}}
}

func TestRetryAfterRounding(t *testing.T) {
	for _, c := range []struct {
		wait  time.Duration
		retry string
	}{
		{0, "0"}, {time.Millisecond, "1"}, {999 * time.Millisecond, "1"}, {time.Second, "1"},
		{1001 * time.Millisecond, "2"}, {59_999 * time.Millisecond, "60"}, {limitspec.Never, "-"},
	} {
		w := serve(handler(t, &fake{res: denial(c.wait)}, httplimit.Options{Limit: fakeLimit}), "192.0.2.1:1")
		check(t, int(c.wait/time.Millisecond), w, want{status: 429, retry: c.retry, policy: `"q";q=5;w=2`, limit: `"q";r=0;t=2`})
	}
}

func TestNeverAdmitted(t *testing.T) {
	// A cost of 4 can never pass a limit of 3: 429 without Retry-After.
	h := handler(t, at(t, 42_500), httplimit.Options{Limit: threePerMinute, Cost: func(*http.Request) (int64, error) { return 4, nil }})
	w := serve(h, "192.0.2.1:1")
	check(t, 1, w, want{status: 429, retry: "-", limit: `"fixed_window";r=3;t=0`})
	if !strings.Contains(w.Body.String(), "never be admitted") {
		t.Errorf("body %s", w.Body)
	}
}

func TestLegacyHeaders(t *testing.T) {
	h := handler(t, at(t, 42_500), httplimit.Options{Limit: threePerMinute, LegacyHeaders: true})
	for i, legacy := range [][3]string{{"3", "2", "18"}, {"3", "1", "18"}, {"3", "0", "18"}, {"3", "0", "18"}} {
		check(t, i+1, serve(h, "192.0.2.1:1"), want{status: []int{200, 200, 200, 429}[i], legacy: legacy})
	}
}

func TestDryRun(t *testing.T) {
	var allowed []bool
	h := handler(t, at(t, 42_500), httplimit.Options{Limit: threePerMinute, DryRun: true,
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

// errorCase is a request refused, or let through, for an error.
type errorCase struct {
	name   string
	l      limitspec.Limiter
	opts   httplimit.Options
	status int
	detail string
}

func errorCases(t *testing.T) []errorCase {
	unavailable := fmt.Errorf("dial: %w", limitspec.ErrUnavailable)
	misconfigured := fmt.Errorf("%w: the server holds another version of the library limitspec", limitspec.ErrMisconfigured)
	badInput := &limitspec.InputError{Msg: "gcra: key must not be empty"}
	failed := errors.New("lookup failed")
	o := func(f func(*httplimit.Options)) httplimit.Options {
		opts := httplimit.Options{Limit: fakeLimit}
		f(&opts)
		return opts
	}
	missingKey := func(o *httplimit.Options) { o.Key = httplimit.Header("X-API-Key") }
	return []errorCase{
		{"unavailable", &fake{err: unavailable}, o(func(*httplimit.Options) {}), 503, "The rate limiter is unavailable."},
		{"unavailable, fail open", &fake{err: unavailable}, o(func(o *httplimit.Options) { o.FailOpen = true }), 200, ""},
		{"unavailable, dry run", &fake{err: unavailable}, o(func(o *httplimit.Options) { o.DryRun = true }), 200, ""},
		{"bad state", &fake{err: limitspec.ErrBadState}, o(func(*httplimit.Options) {}), 503, "The rate limiter is unavailable."},
		{"misconfigured", &fake{err: misconfigured}, o(func(*httplimit.Options) {}), 500, "The rate limiter is misconfigured."},
		{"misconfigured, fail open", &fake{err: misconfigured}, o(func(o *httplimit.Options) { o.FailOpen = true }), 500, "The rate limiter is misconfigured."},
		{"misconfigured, dry run", &fake{err: misconfigured}, o(func(o *httplimit.Options) { o.DryRun = true }), 200, ""},
		{"bad input", &fake{err: badInput}, o(func(*httplimit.Options) {}), 400, "The rate limiter refused the request: gcra: key must not be empty"},
		{"bad input, fail open", &fake{err: badInput}, o(func(o *httplimit.Options) { o.FailOpen = true }), 400, ""},
		{"empty key", at(t, 0), httplimit.Options{Limit: threePerMinute, Key: func(*http.Request) (string, error) { return "", nil }},
			400, "The rate limiter refused the request: fixed_window: key must not be empty"},
		{"missing header", &fake{}, o(missingKey), 400, "missing header X-Api-Key"},
		{"missing header, fail open", &fake{}, o(func(o *httplimit.Options) { missingKey(o); o.FailOpen = true }), 400, ""},
		{"missing header, dry run", &fake{}, o(func(o *httplimit.Options) { missingKey(o); o.DryRun = true }), 200, ""},
		{"key func error", &fake{}, o(func(o *httplimit.Options) { o.Key = func(*http.Request) (string, error) { return "", failed } }),
			500, "the request's rate-limit key or cost could not be computed"},
		{"key func *Error", &fake{}, o(func(o *httplimit.Options) {
			o.Key = func(*http.Request) (string, error) {
				return "", &httplimit.Error{Status: 403, Detail: "unknown tenant"}
			}
		}), 403, "unknown tenant"},
		{"key func *Error of no error's status", &fake{}, o(func(o *httplimit.Options) {
			o.Key = func(*http.Request) (string, error) { return "", &httplimit.Error{Status: 200, Detail: "not a refusal"} }
		}), 500, "not a refusal"},
		{"key func *Error of a status net/http refuses", &fake{}, o(func(o *httplimit.Options) {
			o.Key = func(*http.Request) (string, error) { return "", &httplimit.Error{Status: 42, Detail: "no such status"} }
		}), 500, "no such status"},
		{"Join of no KeyFunc", &fake{}, o(func(o *httplimit.Options) { o.Key = httplimit.Join() }),
			500, "the request's rate-limit key or cost could not be computed"},
		{"cost error", &fake{}, o(func(o *httplimit.Options) {
			o.Cost = func(*http.Request) (int64, error) { return 0, &httplimit.Error{Detail: "bad size"} }
		}), 400, "bad size"},
		{"bad RemoteAddr", &fake{}, o(func(*httplimit.Options) {}), 500, "the client's address could not be read"},
	}
}

func TestErrors(t *testing.T) {
	for _, c := range errorCases(t) {
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
				if w.Body.String() != "ok" {
					t.Errorf("body %q: the handler did not run", w.Body)
				}
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
		t.Errorf("body %s, want status %d and detail %q", w.Body, status, detail)
	}
}

// down is a primary whose Redis cannot be reached.
type down struct{}

func (down) Limit(context.Context, limitspec.Request) (limitspec.Result, error) {
	return limitspec.Result{}, fmt.Errorf("%w: connection refused", limitspec.ErrUnavailable)
}

func TestFailClosedAndNoLimits(t *testing.T) {
	// A fallback failing closed, its breaker opened by the first failure
	// for 30 s, on a clock that stands still: retry in 30 s.
	now := time.UnixMilli(hourStart)
	closed, err := fallback.New(down{}, nil, fallback.Options{Mode: fallback.FailClosed, Failures: 1, OpenFor: 30 * time.Second,
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		l     limitspec.Limiter
		retry string
	}{
		{closed, "30"},
		{&fake{res: limitspec.Result{RetryAfter: 1500 * time.Millisecond, Side: limitspec.FailClosed}}, "2"},
		{&fake{res: limitspec.Result{Side: limitspec.FailClosed}}, "-"},
	} {
		w := serve(handler(t, c.l, httplimit.Options{Limit: threePerMinute, LegacyHeaders: true}), "192.0.2.1:1")
		check(t, i+1, w, want{status: 503, policy: "-", limit: "-", retry: c.retry, ctype: "application/problem+json",
			legacy: [3]string{"-", "-", "-"}})
		if !strings.Contains(w.Body.String(), `"type":"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"`) {
			t.Errorf("request %d: body %s", i+1, w.Body)
		}
	}
	open, err := fallback.New(down{}, nil, fallback.Options{Mode: fallback.FailOpen})
	if err != nil {
		t.Fatal(err)
	}
	w := serve(handler(t, open, httplimit.Options{Limit: threePerMinute, LegacyHeaders: true}), "192.0.2.1:1")
	check(t, 4, w, want{status: 200, policy: "-", limit: "-", legacy: [3]string{"-", "-", "-"}})
}

func TestQuotaNames(t *testing.T) {
	r := limitspec.LimitResult{Allowed: true, Quota: 1_000_000_000_000_000, Remaining: 7, ResetAfter: 500 * time.Millisecond}
	named, long := r, r
	named.Name = `a"b\c` + "\u00e9\n" // no window: no w
	long.Limit = limitspec.FixedWindow{Limit: 1, Window: time.Hour + time.Millisecond}
	f := &fake{res: limitspec.Result{Allowed: true, Limits: []limitspec.LimitResult{named, long}}}
	check(t, 1, serve(handler(t, f, httplimit.Options{Limit: fakeLimit}), "192.0.2.1:1"), want{status: 200,
		policy: `"a\"b\\c???";q=999999999999999, "";q=999999999999999;w=3601`,
		limit:  `"a\"b\\c???";r=7;t=1, "";r=7;t=1`})
	lower := func(n string) string { return "api-" + strings.ToLower(n[:min(1, len(n))]) }
	check(t, 2, serve(handler(t, f, httplimit.Options{Limit: fakeLimit, QuotaName: lower}), "192.0.2.1:1"),
		want{status: 200, limit: `"api-a";r=7;t=1, "api-";r=7;t=1`})
	// A rule's Name names its limit's results, before QuotaName.
	check(t, 3, serve(handler(t, f, httplimit.Options{Limit: fakeLimit, Name: "Per-IP", QuotaName: lower}), "192.0.2.1:1"),
		want{status: 200, limit: `"api-p";r=7;t=1, "api-p";r=7;t=1`})
}

func TestRequestFields(t *testing.T) {
	type ctxKey struct{}
	ipUser, err := limitspec.IPUserPolicy()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]httplimit.KeyFunc{"ip": httplimit.RemoteIP, "user": httplimit.Header("x-user"), "tenant": httplimit.Header("X-Tenant")}
	cost := func(r *http.Request) (int64, error) { return 7, nil }
	for _, c := range []struct {
		opts httplimit.Options
		want limitspec.Request
	}{
		// A Limit counts the Key; IDs are for policies.
		{httplimit.Options{Limit: fakeLimit, Key: httplimit.Join(httplimit.RemoteIP, httplimit.Route), IDs: ids, Cost: cost},
			limitspec.Request{Key: "192.0.2.9|POST /items/3", Limit: fakeLimit, Cost: 7}},
		// A policy counts its own identities, and no Key.
		{httplimit.Options{Policy: ipUser, Key: httplimit.Join(httplimit.RemoteIP, httplimit.Route), IDs: ids},
			limitspec.Request{Policy: ipUser, IDs: map[string]string{"ip": "192.0.2.9", "user": "alice"}, Cost: 1}},
	} {
		f := &fake{res: limitspec.Result{Allowed: true}}
		r := httptest.NewRequest(http.MethodPost, "/items/3", nil)
		r.RemoteAddr = "[::ffff:192.0.2.9]:5555"
		r.Header.Set("X-User", " alice ")
		r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, "mine"))
		handler(t, f, c.opts).ServeHTTP(httptest.NewRecorder(), r)
		if got, x := fmt.Sprintf("%+v", f.last), fmt.Sprintf("%+v", c.want); got != x || f.last.Policy != c.want.Policy {
			t.Errorf("request %s, want %s", got, x)
		}
		if f.ctx.Value(ctxKey{}) != "mine" {
			t.Error("the limiter did not get the request's context")
		}
	}
}

func TestRoutePattern(t *testing.T) {
	f := &fake{res: limitspec.Result{Allowed: true}}
	inside := mustNew(t, f, httplimit.Options{Limit: fakeLimit, Key: httplimit.Route})
	mux := http.NewServeMux()
	mux.Handle("GET /items/{id}", inside.Handler(ok))
	for _, path := range []string{"/items/1", "/items/2"} {
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
		if f.last.Key != "GET /items/{id}" {
			t.Errorf("inside the mux, %s: key %q, want the pattern", path, f.last.Key)
		}
	}
	// Around the whole mux, no pattern is known yet: method and path...
	plain := http.NewServeMux()
	plain.Handle("GET /items/{id}", ok)
	inside.Handler(plain).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/items/1", nil))
	if f.last.Key != "GET /items/1" {
		t.Errorf("around the mux: key %q, want GET /items/1", f.last.Key)
	}
	// ... unless the middleware is given the mux, which tells it; and
	// OnDecision sees the request as the KeyFuncs did.
	var seen string
	around := mustNew(t, f, httplimit.Options{Limit: fakeLimit, Key: httplimit.Route, Mux: plain,
		OnDecision: func(r *http.Request, _ limitspec.Result, _ error) { seen = r.Pattern }})
	w := httptest.NewRecorder()
	around.Handler(plain).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/items/1", nil))
	if f.last.Key != "GET /items/{id}" || seen != "GET /items/{id}" || w.Body.String() != "ok" {
		t.Errorf("around the mux, with Mux: key %q, OnDecision's pattern %q, body %q; want the pattern twice, ok", f.last.Key, seen, w.Body)
	}
}
