package conformance

import (
	"encoding/json"
	"math/bits"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// workFill is n admitted requests of cost 1 under params, request i at
// from + i*span/n.
type workFill struct {
	params      map[string]json.Number
	n, from, sp int64
}

// TestWorkPerDecision fills keys with thousands of entries, then bounds
// what one decision of the script does: the commands it runs and the
// entries (array elements) they return grow with the logarithm of the
// entries the key holds, whatever the cost, the caller's clock or the
// parameters since the fill (a limit lowered; bucket_ms, which the keys
// name, can no longer change under a state). Entries
// that leave the window are removed without being read. A sliding_log
// decision must also be the oracle's.
func TestWorkPerDecision(t *testing.T) {
	t.Parallel() // beside the vectors' runs, which wait on their servers
	// Entries of a full sliding_log, buckets of a full bucket_window;
	// -short (make test) fills a quarter, which still tells a logarithm
	// from a line.
	n, nb := int64(2000), int64(3600)
	if testing.Short() {
		n, nb = 500, 900
	}
	// log2 of the entries a key may hold (n, or nb buckets), up.
	lg := int64(bits.Len64(uint64(max(n, nb))))
	for _, tt := range workCases(n, nb) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each case its own targets
			tt.run(t, lg)
		})
	}
}

// workCase is one decision after a fill, and what it must decide.
type workCase struct {
	name    string
	alg     string
	fill    workFill
	params  map[string]json.Number // nil: the fill's
	after   int64                  // the decision's time after the fill's last request
	cost    int64
	allowed bool
}

func num(v int64) json.Number { return json.Number(strconv.FormatInt(v, 10)) }

// workCases fill a sliding_log of n entries and a bucket_window of nb
// buckets.
func workCases(n, nb int64) []workCase {
	const t0, hour = 1700000000000, 3600000
	sl := func(limit int64) map[string]json.Number {
		return map[string]json.Number{"limit": num(limit), "window_ms": num(hour)}
	}
	bw := func(limit, window, bucket int64) map[string]json.Number {
		return map[string]json.Number{"limit": num(limit), "window_ms": num(window), "bucket_ms": num(bucket)}
	}
	spread := workFill{sl(n), n, t0, hour}
	instant := workFill{sl(n), n, t0, 0}
	buckets := workFill{bw(nb, hour, hour/nb), nb, t0, hour}
	return []workCase{
		{"sliding_log full, the limit lowered by one", "sliding_log", spread, sl(n - 1), 1, 1, false},
		{"sliding_log full, the limit lowered to 10", "sliding_log", spread, sl(10), 1, 1, false},
		{"sliding_log full, a peek under a lowered limit", "sliding_log", spread, sl(n - 1), 1, 0, false},
		{"sliding_log full, a request of cost n", "sliding_log", spread, nil, 1, n, false},
		{"sliding_log full, a request of cost n/2", "sliding_log", spread, nil, 1, n / 2, false},
		{"sliding_log, a peek once every entry has left", "sliding_log", spread, nil, hour, 0, true},
		{"sliding_log, the admission that removes every entry", "sliding_log", spread, nil, hour, 1, true},
		{"sliding_log at one instant, a caller 1 s behind", "sliding_log", instant, nil, -1000, 1, false},
		{"bucket_window full, a bucket per request", "bucket_window", buckets, nil, 1, 1, false},
		{"bucket_window, the admission once every bucket has left", "bucket_window", buckets, nil, hour, 1, true},
	}
}

// run fills the key, then decides once on gopher-lua, counting the
// commands and entries the decision's script ran and read (at most
// linear in lg), and on the oracle where it keeps up.
func (tt workCase) run(t *testing.T, lg int64) {
	lt, err := NewLuaTarget()
	if err != nil {
		t.Fatal(err)
	}
	defer lt.Close()
	o := NewOracleTarget()
	targets := []Target{lt}
	if tt.alg == "sliding_log" {
		// The oracle's bucket_window is too slow for thousands of
		// buckets.
		targets = append(targets, o)
	}
	last := tt.fill.into(t, tt.alg, targets)
	params := tt.params
	if params == nil {
		params = tt.fill.params
	}
	before := lt.store.Work()
	got := lt.Decide(req(tt.alg, params, "k", last+tt.after, num(tt.cost)))
	work := lt.store.Work()
	commands, returned := work.Commands-before.Commands, work.Returned-before.Returned
	if got.Error != "" || got.Allowed != tt.allowed {
		t.Fatalf("decision %+v, want allowed = %v", got, tt.allowed)
	}
	if len(targets) > 1 {
		want := o.Decide(req(tt.alg, params, "k", last+tt.after, num(tt.cost)))
		if diff := cmp.Diff(want, got, ignoreMessage); diff != "" {
			t.Errorf("the oracle decides otherwise (-oracle +script):\n%s", diff)
		}
	}
	if commands > 3*lg+24 || returned > 2*lg+16 {
		t.Errorf("one decision ran %d commands returning %d entries; want at most %d and %d (log2 n = %d)", commands, returned, 3*lg+24, 2*lg+16, lg)
	}
	t.Logf("%d commands, %d entries returned", commands, returned)
}

// into admits the fill's requests on every target and returns the time
// of the last.
func (f workFill) into(t *testing.T, alg string, targets []Target) (last int64) {
	for _, tg := range targets {
		tg.Begin(&Vector{Algorithm: alg, Params: f.params})
		for i := int64(0); i < f.n; i++ {
			last = f.from + i*f.sp/f.n
			if r := tg.Decide(req(alg, f.params, "k", last, "1")); !r.Allowed {
				t.Fatalf("%s: fill request %d at %d denied: %+v", tg.Name(), i, last, r)
			}
		}
	}
	return last
}
