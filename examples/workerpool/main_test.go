package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/internal/redistest"
)

var update = flag.Bool("update", false, "rewrite testdata/output.txt with the output of this run")

// golden is the file holding the program's output.
var golden = filepath.Join("testdata", "output.txt")

// TestOutput: the program in process prints testdata/output.txt (go test
// -run TestOutput -update rewrites it).
func TestOutput(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), nil, &out); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkGolden(t, out.String())
}

// TestOutputOnRedis: on a Redis of its own, the program prints the same
// lines: the same decisions, the workers racing through one Redis.
func TestOutputOnRedis(t *testing.T) {
	srv := redistest.StartServer(t)
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-redis", srv.URL()}, &out); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, out.String())
}

func checkGolden(t *testing.T, got string) {
	t.Helper()
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("the output differs from %s (-want +got):\n%s", golden, diff)
	}
}

// TestPool checks the first part's counts, over several runs of the
// racing workers. At most 5 jobs are in flight, the slots; and 5 are at
// once, every job waiting until the pool is full. Of job-01 to job-20,
// those numbered by a multiple of 7 fail: job-07 and job-14, released;
// the 18 others are committed. Then nothing is held: 5 slots remaining;
// the minute counts the 18 commits, all at start (20 s into its
// window), and not the releases: 100 − 18 = 82 remaining.
func TestPool(t *testing.T) {
	for range 10 {
		lim := newLimiter(t)
		r, err := runPool(t.Context(), lim, newPolicy(t), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if r.maxInFlight != slots {
			t.Errorf("at most %d jobs in flight at once; want the %d slots", r.maxInFlight, slots)
		}
		if r.committed != 18 || r.released != 2 || !slices.Equal(r.failed, []string{"job-07", "job-14"}) {
			t.Errorf("committed %d, released %d (%q); want 18, and 2 (job-07, job-14)", r.committed, r.released, r.failed)
		}
		if got := remaining(r.after); got != "slots remaining 5, minute remaining 82" {
			t.Errorf("after every job: %s; want slots remaining 5, minute remaining 100 − 18 = 82", got)
		}
	}
}

// TestCrash checks each step of the second part. A live hold counts on
// both limits as a charge would: slots remaining = 5 − live holds;
// minute remaining = 100 − committed − live holds (every step lies in
// the minute of start). A hold ends at its reserve or renew + 300 ms and
// counts nothing from then on. So at +0 the five reserves leave 4 to 0
// slots and 99 to 95 of the minute, and job-6 waits for the holds' end
// at +300 ms. At +200 ms job-1 to job-4 renew to +500 ms, job-5's
// worker having crashed; at +299 ms job-6 waits 1 ms more, for job-5's
// hold; at +300 ms it takes job-5's slot (4 renewed + job-6: 0 slots,
// 100 − 0 − 5 = 95). At +400 ms three commits (1, 2, 3 committed, 4, 3,
// 2 held: 95 each time) and job-4's release (3 committed, 1 held: 96); at
// +450 ms job-6 commits: 5 slots, 100 − 4 = 96.
func TestCrash(t *testing.T) {
	type want struct {
		allowed       bool
		slots, minute int64
		retryMs       int64
	}
	// slots: 5 − held; minute: 100 − committed − held.
	wants := []want{
		{true, 5 - 1, 100 - 0 - 1, 0},    // +0       job-1 reserves
		{true, 5 - 2, 100 - 0 - 2, 0},    // +0       job-2 reserves
		{true, 5 - 3, 100 - 0 - 3, 0},    // +0       job-3 reserves
		{true, 5 - 4, 100 - 0 - 4, 0},    // +0       job-4 reserves
		{true, 5 - 5, 100 - 0 - 5, 0},    // +0       job-5 reserves
		{false, 5 - 5, 100 - 0 - 5, 300}, // +0       job-6 is denied until the holds end
		{false, 0, 0, 0},                 // +100 ms  job-5's worker crashes: no call
		{true, 5 - 5, 100 - 0 - 5, 0},    // +200 ms  job-1 renews
		{true, 5 - 5, 100 - 0 - 5, 0},    // +200 ms  job-2 renews
		{true, 5 - 5, 100 - 0 - 5, 0},    // +200 ms  job-3 renews
		{true, 5 - 5, 100 - 0 - 5, 0},    // +200 ms  job-4 renews
		{false, 5 - 5, 100 - 0 - 5, 1},   // +299 ms  job-6 is denied until job-5's hold ends
		{true, 5 - 5, 100 - 0 - 5, 0},    // +300 ms  job-6 reserves job-5's slot
		{true, 5 - 4, 100 - 1 - 4, 0},    // +400 ms  job-1 commits
		{true, 5 - 3, 100 - 2 - 3, 0},    // +400 ms  job-2 commits
		{true, 5 - 2, 100 - 3 - 2, 0},    // +400 ms  job-3 commits
		{true, 5 - 1, 100 - 3 - 1, 0},    // +400 ms  job-4 is released
		{true, 5 - 0, 100 - 4 - 0, 0},    // +450 ms  job-6 commits
	}
	outcomes, err := playCrash(t.Context(), newLimiter(t), newPolicy(t), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(outcomes) != len(wants) {
		t.Fatalf("%d outcomes, want %d", len(outcomes), len(wants))
	}
	for i, o := range outcomes {
		if o.op == crash {
			continue
		}
		w, res := wants[i], o.res
		if res.Allowed != w.allowed || res.Limits[0].Remaining != w.slots || res.Limits[1].Remaining != w.minute || res.RetryAfter != time.Duration(w.retryMs)*time.Millisecond {
			t.Errorf("step %d (%s %s at +%v): allowed %v, %s, retry after %v; want %v, slots remaining %d, minute remaining %d, %v",
				i, o.job, o.op, o.at, res.Allowed, remaining(res), res.RetryAfter, w.allowed, w.slots, w.minute, time.Duration(w.retryMs)*time.Millisecond)
		}
	}
}

func newLimiter(t *testing.T) *goimpl.Limiter {
	t.Helper()
	lim, err := goimpl.New(goimpl.Options{NoSweeper: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lim.Close() })
	return lim
}

func newPolicy(t *testing.T) *limitspec.Policy {
	t.Helper()
	p, err := poolPolicy()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
