package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// start runs the service with args on a free port and returns its base
// URL and the lines it printed before the curl command, the first of
// which says where it listens and how it limits; the test's end stops it
// and checks that run returned nil.
func start(t *testing.T, args ...string) (base string, lines []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), pw)
		pw.Close()
		done <- err
	}()
	type printed struct {
		base  string
		lines []string
	}
	announced := make(chan printed, 1)
	go func() { // reads every line, so that run never blocks on stdout
		tryLine := regexp.MustCompile(`^try: .*curl -si (http://[^/\s]+)/hello`)
		sc := bufio.NewScanner(pr)
		var before []string
		for sc.Scan() {
			if m := tryLine.FindStringSubmatch(sc.Text()); m != nil {
				announced <- printed{m[1], before}
			}
			before = append(before, sc.Text())
		}
	}()
	select {
	case p := <-announced:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
		})
		if len(p.lines) == 0 {
			t.Fatal("no line before the curl line")
		}
		return p.base, p.lines
	case err := <-done:
		cancel()
		t.Fatalf("run returned before serving: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("no curl line within 10 s")
	}
	return "", nil
}

// checkListening checks the line that says how the service limits.
func checkListening(t *testing.T, base, line, where string) {
	t.Helper()
	want := "listening on " + base + ": per client IP, 3 at once, then 1 per 1m0s (gcra, " + where + ")"
	if line != want {
		t.Errorf("first line %q, want %q", line, want)
	}
}

// step is one expected response.
type step struct {
	status                int
	rateLimit, retryAfter string
}

// burst3 is the service's answers to 4 requests at once with -burst 3
// -rate 1 -period 1m: w = 3 × 60 s; each admission pushes the reset 60 s
// further; the 4th waits 60 s for the first cell to drain.
var burst3 = []step{
	{200, `"gcra";r=2;t=60`, ""},
	{200, `"gcra";r=1;t=120`, ""},
	{200, `"gcra";r=0;t=180`, ""},
	{429, `"gcra";r=0;t=180`, "60"},
}

// sendSteps sends one GET /hello per step (all within a second, which the
// expected t values assume) and checks each response.
func sendSteps(t *testing.T, base string, steps []step) {
	t.Helper()
	for i, s := range steps {
		resp, err := http.Get(base + "/hello")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode != s.status || h.Get("RateLimit-Policy") != `"gcra";q=3;w=180` ||
			h.Get("RateLimit") != s.rateLimit || h.Get("Retry-After") != s.retryAfter {
			t.Errorf("request %d: %d RateLimit-Policy %q RateLimit %q Retry-After %q; want %d %q %q",
				i+1, resp.StatusCode, h.Get("RateLimit-Policy"), h.Get("RateLimit"), h.Get("Retry-After"),
				s.status, s.rateLimit, s.retryAfter)
		}
		if s.status == 200 {
			if string(body) != "{\"message\":\"hello\"}\n" {
				t.Errorf("request %d: body %q", i+1, body)
			}
			continue
		}
		checkProblem(t, h.Get("Content-Type"), body)
	}
}

// checkProblem checks a 429's problem+json body.
func checkProblem(t *testing.T, ctype string, body []byte) {
	t.Helper()
	var p struct {
		Type, Title, Detail string
		Status              int
		Violated            []string `json:"violated-policies"`
	}
	if err := json.Unmarshal(body, &p); err != nil || ctype != "application/problem+json" {
		t.Fatalf("Content-Type %q, body %s: %v", ctype, body, err)
	}
	if p.Type != "https://iana.org/assignments/http-problem-types#quota-exceeded" || p.Status != 429 ||
		p.Title == "" || p.Detail != "Retry after 60 s." || len(p.Violated) != 1 || p.Violated[0] != "gcra" {
		t.Errorf("problem %+v", p)
	}
}

func TestInProcess(t *testing.T) {
	base, lines := start(t, "-burst", "3", "-rate", "1", "-period", "1m")
	checkListening(t, base, lines[0], "in process")
	sendSteps(t, base, burst3)
}

// TestRedisWithFallback runs the service on a real Redis: the decisions
// are Redis's (the GCRA's key holds the client's state), until Redis is
// killed, when the local limiter decides, started from what Redis last
// reported for the client (its burst spent): it denies as Redis did.
func TestRedisWithFallback(t *testing.T) {
	srv := redistest.StartServer(t)
	base, lines := start(t, "-burst", "3", "-rate", "1", "-period", "1m", "-redis", srv.URL())
	checkListening(t, base, lines[0], "on Redis "+srv.Addr()+", in process while it is unavailable")
	sendSteps(t, base, burst3)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	// The client's key, by the GCRA's rate and period (docs/semantics.md, "Keys").
	if keys, err := rdb.Keys(t.Context(), "*").Result(); err != nil || len(keys) != 1 || keys[0] != "{127.0.0.1}:gc:1:60000" {
		t.Errorf("keys on Redis: %q, %v; want the client's GCRA key alone", keys, err)
	}
	srv.Kill()
	sendSteps(t, base, burst3[3:])
}

