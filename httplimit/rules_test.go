package httplimit_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/httplimit"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// odd is a limit of no generated package: no limiter can decide it.
type odd struct{}

func (odd) Algorithm() limitspec.Algorithm { return limitspec.Algorithm{Library: "odd", Name: "odd"} }
func (odd) Validate() error                { return nil }
func (odd) QuotaWindow() time.Duration     { return 0 }

// clusterLimiter is a Redis limiter on a Cluster client; New asks the
// cluster nothing, and its Check needs no server.
func clusterLimiter(t *testing.T) *redislimit.Limiter {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	l, err := redislimit.New(context.Background(), rdb, redislimit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestNewRefuses(t *testing.T) {
	ipUser, err := limitspec.IPUserPolicy()
	if err != nil {
		t.Fatal(err)
	}
	mem, cluster := at(t, 0), clusterLimiter(t)
	onCluster, err := fallback.New(cluster, mem, fallback.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var nilMemory *goimpl.Limiter
	ids := map[string]httplimit.KeyFunc{"ip": httplimit.RemoteIP, "user": httplimit.Header("X-User")}
	badGCRA := limitspec.GCRA{Burst: 1, Rate: 0, Period: time.Second}
	slots, err := limitspec.NewPolicy("slots", limitspec.PolicyLimit{Name: "in_flight", Identity: "ip", Limit: limitspec.Concurrency{Limit: 2}})
	if err != nil {
		t.Fatal(err)
	}
	const noHolds = "counts requests in flight, which only the holds of a holding policy count " +
		"(limitspec.NewPolicy(...).WithHolds(): each request holds its slot until its handler returns); " +
		"without holds it writes nothing and would admit every request"
	refuses(t, []refusal{
		{"an in-flight limit alone", mem, httplimit.Options{Limit: limitspec.Concurrency{Limit: 2}},
			"httplimit: misconfigured: Options: the limit concurrency " + noHolds},
		{"an in-flight limit in a policy without holds", mem, httplimit.Options{Policy: slots, IDs: ids},
			"httplimit: misconfigured: Options: the limit in_flight of the policy slots " + noHolds},
		{"a route's in-flight limit alone", mem, httplimit.Options{Mux: http.NewServeMux(), Routes: map[string]httplimit.Rule{"GET /x": {Limit: limitspec.Concurrency{Limit: 1}}}},
			`httplimit: misconfigured: the route "GET /x": the limit concurrency ` + noHolds},
		{"nil limiter", nil, httplimit.Options{Limit: fakeLimit}, "httplimit: misconfigured: no Limiter (a nil one was given)"},
		{"typed nil limiter", nilMemory, httplimit.Options{Limit: fakeLimit}, "httplimit: misconfigured: no Limiter (a nil one was given)"},
		{"no rule", mem, httplimit.Options{}, "httplimit: misconfigured: no rule: give Options a Limit, a Policy, Routes or Select"},
		{"a name alone", mem, httplimit.Options{Name: "per-ip"}, "httplimit: misconfigured: no rule: give Options a Limit, a Policy, Routes or Select"},
		{"limit and policy", mem, httplimit.Options{Limit: fakeLimit, Policy: ipUser, IDs: ids}, "httplimit: misconfigured: Options: give a Limit or a Policy, not both"},
		{"invalid limit", mem, httplimit.Options{Limit: badGCRA},
			"httplimit: misconfigured: Options: gcra: parameter rate must be an integer in [1, 1000000000000], got 0"},
		{"invalid limit, no Checker", &fake{}, httplimit.Options{Limit: badGCRA},
			"httplimit: misconfigured: Options: gcra: parameter rate must be an integer in [1, 1000000000000], got 0"},
		{"limit not linked in", mem, httplimit.Options{Limit: odd{}},
			"httplimit: misconfigured: Options: odd.odd: no decision of this algorithm is linked in (httplimit_test.odd is not a limit of a generated package)"},
		{"identity without KeyFunc", mem, httplimit.Options{Policy: ipUser, IDs: map[string]httplimit.KeyFunc{"ip": httplimit.RemoteIP}},
			`httplimit: misconfigured: Options: the policy ip_user counts the identity "user": give its KeyFunc in Options.IDs`},
		{"nil KeyFunc", mem, httplimit.Options{Policy: ipUser, IDs: map[string]httplimit.KeyFunc{"ip": httplimit.RemoteIP, "user": nil}},
			"httplimit: misconfigured: identity user: nil KeyFunc"},
		{"policy a Cluster refuses", cluster, httplimit.Options{Policy: ipUser, IDs: ids},
			"httplimit: misconfigured: Options: policy ip_user counts several identities or a constant ([ip user]), whose keys a Redis Cluster or Ring may place on different nodes"},
		{"policy a fallback's Cluster refuses", onCluster, httplimit.Options{Policy: ipUser, IDs: ids},
			"httplimit: misconfigured: Options: fallback: the primary limiter refuses it: policy ip_user counts several identities"},
		{"routes without Mux", mem, httplimit.Options{Routes: map[string]httplimit.Rule{"GET /x": {Limit: fakeLimit}}},
			"httplimit: misconfigured: Routes need Mux, the ServeMux that routes the requests, to find a request's route when the middleware wraps it"},
		{"route without a rule", mem, httplimit.Options{Mux: http.NewServeMux(), Routes: map[string]httplimit.Rule{"GET /x": {Name: "x"}}},
			`httplimit: misconfigured: the route "GET /x" has an empty rule: give it a Limit or a Policy`},
		{"route with an invalid limit", mem, httplimit.Options{Mux: http.NewServeMux(),
			Routes: map[string]httplimit.Rule{"GET /a": {Limit: fakeLimit}, "GET /b": {Limit: badGCRA}}},
			`httplimit: misconfigured: the route "GET /b": gcra: parameter rate must be an integer in [1, 1000000000000], got 0`},
		{"route's policy without KeyFunc", mem, httplimit.Options{Mux: http.NewServeMux(), Routes: map[string]httplimit.Rule{"GET /x": {Policy: ipUser}}},
			`httplimit: misconfigured: the route "GET /x": the policy ip_user counts the identity "ip": give its KeyFunc in Options.IDs`},
		{"a policy named", mem, httplimit.Options{Policy: ipUser, IDs: ids, Name: "per-user"},
			`httplimit: misconfigured: Options: Name "per-user" names a Limit's quota; a policy's quotas are named by its limits`},
		{"a route's policy named", mem, httplimit.Options{Mux: http.NewServeMux(), IDs: ids,
			Routes: map[string]httplimit.Rule{"GET /x": {Policy: ipUser, Name: "x"}}},
			`httplimit: misconfigured: the route "GET /x": Name "x" names a Limit's quota; a policy's quotas are named by its limits`},
		{"zero policy, no Checker", &fake{}, httplimit.Options{Policy: &limitspec.Policy{}},
			"httplimit: misconfigured: Options: the Policy is a zero one: make it with limitspec.NewPolicy"},
		{"route with an empty pattern", mem, httplimit.Options{Mux: http.NewServeMux(), Routes: map[string]httplimit.Rule{"": {Limit: fakeLimit}}},
			`httplimit: misconfigured: a route has an empty pattern: give the ServeMux pattern it is for ("GET /items/{id}")`},
		{"route with a malformed pattern", mem, httplimit.Options{Mux: http.NewServeMux(), Routes: map[string]httplimit.Rule{"GET /items/{id": {Limit: fakeLimit}}},
			`httplimit: misconfigured: the route "GET /items/{id" is not a ServeMux pattern: parsing "GET /items/{id": at offset 11: bad wildcard segment`},
		{"route without a path", mem, httplimit.Options{Mux: http.NewServeMux(), Routes: map[string]httplimit.Rule{"GET items": {Limit: fakeLimit}}},
			`httplimit: misconfigured: the route "GET items" is not a ServeMux pattern: parsing "GET items": at offset 4: host/path missing /`},
	})
}

// TestNewRefusesFields: Fields that could not be sent, or would clobber
// a field the middleware sets itself.
func TestNewRefusesFields(t *testing.T) {
	mem := at(t, 0)
	refuses(t, []refusal{
		{"fields half given", mem, httplimit.Options{Limit: fakeLimit, Fields: httplimit.Fields{Policy: "Quota-Policy", Limit: "Quota"}},
			"httplimit: misconfigured: Options.Fields.Quota is empty: give every name (or none, for Draft11)"},
		{"field name not a token", mem, httplimit.Options{Limit: fakeLimit, Fields: fields(func(f *httplimit.Fields) { f.Limit = "Rate Limit" })},
			`httplimit: misconfigured: Options.Fields.Limit "Rate Limit" is not an HTTP field name`},
		{"parameter not a key", mem, httplimit.Options{Limit: fakeLimit, Fields: fields(func(f *httplimit.Fields) { f.Remaining = "R" })},
			`httplimit: misconfigured: Options.Fields.Remaining "R" is not a Structured Field parameter key (a-z, 0-9, _, -, ., *; starting with a-z or *)`},
		{"one field twice", mem, httplimit.Options{Limit: fakeLimit, Fields: fields(func(f *httplimit.Fields) { f.Limit = "ratelimit-policy" })},
			"httplimit: misconfigured: Options.Fields.Policy and Fields.Limit name one field, ratelimit-policy"},
		{"one parameter twice", mem, httplimit.Options{Limit: fakeLimit, Fields: fields(func(f *httplimit.Fields) { f.Reset = "r" })},
			"httplimit: misconfigured: Options.Fields: two parameters of one field have one name"},
		{"a field the middleware sets", mem, httplimit.Options{Limit: fakeLimit, Fields: fields(func(f *httplimit.Fields) { f.Limit = "retry-after" })},
			"httplimit: misconfigured: Options.Fields: Retry-After is a field the middleware sets itself"},
		{"a legacy field", mem, httplimit.Options{Limit: fakeLimit, Fields: fields(func(f *httplimit.Fields) { f.Policy = "X-RateLimit-Limit" })},
			"httplimit: misconfigured: Options.Fields: X-RateLimit-Limit is a field the middleware sets itself"},
	})
}

// refusal is options New must refuse, and the beginning of its error.
type refusal struct {
	name string
	l    limitspec.Limiter
	opts httplimit.Options
	err  string
}

func refuses(t *testing.T, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		m, err := httplimit.New(c.l, c.opts)
		if m != nil || err == nil || !strings.HasPrefix(err.Error(), c.err) || !errors.Is(err, limitspec.ErrMisconfigured) {
			t.Errorf("%s: New: %v, %v; want no middleware and the error %q, matching ErrMisconfigured", c.name, m, err, c.err)
		}
	}
}

// fields are Draft11's, changed by f.
func fields(f func(*httplimit.Fields)) httplimit.Fields {
	x := httplimit.Draft11
	f(&x)
	return x
}

// step is one request of a sequence and its expected response.
type step struct {
	method, path string
	want         want
}

func run(t *testing.T, h http.Handler, steps []step, hdr ...string) {
	t.Helper()
	for i, s := range steps {
		check(t, i+1, send(h, s.method, s.path, "192.0.2.1:1", hdr...), s.want)
	}
}

// TestRoutes: each route its rule, by the ServeMux pattern, with the
// middleware around the whole mux (it asks Mux) or inside it (it reads
// Request.Pattern); the others the default. Decided at 42.5 s into an
// hour: a minute's window ends in 17.5 s (t=18), the hour's in 3557.5 s
// (t=3558). upload's GCRA (burst 1, 1 per 10 s) is whole 10 s after an
// admission. The limits differ in their durations, so none shares
// another's state for one client.
func TestRoutes(t *testing.T) {
	routes := map[string]httplimit.Rule{
		"GET /items/{id}": {Limit: limitspec.FixedWindow{Limit: 2, Window: time.Minute}, Name: "items"},
		"POST /upload":    {Limit: limitspec.GCRA{Burst: 1, Rate: 1, Period: 10 * time.Second}, Name: "upload"},
	}
	site := limitspec.FixedWindow{Limit: 5, Window: time.Hour}
	const items, upload, sitePolicy = `"items";q=2;w=60`, `"upload";q=1;w=10`, `"site";q=5;w=3600`
	steps := []step{
		{"GET", "/items/1", want{status: 200, policy: items, limit: `"items";r=1;t=18`}},
		{"GET", "/items/2", want{status: 200, policy: items, limit: `"items";r=0;t=18`}},
		{"GET", "/items/3", want{status: 429, policy: items, limit: `"items";r=0;t=18`, retry: "18"}},
		{"POST", "/upload", want{status: 200, policy: upload, limit: `"upload";r=0;t=10`}},
		{"POST", "/upload", want{status: 429, policy: upload, limit: `"upload";r=0;t=10`, retry: "10"}},
		{"GET", "/health", want{status: 200, policy: sitePolicy, limit: `"site";r=4;t=3558`}},
		{"GET", "/health", want{status: 200, policy: sitePolicy, limit: `"site";r=3;t=3558`}},
	}
	opts := func(mux *http.ServeMux) httplimit.Options {
		return httplimit.Options{Limit: site, Name: "site", Routes: routes, Mux: mux}
	}
	t.Run("around the mux", func(t *testing.T) {
		mux := http.NewServeMux()
		for _, p := range []string{"GET /items/{id}", "POST /upload", "GET /health"} {
			mux.Handle(p, ok)
		}
		h := mustNew(t, at(t, 42_500), opts(mux)).Handler(mux)
		run(t, h, append(steps,
			// No route: the mux's 404, under the default rule.
			step{"GET", "/nowhere", want{status: 404, policy: sitePolicy, limit: `"site";r=2;t=3558`}}))
	})
	t.Run("inside the mux", func(t *testing.T) {
		mux := http.NewServeMux()
		m := mustNew(t, at(t, 42_500), opts(mux))
		for _, p := range []string{"GET /items/{id}", "POST /upload", "GET /health"} {
			mux.Handle(p, m.Handler(ok))
		}
		run(t, mux, append(steps,
			// No route: the mux's 404, which the middleware never sees.
			step{"GET", "/nowhere", want{status: 404, policy: "-", limit: "-"}}))
	})
}

// plans is a Select by the X-Plan header: a GCRA of burst 3 at 1 a
// second for "pro" (q=3, w=3; 2 left after one, whole again in 1 s), a
// fixed window of 1 a minute for "free", nothing of its own for
// "internal" (left to the default), mistakes of the server's for
// "broken" and "both", and a 401 without the header.
func plans(r *http.Request) (httplimit.Rule, error) {
	switch r.Header.Get("X-Plan") {
	case "pro":
		return httplimit.Rule{Limit: limitspec.GCRA{Burst: 3, Rate: 1, Period: time.Second}, Name: "pro"}, nil
	case "free":
		return httplimit.Rule{Limit: limitspec.FixedWindow{Limit: 1, Window: time.Minute}, Name: "free"}, nil
	case "internal":
		return httplimit.Rule{}, nil
	case "broken":
		return httplimit.Rule{Limit: limitspec.GCRA{Rate: 1, Period: time.Second}}, nil
	case "both":
		p, err := limitspec.BurstQuotaPolicy(100)
		return httplimit.Rule{Limit: limitspec.GCRA{Burst: 1, Rate: 1, Period: time.Second}, Policy: p}, err
	}
	return httplimit.Rule{}, &httplimit.Error{Status: http.StatusUnauthorized, Detail: "missing X-Plan"}
}

// TestSelect: Select chooses each request's rule; a zero Rule leaves it
// to the default; a rule that cannot be decided is the server's 500. At
// 42.5 s into an hour, as in TestRoutes.
func TestSelect(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("GET /hello", ok)
	var patterns []string
	m := mustNew(t, at(t, 42_500), httplimit.Options{
		Limit: limitspec.FixedWindow{Limit: 100, Window: time.Hour}, Name: "default", Mux: mux,
		Select: func(r *http.Request) (httplimit.Rule, error) {
			patterns = append(patterns, r.Pattern)
			return plans(r)
		}})
	h := m.Handler(mux)
	for _, c := range []struct {
		plan string
		want want
	}{
		{"pro", want{status: 200, policy: `"pro";q=3;w=3`, limit: `"pro";r=2;t=1`}},
		{"free", want{status: 200, policy: `"free";q=1;w=60`, limit: `"free";r=0;t=18`}},
		{"free", want{status: 429, policy: `"free";q=1;w=60`, limit: `"free";r=0;t=18`, retry: "18"}},
		{"internal", want{status: 200, policy: `"default";q=100;w=3600`, limit: `"default";r=99;t=3558`}},
	} {
		check(t, len(patterns)+1, send(h, "GET", "/hello", "192.0.2.1:1", "X-Plan", c.plan), c.want)
	}
	checkRefusal(t, send(h, "GET", "/hello", "192.0.2.1:1"), 401, "missing X-Plan")
	for _, plan := range []string{"broken", "both"} {
		checkRefusal(t, send(h, "GET", "/hello", "192.0.2.1:1", "X-Plan", plan), 500, "the request's rate limit could not be chosen")
	}
	// Select saw, at each of the 7 requests, the pattern the mux routes
	// to, though it runs before the mux.
	if got := strings.Join(patterns, ","); got != strings.Repeat("GET /hello,", 6)+"GET /hello" {
		t.Errorf("Select saw the patterns %q", got)
	}
}
