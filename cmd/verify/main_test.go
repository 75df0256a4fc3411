package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/conformance"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/kit"
)

// TestForeignVectors runs a directory of vectors written in the contract's
// format by someone else (no project extensions, no comments, a nested
// folder) against every target, a real Redis included.
func TestForeignVectors(t *testing.T) {
	t.Parallel() // its own servers or adapter
	dir := t.TempDir()
	sub := filepath.Join(dir, "theirs", "gcra")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	vec := `{
  "name": "gcra/burst-then-steady",
  "algorithm": "gcra",
  "params": {"burst": 16, "rate": 30, "period_ms": 60000},
  "steps": [
    {"t_ms": 1700000000000, "key": "user123", "cost": 1,
     "expect": {"allowed": true, "limit": 16, "remaining": 15,
                "retry_after_ms": -1, "reset_after_ms": 2000}},
    {"t_ms": 1700000000000, "key": "user123", "cost": 15, "expect": {"remaining": 0}},
    {"t_ms": 1700000001000, "key": "user123", "expect": {"allowed": false, "retry_after_ms": 1000}}
  ]
}`
	if err := os.WriteFile(filepath.Join(sub, "theirs.json"), []byte(vec), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	url := redistest.Start(t)
	code := run([]string{"-vectors", dir, "-redis", url, "-v"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	for _, target := range []string{"goimpl", "goimpl-bound", "gopherlua", "miniredis", "redis"} {
		if !strings.Contains(out.String(), "PASS gcra/burst-then-steady ["+target+"] 3 steps") {
			t.Errorf("no PASS line for %s:\n%s", target, out.String())
		}
	}
	if !strings.HasSuffix(out.String(), "5 passed, 0 failed, 0 skipped over 1 vectors and 5 targets\n") {
		t.Errorf("last line:\n%s", out.String())
	}
	out.Reset()
	if code := run([]string{"-vectors", dir, "-redis", url}, &out, &errOut); code != 0 ||
		!regexp.MustCompile(`(?m)^ +goimpl +goimpl-bound +gopherlua +miniredis +redis\nalgorithms\n  gcra +1/1 +1/1 +1/1 +1/1 +1/1\n`).MatchString(out.String()) {
		t.Errorf("exit %d, no table of one row for gcra:\n%s", code, out.String())
	}
}

func TestFailureExitsNonZero(t *testing.T) {
	dir := t.TempDir()
	vec := `{"name": "fw/wrong", "algorithm": "fixed_window", "params": {"limit": 1, "window_ms": 1000},
  "steps": [{"t_ms": 1000, "key": "k", "expect": {"remaining": 1}}]}`
	os.WriteFile(filepath.Join(dir, "v.json"), []byte(vec), 0o644)
	var out, errOut bytes.Buffer
	if code := run([]string{"-vectors", dir}, &out, &errOut); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !regexp.MustCompile(`(?m)^  fixed_window +0/1 FAIL +0/1 FAIL +0/1 FAIL +0/1 FAIL$`).MatchString(out.String()) ||
		!strings.HasSuffix(out.String(), "0 passed, 4 failed, 0 skipped over 1 vectors and 4 targets\n") {
		t.Errorf("output:\n%s", out.String())
	}
	if !strings.Contains(out.String(), `"remaining": int64(1)`) {
		t.Errorf("the failure does not show the diff:\n%s", out.String())
	}
}

func TestNoVectors(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"-vectors", t.TempDir()}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "no vectors") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestUnreachableRedis(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"-vectors", "../../vectors", "-redis", "redis://127.0.0.1:1"}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "cannot reach Redis at 127.0.0.1:1") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"-h"}, &out, &errOut); code != 0 || !strings.Contains(errOut.String(), "never") || !strings.Contains(errOut.String(), "-redis") {
		t.Errorf("exit %d, help %q", code, errOut.String())
	}
}

