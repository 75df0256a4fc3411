package main

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParse reads verify's report of an adapter (testdata/verify.out,
// in verify's format): each vector's first divergence, shortened.
func TestParse(t *testing.T) {
	out, err := os.ReadFile("testdata/verify.out")
	if err != nil {
		t.Fatal(err)
	}
	r, err := parse(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"gcra/bad-time":        "step 0: no refusal; the vector expects one",
		"gcra/force-p1":        "step 3, forced: retry_after_ms 286 → 143",
		"gcra/peek-p1":         "agrees (8 steps)",
		"gcra/limit-change-p1": "step 1, forced: error UNSUPPORTED throttled has no forced call",
	}
	if diff := cmp.Diff(want, r.outcome); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if r.passed != 1 || r.total != 4 {
		t.Errorf("%d of %d passed, want 1 of 4", r.passed, r.total)
	}
	if w := "exec:x/time/rate: algorithms gcra; compares allowed, limit, remaining, retry_after_ms, error; not compared: reset_after_ms, delay_ms, tier"; r.adapter != w {
		t.Errorf("adapter %q, want %q", r.adapter, w)
	}
}
