package limitspec_test

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/httplimit"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// mdBlock is a code block of the README or of a page of docs/.
type mdBlock struct{ file, code string }

// readmeBlocks returns the code blocks of language lang (go, yaml) of
// the README and of every page of docs/, where the code a reader sees
// is.
func readmeBlocks(t *testing.T, lang string) []mdBlock {
	t.Helper()
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```")
	var blocks []mdBlock
	for _, f := range append([]string{"README.md"}, files...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			blocks = append(blocks, mdBlock{f, m[1]})
		}
	}
	return blocks
}

// TestReadmeGoSnippets: every Go block of the README and of docs/*.md
// appears, word for word (whitespace aside), in a test file of the
// repository, so that the compiler checks it; the README's opening is
// Example's serve.
func TestReadmeGoSnippets(t *testing.T) {
	var tests strings.Builder
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			tests.WriteString(squash(string(b)) + " ")
			return err
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeBlocks(t, "go")
	if len(blocks) < 4 {
		t.Fatalf("the README and docs have %d Go blocks; want at least 4", len(blocks))
	}
	for _, b := range blocks {
		if !strings.Contains(tests.String(), squash(b.code)) {
			t.Errorf("this Go block of %s is in no test file, so nothing compiles it:\n%s", b.file, b.code)
		}
	}
}

// squash collapses every run of white space into one space.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestOpening runs the README's opening on a real Redis, at a held
// clock, and checks what the README says of it: the header fields of the
// first response, the 21st request at once denied with Retry-After 1,
// the key on Redis; then, Redis killed, the local fallback deciding.
func TestOpening(t *testing.T) {
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	defer rdb.Close()
	held := func() time.Time { return time.UnixMilli(1_700_000_000_000) }
	remote, err := redislimit.New(t.Context(), rdb, redislimit.Options{Now: held})
	if err != nil {
		t.Fatal(err)
	}
	local, err := goimpl.New(goimpl.Options{Now: held, NoSweeper: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	var sides []limitspec.Side
	limiter, err := fallback.New(remote, local, fallback.Options{})
	if err != nil {
		t.Fatal(err)
	}
	perIP := limitspec.GCRA{Burst: 20, Rate: 10, Period: time.Second}
	mw, err := httplimit.New(limiter, httplimit.Options{Limit: perIP,
		OnDecision: func(r *http.Request, res limitspec.Result, err error) { sides = append(sides, res.Side) }})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	defer hs.Close()
	get := func() *http.Response {
		resp, err := http.Get(hs.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	check := func(what string, resp *http.Response, status int, rateLimit, retryAfter string) {
		t.Helper()
		got := fmt.Sprintf("%d %s | %s | %s", resp.StatusCode, resp.Header.Get("RateLimit-Policy"), resp.Header.Get("RateLimit"), resp.Header.Get("Retry-After"))
		want := fmt.Sprintf("%d %s | %s | %s", status, `"gcra";q=20;w=2`, rateLimit, retryAfter)
		if got != want {
			t.Errorf("%s: %s; want %s", what, got, want)
		}
	}
	check("first request", get(), 200, `"gcra";r=19;t=1`, "")
	for range 19 {
		get()
	}
	check("21st request", get(), 429, `"gcra";r=0;t=2`, "1")
	if n := rdb.Exists(t.Context(), "{127.0.0.1}:gc:10:1000").Val(); n != 1 {
		t.Errorf("the decisions left no key on Redis")
	}
	srv.Kill()
	// Redis down: the local limiter starts from what Redis last said of
	// the client (20 used), so the client stays denied, as on Redis.
	check("Redis down", get(), 429, `"gcra";r=0;t=2`, "1")
	if len(sides) != 22 || sides[20] != limitspec.Primary || sides[21] != limitspec.Fallback {
		t.Errorf("%d decisions, the 21st by %v, the 22nd by %v; want 22, primary, fallback", len(sides), sides[min(20, len(sides)-1)], sides[len(sides)-1])
	}
}

// TestReadmeYAML: every YAML block of the README and of docs/*.md is
// part of a spec file the repository compiles, or of the rate limit
// service's example (which rls/cmd/limitspec-rls's tests load), so that
// what they show is what works.
func TestReadmeYAML(t *testing.T) {
	var specs strings.Builder
	for _, f := range []string{"spec/algorithms.yaml", "spec/policies.yaml", "examples/quota/quota.yaml", "rls/example/config/edge.yaml", "rls/example/envoy.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		specs.WriteString(squash(string(b)) + " ")
	}
	blocks := readmeBlocks(t, "yaml")
	if len(blocks) == 0 {
		t.Fatal("the README and docs have no YAML block")
	}
	for _, b := range blocks {
		if !strings.Contains(specs.String(), squash(b.code)) {
			t.Errorf("this YAML block of %s is in no spec file:\n%s", b.file, b.code)
		}
	}
}