func TestCluster(t *testing.T) {
	t.Parallel() // its own servers or adapter
	var out, errOut bytes.Buffer
	addrs := strings.Join(redistest.StartCluster(t, 3), ",")
	code := run([]string{"-vectors", "../../vectors/gcra", "-cluster", addrs, "-v"}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "PASS gcra/redis-cell-readme [cluster] 20 steps") {
		t.Errorf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	// A policy over one identity runs on the cluster; one over several is
	// skipped with the reason, and is no failure.
	out.Reset()
	code = run([]string{"-vectors", "../../vectors/burst_quota", "-cluster", addrs, "-v"}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "PASS burst_quota/burst-then-quota [cluster]") {
		t.Errorf("burst_quota: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	code = run([]string{"-vectors", "../../vectors/ip_user", "-cluster", addrs, "-v"}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "SKIP ip_user/seed-one-call [cluster]") ||
		!strings.Contains(out.String(), "several identities") || !regexp.MustCompile(`(?m)^\d+ passed, 0 failed, [1-9]\d* skipped over`).MatchString(out.String()) {
		t.Errorf("ip_user: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

// TestFunctions runs vectors through the Functions library as well as
// through EVALSHA, then leaves the server as it found it: the library it
// loaded is deleted. A server holding another version of the library is
// refused, and its library left alone.
func TestFunctions(t *testing.T) {
	t.Parallel() // its own servers or adapter
	url := redistest.Start(t)
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	ctx := context.Background()
	var out, errOut bytes.Buffer
	code := run([]string{"-vectors", "../../vectors/gcra", "-redis", url, "-functions", "-v"}, &out, &errOut)
	for _, want := range []string{"PASS gcra/redis-cell-readme [redis] 20 steps", "PASS gcra/redis-cell-readme [redis-functions] 20 steps", "PASS gcra/force-p1 [redis-functions]"} {
		if code != 0 || !strings.Contains(out.String(), want) {
			t.Errorf("exit %d, want %q in\n%s%s", code, want, out.String(), errOut.String())
		}
	}
	if v, err := rdb.FCall(ctx, limitspec.Catalogue+"_version", nil).Result(); err == nil {
		t.Errorf("the library (version %v) is still loaded after the run", v)
	}
	other := "#!lua name=" + limitspec.Catalogue + "\nredis.register_function('" + limitspec.Catalogue + "_version', function() return 'other' end)"
	if err := rdb.FunctionLoad(ctx, other).Err(); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	code = run([]string{"-vectors", "../../vectors/gcra", "-redis", url, "-functions"}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "version other, this build's is "+catalogueVersion()) {
		t.Errorf("another version loaded: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if v, err := rdb.FCall(ctx, limitspec.Catalogue+"_version", nil).Text(); err != nil || v != "other" {
		t.Errorf("the other library was touched: %q, %v", v, err)
	}
}

// catalogueVersion is the version of the catalogue's Functions library.
func catalogueVersion() string {
	lib, _ := kit.LookupLibrary(limitspec.Catalogue)
	return lib.Version
}

// buildAdapter builds testdata/adapter, fixed_window behind the protocol
// of docs/protocol.md, written from that page and docs/semantics.md.
func buildAdapter(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "adapter")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/adapter").CombinedOutput(); err != nil {
		t.Fatalf("building the adapter: %v\n%s", err, out)
	}
	return bin
}

// TestExecAdapter runs every vector on an adapter of another
// implementation: it passes each fixed_window vector and skips every
// other, and its broken and hanging variants fail.
func TestExecAdapter(t *testing.T) {
	t.Parallel() // its own servers or adapter
	bin := buildAdapter(t)
	vectors, err := conformance.Load("../../vectors")
	if err != nil {
		t.Fatal(err)
	}
	fixedWindow := 0 // the vectors the adapter runs: fixed_window's, but those with request ids
	for _, v := range vectors {
		if v.Algorithm == "fixed_window" && !slices.ContainsFunc(v.Steps, func(s conformance.Step) bool { return s.ID != "" }) {
			fixedWindow++
		}
	}
	cases := []struct {
		name, flags string
		code        int
		want        []string
	}{
		{"faithful", "", 0, []string{
			"exec:testdata-fixed-window (" + bin + "): algorithms fixed_window; compares allowed, limit, remaining, retry_after_ms, reset_after_ms, delay_ms, tier, error; not compared: none\n",
			"PASS fixed_window/boundary-burst [exec:testdata-fixed-window] 8 steps\n",
			"SKIP gcra/redis-cell-readme [exec:testdata-fixed-window] not applicable on this target: gcra; the adapter implements fixed_window\n",
			"SKIP burst_quota/",
			fmt.Sprintf("%d passed, 0 failed, %d skipped over %d vectors and 1 targets\n", fixedWindow, len(vectors)-fixedWindow, len(vectors))}},
		// boundary-burst: 3 per 1000 ms, a cost of 2 then 1 fill the
		// window; the third request, at t 999, must be denied.
		{"broken", " -broken", 1, []string{
			"FAIL fixed_window/boundary-burst [exec:testdata-fixed-window]",
			"step 2 (t_ms 1700000000999, key \"k\", cost 1): differs from the vector (-want +got)",
			`- "allowed": bool(false),`, `+ "allowed": bool(true),`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run([]string{"-vectors", "../../vectors", "-exec", bin + c.flags, "-v"}, &out, &errOut)
			if code != c.code {
				t.Errorf("exit %d, want %d\n%s", code, c.code, errOut.String())
			}
			// go-cmp's diffs space their columns at random: compare
			// with every run of spaces as one.
			got := strings.Join(strings.Fields(out.String()), " ")
			for _, w := range c.want {
				w = strings.Join(strings.Fields(w), " ")
				if !strings.Contains(got, w) {
					t.Errorf("no %q in\n%s", w, got)
				}
			}
		})
	}
}

// TestExecAdapterHangs: an adapter that never answers fails at the
// timeout, and so does every later vector, at once.
func TestExecAdapterHangs(t *testing.T) {
	t.Parallel() // its own servers or adapter
	bin := buildAdapter(t)
	var out, errOut bytes.Buffer
	start := time.Now()
	code := run([]string{"-vectors", "../../vectors/fixed_window", "-exec", bin + " -hang", "-exec-timeout", "500ms", "-v"}, &out, &errOut)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("verify took %v", d)
	}
	for _, w := range []string{
		"FAIL fixed_window/boundary-burst [exec:testdata-fixed-window]",
		`no reply within 500ms to {"op":"decide","algorithm":"fixed_window"`,
		"FAIL fixed_window/window-edges",
		"begin: the adapter is not running: no reply within 500ms",
		"0 passed, ",
	} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("no %q in\n%s", w, out.String())
		}
	}
}

// TestFlags checks -run, -json and the usage errors, on a directory of
// two vectors.
func TestFlags(t *testing.T) {
	dir := t.TempDir()
	for name, vec := range map[string]string{
		"a.json": `{"name": "gcra/admit", "algorithm": "gcra", "params": {"burst": 1, "rate": 1, "period_ms": 1000},
  "steps": [{"t_ms": 1000, "key": "k", "expect": {"allowed": true, "remaining": 0}}]}`,
		"b.json": `{"name": "gcra/refuse", "algorithm": "gcra", "params": {"burst": 1, "rate": 1, "period_ms": 1000},
  "steps": [{"t_ms": 1000, "key": "k", "cost": -1, "expect": {"error": "BADINPUT"}}]}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(vec), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		args   []string
		code   int
		stdout string // a part of the output
		stderr string
	}{
		{[]string{"-run", "refuse"}, 0, "4 passed, 0 failed, 0 skipped over 1 vectors and 4 targets\n", ""},
		{[]string{}, 0, "8 passed, 0 failed, 0 skipped over 2 vectors and 4 targets\n", ""},
		{[]string{"-run", "nothing"}, 1, "", "none of the 2 vectors"},
		{[]string{"-run", "("}, 2, "", "-run"},
		{[]string{"extra"}, 2, "", "unexpected argument"},
		{[]string{"-v", "-json"}, 2, "", "not both"},
		{[]string{"-nosuchflag"}, 2, "", "not defined"},
		{[]string{"-json", "-run", "admit"}, 0, `"status": "pass"`, ""},
	} {
		var out, errOut bytes.Buffer
		code := run(append([]string{"-vectors", dir}, tt.args...), &out, &errOut)
		if code != tt.code || !strings.Contains(out.String(), tt.stdout) || !strings.Contains(errOut.String(), tt.stderr) {
			t.Errorf("%v: exit %d\n%s%s", tt.args, code, out.String(), errOut.String())
		}
	}
}

// TestUserSpec runs the vectors of a user's spec (examples/quota's) from
// the spec file alone: compiled in memory, its scripts run on gopherlua,
// miniredis and a real Redis, by EVALSHA and by FCALL, while the targets
// of a Go limiter, which have no typed limit of it, skip them. A vector
// the scripts do not decide as it says fails; without -spec, verify
// refuses the vectors and says how to run them.
func TestUserSpec(t *testing.T) {
	t.Parallel()
	spec := filepath.Join("..", "..", "examples", "quota", "quota.yaml")
	vectors := filepath.Join("..", "..", "examples", "quota", "testdata", "vectors")
	var out, errOut bytes.Buffer
	// First, as -spec registers the spec's scripts for the process.
	if code := run([]string{"-vectors", vectors}, &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "no spec given: quota.daily_quota; give the spec that states them (-spec FILE -package quota)") {
		t.Errorf("without -spec: exit %d:\n%s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	url := redistest.Start(t)
	if code := run([]string{"-vectors", vectors, "-spec", spec, "-redis", url, "-functions"}, &out, &errOut); code != 0 ||
		!regexp.MustCompile(`(?m)^  quota\.daily_quota +1 skipped +1 skipped +1/1 +1/1 +1/1 +1/1$`).MatchString(out.String()) ||
		!strings.HasSuffix(out.String(), "4 passed, 0 failed, 2 skipped over 1 vectors and 6 targets\n") {
		t.Errorf("exit %d:\n%s%s", code, out.String(), errOut.String())
	}

	wrong := t.TempDir()
	raw, err := os.ReadFile(filepath.Join(vectors, "daily_quota.json"))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(raw), `"remaining": 2`, `"remaining": 1`, 1)
	if edited == string(raw) {
		t.Fatal(`the quota vector no longer expects "remaining": 2`)
	}
	if err := os.WriteFile(filepath.Join(wrong, "daily_quota.json"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run([]string{"-vectors", wrong, "-spec", spec, "-v"}, &out, &errOut); code != 1 ||
		!strings.Contains(out.String(), "FAIL quota.daily_quota/resets-at-05 [gopherlua]") {
		t.Errorf("a wrong expectation: exit %d:\n%s", code, out.String())
	}

}
