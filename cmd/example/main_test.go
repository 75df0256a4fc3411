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
// URL and the line that says where it listens and how it limits; the
// test's end stops it and checks that run returned nil.
func start(t *testing.T, args ...string) (base, listening string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), pw)
		pw.Close()
		done <- err
	}()
	lines := make(chan [2]string, 1)
	go func() { // reads every line, so that run never blocks on stdout
		tryLine := regexp.MustCompile(`^try: .*curl -si (http://[^/\s]+)/hello`)
		sc := bufio.NewScanner(pr)
		var first string
		for sc.Scan() {
			if first == "" {
				first = sc.Text()
			}
			if m := tryLine.FindStringSubmatch(sc.Text()); m != nil {
				lines <- [2]string{m[1], first}
			}
		}
	}()
	select {
	case l := <-lines:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
		})
		return l[0], l[1]
	case err := <-done:
		cancel()
		t.Fatalf("run returned before serving: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("no curl line within 10 s")
	}
	return "", ""
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
	base, line := start(t, "-burst", "3", "-rate", "1", "-period", "1m")
	checkListening(t, base, line, "in process")
	sendSteps(t, base, burst3)
}

// TestRedisWithFallback runs the service on a real Redis: the decisions
// are Redis's (the GCRA's key holds the client's state), until Redis is
// killed, when the local limiter, fresh, decides.
func TestRedisWithFallback(t *testing.T) {
	srv := redistest.StartServer(t)
	base, line := start(t, "-burst", "3", "-rate", "1", "-period", "1m", "-redis", srv.URL())
	checkListening(t, base, line, "on Redis "+srv.Addr()+", in process while it is unavailable")
	sendSteps(t, base, burst3)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	// The client's key, by the GCRA's rate and period (docs/semantics.md, "Keys").
	if keys, err := rdb.Keys(t.Context(), "*").Result(); err != nil || len(keys) != 1 || keys[0] != "{127.0.0.1}:gcra:1:60000" {
		t.Errorf("keys on Redis: %q, %v; want the client's GCRA key alone", keys, err)
	}
	srv.Kill()
	sendSteps(t, base, burst3[:1])
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
	} {
		if err := run(context.Background(), args, io.Discard); err == nil {
			t.Errorf("run %q: no error", args)
		}
	}
	var out strings.Builder
	if err := run(context.Background(), []string{"-h"}, &out); err != nil || !strings.Contains(out.String(), "-redis") {
		t.Errorf("-h: %v, usage %q", err, out.String())
	}
}
