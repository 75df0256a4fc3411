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
// lines: the same decisions, and the commit sent again gets the first
// reply there too.
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

// TestSteps checks each step's outcome against the limits' arithmetic.
// What a key has left of each limit is its quota less what was charged
// less what is held (held: the gateway's holds after the step, each 1
// slot, 1 request and its max_tokens):
//
//	slots    = 3 − held
//	requests = 5 − committed in the minute [−20 s, +40 s) − held
//	tokens   = 2000 − taken − held max_tokens, rounded down
//
// taken is the tokens committed less what has refilled since, 1 token
// every 30 ms (a third of a token every 10 ms):
//
//	1.5 s   350 (req-1)                   5.0 s   1073⅓
//	2.0 s   333⅓                          5.5 s   1056⅔
//	2.5 s   316⅔                          6.0 s   1040 + 180 (req-6) = 1220
//	3.0 s   300 + 280 (req-4) = 580       40 s    1220 − 34000/30    = 86⅔
//	3.5 s   563⅓                          41 s    53⅓ + 150 (req-7)  = 203⅓
//	4.0 s   546⅔ + 500 (req-3) = 1046⅔    101 s   0 (all refilled)
//	4.5 s   1030 + 60 (req-5)  = 1090
//
// A denied reserve reports what is left beside the holds, and waits
// until it fits: req-3's 600 tokens need req-1's hold (800 of 2000 with
// req-2's 800 held) to end, at 120 s, a wait of 119.8 s; req-5 needs a
// slot, the first at 120 s; req-7 the next minute, at 40 s (before any
// hold ends). The commit sent again at 2 s gets the reply of the first,
// at 1.5 s (550 tokens left), and charges nothing: the peek right after
// finds 566, the refill of half a second.
func TestSteps(t *testing.T) {
	want := []struct {
		allowed                 bool
		slots, requests, tokens int64
		retry                   time.Duration
		deniedBy                string
		firstReply              bool // the step's reply is the first commit's
	}{
		{true, 2, 4, 1200, 0, "", false},                                // +0 s     req-1 reserves 800
		{true, 1, 3, 400, 0, "", false},                                 // +0.1 s   req-2 reserves 800
		{false, 1, 3, 400, 119800 * time.Millisecond, "tokens", false},  // +0.2 s   req-3's 600 do not fit
		{true, 0, 2, 100, 0, "", false},                                 // +0.3 s   req-4 reserves 300
		{false, 0, 2, 100, 119600 * time.Millisecond, "slots", false},   // +0.4 s   req-5: no slot
		{true, 1, 2, 550, 0, "", false},                                 // +1.5 s   req-1 commits 350
		{true, 1, 2, 550, 0, "", true},                                  // +2 s     req-1's commit again: the first reply
		{true, 1, 2, 566, 0, "", false},                                 // +2 s     peek: nothing more charged
		{true, 2, 3, 1383, 0, "", false},                                // +2.5 s   req-2 released
		{true, 1, 2, 783, 0, "", false},                                 // +2.5 s   req-3 reserves 600
		{true, 2, 2, 820, 0, "", false},                                 // +3 s     req-4 commits 280
		{true, 1, 1, 736, 0, "", false},                                 // +3.5 s   req-5 reserves 100
		{true, 2, 1, 853, 0, "", false},                                 // +4 s     req-3 commits 500
		{true, 3, 1, 910, 0, "", false},                                 // +4.5 s   req-5 commits 60
		{true, 2, 0, 726, 0, "", false},                                 // +5 s     req-6 reserves 200
		{false, 2, 0, 743, 34500 * time.Millisecond, "requests", false}, // +5.5 s   req-7: the minute is spent
		{true, 3, 0, 780, 0, "", false},                                 // +6 s     req-6 commits 180
		{true, 2, 4, 1713, 0, "", false},                                // +40 s    req-7 reserves 200
		{true, 3, 4, 1796, 0, "", false},                                // +41 s    req-7 commits 150
		{true, 3, 5, 2000, 0, "", false},                                // +101 s   peek: whole again
	}
	outcomes := playInProcess(t)
	if len(outcomes) != len(want) {
		t.Fatalf("%d outcomes, want %d", len(outcomes), len(want))
	}
	for i, o := range outcomes {
		w := want[i]
		got := []int64{o.res.Limits[0].Remaining, o.res.Limits[1].Remaining, o.res.Limits[2].Remaining}
		if o.res.Allowed != w.allowed || !slices.Equal(got, []int64{w.slots, w.requests, w.tokens}) || o.res.RetryAfter != w.retry || o.denying() != w.deniedBy {
			t.Errorf("step %d (%s at +%v): allowed %v, left %v, retry after %v, denied by %q; want %v, %v, %v, %q",
				i, o.req, o.at, o.res.Allowed, got, o.res.RetryAfter, o.denying(), w.allowed, []int64{w.slots, w.requests, w.tokens}, w.retry, w.deniedBy)
		}
		if w.firstReply && !sameReply(o.res, o.first) {
			t.Errorf("step %d: the commit of %s sent again got %+v; want the first commit's reply %+v", i, o.req, o.res, o.first)
		}
	}
}

// TestCommitsAreWhatTheLimitsCount: the policy charges the commits and
// nothing else (not the holds, nor the released request, nor the commit
// sent again). Plain limits of the same parameters, charged only the
// commits at their times (the requests window 1 a commit, the token
// bucket the tokens used), have at each step exactly the policy's
// remaining plus what the gateway holds; and the slots are the 3 less
// the gateway's holds.
func TestCommitsAreWhatTheLimitsCount(t *testing.T) {
	plain, err := goimpl.New(goimpl.Options{NoSweeper: true})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	limits := []struct {
		name  string
		limit limitspec.Limit
		// charge is what a commit of used tokens charges the limit;
		// heldBy what the gateway's holds take of it.
		charge func(used int64) int64
		heldBy func(o outcome) int64
	}{
		{"requests", limitspec.FixedWindow{Limit: demo.requests, Window: time.Minute},
			func(int64) int64 { return 1 }, func(o outcome) int64 { return o.holds }},
		{"tokens", limitspec.TokenBucket{Capacity: demo.tokens, RefillTokens: demo.tokens, Refill: time.Minute},
			func(used int64) int64 { return used }, func(o outcome) int64 { return o.heldTokens }},
	}
	for i, o := range playInProcess(t) {
		if o.act == commitAgain {
			continue // the first commit's reply, checked by TestSteps
		}
		if got, want := o.res.Limits[0].Remaining, demo.slots-o.holds; got != want {
			t.Errorf("step %d (%s at +%v): %d slots left; want %d less the %d held = %d", i, o.req, o.at, got, demo.slots, o.holds, want)
		}
		for j, l := range limits {
			var cost int64
			if o.act == finish && o.modelErr == nil {
				cost = l.charge(o.spent)
			}
			res, err := plain.Limit(t.Context(), limitspec.Request{Key: l.name, Limit: l.limit, Cost: cost, Peek: cost == 0, Force: true, Now: start.Add(o.at)})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := o.res.Limits[j+1].Remaining, res.Limits[0].Remaining-l.heldBy(o); got != want {
				t.Errorf("step %d (%s at +%v): %s left %d; want the plain limit's %d less the %d held = %d",
					i, o.req, o.at, l.name, got, res.Limits[0].Remaining, l.heldBy(o), want)
			}
		}
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
	policy, err := llmPolicy(demo)
	if err != nil {
		t.Fatal(err)
	}
	outcomes, err := play(t.Context(), newGateway(lim, policy), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return outcomes
}
