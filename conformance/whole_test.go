package conformance

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/kit"
	"github.com/redis/go-redis/v9"
)

// TestScriptsStayWhole measures why a script is one chunk of straight
// Lua, not split into functions of a screenful as the generated Go is
// (docs/scripts.md, "Why a script is one chunk"): a script runs its
// chunk afresh at each call, so that a function of its own is a closure
// made at each call, which reads the script's locals as upvalues. The
// test moves the decision of gcra and of bucket_window (from the line
// "-- state" to the reply) into one local function, and counts the
// instructions per decision of both under callgrind, as
// TestInstructionBudgets does: the function must cost more than
// instructionTolerance, or the choice is to be made again.
func TestScriptsStayWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("left to make test-all: it runs a redis-server under valgrind")
	}
	out := filepath.Join(t.TempDir(), "callgrind.out")
	srv := redistest.StartUnder(t, []string{"valgrind", "--tool=callgrind", "--toggle-collect=serverCron", "--collect-atstart=yes",
		"--callgrind-out-file=" + out})
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ReadTimeout: time.Minute})
	defer rdb.Close()
	const n = 1_000_000
	for _, lim := range []limitspec.Limit{
		limitspec.GCRA{Burst: n, Rate: n, Period: time.Minute},
		limitspec.BucketWindow{Limit: n, Window: time.Minute, Bucket: time.Second},
	} {
		sc, _ := kit.LookupScripts(lim.Algorithm())
		split, ok := decisionInFunction(sc.Decide.Source)
		if !ok {
			t.Fatalf("%s: no line \"-- state\" to start the decision at", lim.Algorithm())
		}
		whole, err := countInstructions(t.Context(), rdb, srv.PID(), out, instrSubject{limit: lim})
		if err != nil {
			t.Fatal(err)
		}
		parted, err := countInstructions(t.Context(), rdb, srv.PID(), out, instrSubject{limit: lim, source: split})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d instructions per decision whole, %d with the decision in a function (%+.1f%%)",
			lim.Algorithm(), whole, parted, 100*float64(parted-whole)/float64(whole))
		if float64(parted) <= float64(whole)*(1+instructionTolerance) {
			t.Errorf("%s: a function costs %d instructions per decision, within the budgets' tolerance: splitting the scripts may be worth it now",
				lim.Algorithm(), parted-whole)
		}
	}
}

// decisionInFunction is script src with its decision, from the line
// "-- state" to the end, moved into a local function that the chunk
// returns the reply of.
func decisionInFunction(src string) (string, bool) {
	before, after, ok := strings.Cut(src, "\n-- state\n")
	return before + "\nlocal function decide__()\n-- state\n" + after + "\nend\nreturn decide__()", ok
}