// TestRedisWithLeases: with -lease 2, the first request takes 2 from
// Redis's burst of 3 (the GCRA whole again in 120 s) and the second is
// decided from the lease, without Redis; the third finds 1 left, is
// denied a lease and is decided alone, as the fourth (denied). The
// metrics count one lease granted, one denied, two requests sent alone:
// four decisions of Redis.
func TestRedisWithLeases(t *testing.T) {
	srv := redistest.StartServer(t)
	base, lines := start(t, "-burst", "3", "-rate", "1", "-period", "1m", "-redis", srv.URL(), "-lease", "2", "-metrics", "127.0.0.1:0")
	checkListening(t, base, lines[0], "on Redis "+srv.Addr()+", in process while it is unavailable, from leases of 2")
	sendSteps(t, base, []step{
		{200, `"gcra";r=2;t=120`, ""},
		{200, `"gcra";r=1;t=120`, ""},
		{200, `"gcra";r=0;t=180`, ""},
		{429, `"gcra";r=0;t=180`, "60"},
	})
	samples := scrape(t, strings.TrimPrefix(lines[1], "metrics: "))
	for series, want := range map[string]string{
		`limitspec_lease_requests_total{limiter="hello",outcome="granted"}`: "1",
		`limitspec_lease_requests_total{limiter="hello",outcome="denied"}`:  "1",
		`limitspec_lease_cost_total{limiter="hello",use="spent"}`:           "2",
		`limitspec_lease_direct_total{limiter="hello"}`:                     "2",
		`limitspec_decisions_total{limiter="hello",side="primary"}`:         "4",
	} {
		if got := samples[series]; got != want {
			t.Errorf("%s = %q, want %s", series, got, want)
		}
	}
}

func TestTrustedProxies(t *testing.T) {
	base, _ := start(t, "-burst", "3", "-rate", "1", "-period", "1m", "-trusted", "127.0.0.0/8")
	for _, client := range []string{"198.51.100.1", "198.51.100.2"} {
		req, _ := http.NewRequest(http.MethodGet, base+"/hello", nil)
		req.Header.Set("X-Forwarded-For", client)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("RateLimit"); got != `"gcra";r=2;t=60` {
			t.Errorf("client %s: RateLimit %q: each client has its own limit", client, got)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-burst", "0"}, {"-period", "1500us"}, {"-period", "0s"}, {"-trusted", "proxy.example"},
		{"-redis", "http://x"}, {"-addr", "256.0.0.1:0"}, {"extra"},
		{"-metrics", "127.0.0.1:0"},                       // without -redis
		{"-lease", "2"},                                   // without -redis
		{"-redis", "redis://127.0.0.1:1", "-lease", "-1"}, // refused before Redis is dialled
	} {
		if err := run(context.Background(), args, io.Discard); err == nil {
			t.Errorf("run %q: no error", args)
		}
	}
	var out strings.Builder
	if err := run(context.Background(), []string{"-h"}, &out); err != nil || !strings.Contains(out.String(), "-redis") || !strings.Contains(out.String(), "-metrics") {
		t.Errorf("-h: %v, usage %q", err, out.String())
	}
}

// TestMetrics runs the service on a real Redis with -metrics, makes a
// request, and reads the decision and the breaker's state on /metrics.
func TestMetrics(t *testing.T) {
	srv := redistest.StartServer(t)
	base, lines := start(t, "-redis", srv.URL(), "-metrics", "127.0.0.1:0")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "metrics: http://127.0.0.1:") || !strings.HasSuffix(lines[1], "/metrics") {
		t.Fatalf("lines %q; want the listening line, then the metrics URL", lines)
	}
	metricsURL := strings.TrimPrefix(lines[1], "metrics: ")
	resp, err := http.Get(base + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /hello: %s", resp.Status)
	}
	samples := scrape(t, metricsURL)
	for series, want := range map[string]string{
		`limitspec_decisions_total{limiter="hello",side="primary"}`:   "1",
		`limitspec_decisions_total{limiter="hello",side="fallback"}`:  "0",
		`limitspec_primary_errors_total{kind="down",limiter="hello"}`: "0",
		`limitspec_primary_errors_total{kind="slow",limiter="hello"}`: "0",
		`limitspec_errors_total{limiter="hello"}`:                     "0",
		`limitspec_breaker_opens_total{limiter="hello"}`:              "0",
		`limitspec_breaker_state{limiter="hello"}`:                    "0",
	} {
		if got, ok := samples[series]; !ok || got != want {
			t.Errorf("%s = %q (present %v), want %s", series, got, ok, want)
		}
	}
	if resp, err := http.Post(metricsURL, "text/plain", nil); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %v, %v; want 405", resp, err)
	}
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-redis", srv.URL(), "-metrics", "256.0.0.1:0"}, io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "-metrics: ") {
		t.Errorf("-metrics 256.0.0.1:0: %v", err)
	}
}

// scrape GETs url, checks that it is in the Prometheus text format, and
// returns its samples' values by series (name and labels as written).
func scrape(t *testing.T, url string) map[string]string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("GET %s: %s, Content-Type %q", url, resp.Status, ct)
	}
	samples := map[string]string{}
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			i := strings.LastIndexByte(line, ' ')
			samples[line[:i]] = line[i+1:]
		}
	}
	return samples
}
