package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
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
// lines: the same decisions.
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

// TestSteps checks each step's outcome against the budget's arithmetic.
// The bucket refills 1000 tokens a minute, continuously: 1 token every
// 60 ms. taken is what was committed less what has refilled since:
//
//	0 s to 1.5 s  0 (nothing committed)
//	1.5 s         + 150 (req-1)                 = 150
//	3 s           150 − 1500/60 = 125, + 320    = 445
//	4.5 s         445 − 1500/60                 = 420
//	6 s           420 − 1500/60                 = 395
//	9 s           395 − 3000/60 = 345, + 380    = 725
//	69 s          max(0, 725 − 60000/60)        = 0
//
// and remaining = 1000 − taken − held, held being the gateway's live
// holds after the step (400 each). The denied reserve of req-3 at 0.2 s
// reports what is left beside the holds (1000 − 0 − 800 = 200); it
// needs 800 + 400 = 1200 > 1000, so it waits for a hold to end: req-1's,
// reserved at 0 for 2 minutes, ends at 120 s, when 400 + 400 ≤ 1000:
// a wait of 120 s − 0.2 s = 119.8 s.
func TestSteps(t *testing.T) {
	want := []struct {
		allowed   bool
		remaining int64
		retry     time.Duration
		noHold    bool // the step's commit finds nothing held
	}{
		{true, 1000 - 0 - 400, 0, false},                          // +0 s     req-1 reserves 400
		{true, 1000 - 0 - 800, 0, false},                          // +0.1 s   req-2 reserves 400
		{false, 1000 - 0 - 800, 119800 * time.Millisecond, false}, // +0.2 s   req-3 is denied
		{true, 1000 - 150 - 400, 0, false},                        // +1.5 s   req-1 commits 150
		{true, 1000 - 150 - 800, 0, false},                        // +1.5 s   req-3 reserves 400
		{true, 1000 - 445 - 400, 0, false},                        // +3 s     req-2 commits 320
		{false, 0, 0, true},                                       // +3 s     req-2's commit again
		{true, 1000 - 445 - 400, 0, false},                        // +3 s     peek: nothing charged
		{true, 1000 - 420 - 0, 0, false},                          // +4.5 s   req-3 released
		{true, 1000 - 395 - 400, 0, false},                        // +6 s     req-4 reserves 400
		{true, 1000 - 725 - 0, 0, false},                          // +9 s     req-4 commits 380
		{true, 1000, 0, false},                                    // +69 s    peek: full again
	}
	outcomes := playInProcess(t)
	if len(outcomes) != len(want) {
		t.Fatalf("%d outcomes, want %d", len(outcomes), len(want))
	}
	for i, o := range outcomes {
		w := want[i]
		if w.noHold {
			if !errors.Is(o.err, limitspec.ErrNoHold) {
				t.Errorf("step %d (%s's commit again): error %v, want one matching ErrNoHold", i, o.req, o.err)
			}
			continue
		}
		if o.err != nil || o.res.Allowed != w.allowed || o.res.Limits[0].Remaining != w.remaining || o.res.RetryAfter != w.retry {
			t.Errorf("step %d (%s at +%v): allowed %v, remaining %d, retry after %v, error %v; want %v, %d, %v",
				i, o.req, o.at, o.res.Allowed, o.res.Limits[0].Remaining, o.res.RetryAfter, o.err, w.allowed, w.remaining, w.retry)
		}
	}
}

// TestCommitsAreWhatTheBucketCounts: the tokens taken are the commits
// and nothing else (not the holds' max_tokens, nor the released hold,
// nor the commit sent again). A plain token bucket of the same
// parameters, charged only the commits at their times, has at each step
// exactly the policy's remaining plus what the gateway holds.
func TestCommitsAreWhatTheBucketCounts(t *testing.T) {
	bucket, err := goimpl.New(goimpl.Options{NoSweeper: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	tokens := limitspec.TokenBucket{Capacity: 1000, RefillTokens: 1000, Refill: time.Minute}
	var committed int64
	for i, o := range playInProcess(t) {
		if o.err != nil {
			continue // the commit sent again: nothing charged
		}
		var charge int64
		if o.act == finish && o.modelErr == nil {
			charge = o.spent
		}
		committed += charge
		res, err := bucket.Limit(t.Context(), limitspec.Request{Key: apiKey, Limit: tokens, Cost: charge, Force: true, Now: start.Add(o.at)})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := o.res.Limits[0].Remaining, res.Limits[0].Remaining-o.held; got != want {
			t.Errorf("step %d (%s at +%v): remaining %d; want the bucket's %d less the %d held = %d",
				i, o.req, o.at, got, res.Limits[0].Remaining, o.held, want)
		}
	}
	if committed != 150+320+380 {
		t.Errorf("committed %d tokens; want 150 + 320 + 380 = 850", committed)
	}
}

// playInProcess plays the simulation in process and returns its
// outcomes.
func playInProcess(t *testing.T) []outcome {
	t.Helper()
	lim, err := goimpl.New(goimpl.Options{NoSweeper: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	policy, err := llmPolicy()
	if err != nil {
		t.Fatal(err)
	}
	outcomes, err := play(t.Context(), newGateway(lim, policy), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return outcomes
}
