package main

import (
	"bytes"
	"cmp"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/limitspec/limitspec/internal/redistest"
)

// writeCommands are the commands that change a key.
var writeCommands = []string{"SET", "PSETEX", "ZADD", "ZREM", "RPUSH", "DEL", "ZREMRANGEBYSCORE", "ZREMRANGEBYRANK", "PEXPIRE"}

// admittedWrites are the writes each algorithm's admitted decision must
// run once, as "NAME 1"; an algorithm not listed must run at least one
// write.
var admittedWrites = map[string][]string{
	"fixed_window":   {"PSETEX"},
	"sliding_window": {"PSETEX"},
	"token_bucket":   {"PSETEX"},
	"gcra":           {"PSETEX"},
	"leaky_bucket":   {"PSETEX"},
	"sliding_log":    {"ZADD"},
	"meta_window":    {"RPUSH"},
	"bucket_window":  {"ZADD"},
}

// growing are the algorithms whose state holds one entry per admitted
// request.
var growing = []string{"sliding_log", "meta_window"}

// commands parses "HMGET 1, HSET 1" into counts; "none" is empty.
func commands(t *testing.T, cell string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	if cell == "none" {
		return out
	}
	for _, part := range strings.Split(cell, ", ") {
		name, n, ok := strings.Cut(part, " ")
		x, err := strconv.ParseFloat(n, 64)
		if !ok || err != nil || x <= 0 || name != strings.ToUpper(name) {
			t.Errorf("bad commands cell %q", cell)
		}
		out[name] = x
	}
	return out
}

func writes(cmds map[string]float64) []string {
	var out []string
	for name := range cmds {
		if slices.Contains(writeCommands, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// TestMeasure runs the measurement on a throwaway Redis and checks that
// every decision script (and tiered bucket_window) and limit gets a
// plausible row, and every view and limit one too.
func TestMeasure(t *testing.T) {
	// The worst cases at 2000 entries rather than 100000: the same
	// decisions, in a few seconds.
	defer func(n int64) { WorstEntries = n }(WorstEntries)
	WorstEntries = 2000
	if testing.Short() {
		// make test: limits up to 1000, the same checks in a few seconds;
		// make test-all fills L = 100000 too.
		defer func(l []int64) { Limits = l }(Limits)
		Limits = Limits[:2]
	}
	var out bytes.Buffer
	if err := run(redistest.Start(t), &out); err != nil {
		t.Log("\n" + out.String())
		t.Fatal(err)
	}
	text := out.String()
	t.Log("\n" + text)
	lines := strings.Split(text, "\n")
	if !strings.HasPrefix(lines[0], "Measured on Redis ") || !strings.Contains(lines[0], strconv.Quote(Meta)) {
		t.Errorf("first line does not give the Redis version and the load: %s", lines[0])
	}
	tables := parseTables(lines)
	bytesOf := checkAlgorithmRows(t, tables["algorithm"])
	checkRowSets(t, tables["algorithm"], bytesOf)
	checkViews(t, tables["view"])
	checkWorst(t, tables["worst case"])
	checkPolicy(t, tables["way"])
}

// parseTables returns the rows of the Markdown tables among lines, each
// a row's cells, by the first cell of the header they follow.
func parseTables(lines []string) map[string][][]string {
	tables := map[string][][]string{}
	header := ""
	for _, line := range lines {
		if !strings.HasPrefix(line, "| ") {
			header = ""
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		switch {
		case header == "":
			header = cells[0]
		case strings.HasPrefix(line, "| ---"):
		default:
			tables[header] = append(tables[header], cells)
		}
	}
	return tables
}

// rowKey names a row of the algorithm table: its label and limit.
type rowKey struct {
	label string
	L     int64
}

// checkAlgorithmRows checks each row of the algorithm table (one per
// row set and limit, none twice) and returns the bytes each measured.
func checkAlgorithmRows(t *testing.T, rows [][]string) map[rowKey]int64 {
	t.Helper()
	bytesOf := map[rowKey]int64{}
	for _, c := range rows {
		if len(c) != 9 {
			t.Errorf("row with %d cells: %v", len(c), c)
			continue
		}
		L, _ := strconv.ParseInt(c[1], 10, 64)
		k := rowKey{c[0], L}
		if _, dup := bytesOf[k]; dup {
			t.Errorf("two rows for %s at L=%d", c[0], L)
		}
		b, err := strconv.ParseInt(c[3], 10, 64)
		if err != nil || b <= 0 {
			t.Errorf("%s L=%d: bytes %q", c[0], L, c[3])
		}
		bytesOf[k] = b
		checkAlgorithmRow(t, c, L)
	}
	return bytesOf
}

// checkAlgorithmRow checks the cells of the row c, of limit L, past its
// bytes: the keys measured and per limiter key, the commands of an
// admitted and a denied decision, the time and the round trips.
func checkAlgorithmRow(t *testing.T, c []string, L int64) {
	t.Helper()
	if c[2] != strconv.FormatInt(keysFor(L), 10) {
		t.Errorf("%s L=%d: %s keys measured, want %d", c[0], L, c[2], keysFor(L))
	}
	alg, _, _ := strings.Cut(c[0], " ")
	s, ok := lookup(alg)
	if !ok {
		t.Errorf("row for unknown algorithm %s", c[0])
		return
	}
	if c[4] != "1" || len(s.Keys) != 1 {
		t.Errorf("%s L=%d: %s keys per limiter key (%d in its script); want 1, so that a slot migration never splits a state", c[0], L, c[4], len(s.Keys))
	}
	admitted, denied := commands(t, c[5]), commands(t, c[6])
	if len(writes(admitted)) == 0 {
		t.Errorf("%s L=%d: an admitted decision writes nothing: %s", c[0], L, c[5])
	}
	for _, w := range admittedWrites[alg] {
		if admitted[w] != 1 {
			t.Errorf("%s L=%d: an admitted decision runs %s %v times, want once: %s", c[0], L, w, admitted[w], c[5])
		}
	}
	if w := writes(denied); len(w) > 0 {
		t.Errorf("%s L=%d: a denied decision writes (%v): %s", c[0], L, w, c[6])
	}
	if len(denied) == 0 {
		t.Errorf("%s L=%d: a denied decision reads nothing", c[0], L)
	}
	if us, err := strconv.ParseFloat(c[7], 64); err != nil || us <= 0 || math.IsInf(us, 0) {
		t.Errorf("%s L=%d: time %q", c[0], L, c[7])
	}
	if c[8] != "1" {
		t.Errorf("%s L=%d: %s round trips", c[0], L, c[8])
	}
}

// checkRowSets checks that the algorithm table has a row for every row
// set (each decision script, and tiered bucket_window) and limit, and no
// other, and that a state of one entry per request grows with L.
func checkRowSets(t *testing.T, rows [][]string, bytesOf map[rowKey]int64) {
	t.Helper()
	sets := rowSets()
	for _, rs := range sets {
		for _, L := range Limits {
			if _, ok := bytesOf[rowKey{rs.label, L}]; !ok {
				t.Errorf("no row for %s at L=%d", rs.label, L)
			}
		}
	}
	if want := len(sets) * len(Limits); len(rows) != want {
		t.Errorf("%d rows, want %d", len(rows), want)
	}
	decisions := 0
	for _, s := range allScripts() {
		if s.View == "" && !inFlight(s) { // an in-flight limit keeps no state to measure
			decisions++
		}
	}
	if len(sets) != decisions+1 {
		t.Errorf("%d row sets for %d decision scripts (in-flight limits left out), want one more (tiered bucket_window)", len(sets), decisions)
	}
	// A state of one entry per request grows with L: at least 10 bytes
	// an entry.
	for _, alg := range growing {
		for _, L := range Limits {
			if b := bytesOf[rowKey{alg, L}]; b < 10*L {
				t.Errorf("%s at L=%d: %d bytes for L entries", alg, L, b)
			}
		}
	}
}

// checkViews checks that the view table has a row for every view and
// limit, reading back L entries without a write, and no other.
func checkViews(t *testing.T, rows [][]string) {
	t.Helper()
	views := 0
	for _, s := range allScripts() {
		if s.View == "" {
			continue
		}
		for _, L := range Limits {
			views++
			found := false
			for _, c := range rows {
				if c[0] != s.Name || c[1] != strconv.FormatInt(L, 10) {
					continue
				}
				found = true
				if c[3] != strconv.FormatInt(L, 10) {
					t.Errorf("%s L=%d: %s entries read back, want L", s.Name, L, c[3])
				}
				cmds := commands(t, c[4])
				if len(cmds) == 0 || len(writes(cmds)) > 0 {
					t.Errorf("%s L=%d: a read-back runs %s", s.Name, L, c[4])
				}
				if us, err := strconv.ParseFloat(c[5], 64); err != nil || us <= 0 {
					t.Errorf("%s L=%d: time %q", s.Name, L, c[5])
				}
			}
			if !found {
				t.Errorf("no row for the view %s at L=%d", s.Name, L)
			}
		}
	}
	if len(rows) != views {
		t.Errorf("%d view rows, want %d", len(rows), views)
	}
}

// checkPolicy checks the policy table: the policy in one round trip and
// atomic, the six calls in six round trips or pipelined, every figure
// measured, and the six limits' state about as large either way.
func checkPolicy(t *testing.T, rows [][]string) {
	t.Helper()
	if len(rows) != 3 {
		t.Fatalf("%d rows in the policy table, want 3", len(rows))
	}
	for i, want := range []struct{ trips, atomic string }{{"1", "yes"}, {"6", "no"}, {"1", "no"}} {
		c := rows[i]
		if c[1] != want.trips || !strings.HasPrefix(c[2], want.atomic) {
			t.Errorf("row %q: %s round trips, atomic %q; want %s, %s", c[0], c[1], c[2], want.trips, want.atomic)
		}
		for _, cell := range c[3:6] {
			if v, err := strconv.ParseFloat(cell, 64); err != nil || v <= 0 {
				t.Errorf("row %q: figure %q", c[0], cell)
			}
		}
	}
	policy, _ := strconv.ParseFloat(rows[0][5], 64)
	six, _ := strconv.ParseFloat(rows[1][5], 64)
	if policy > 1.5*six || six > 1.5*policy {
		t.Errorf("the policy's keys take %v bytes, the six calls' %v: the same six hashes should", policy, six)
	}
}

// checkWorst checks the worst-case table: a row per scenario, in order,
// with the entries the scenario sets up, the decision's outcome, commands
// that write only for a decision that admits, a time and a typical time.
func checkWorst(t *testing.T, rows [][]string) {
	t.Helper()
	scs := worstCases(WorstEntries)
	if len(rows) != len(scs) {
		t.Fatalf("%d worst-case rows, want %d", len(rows), len(scs))
	}
	typicalRE := regexp.MustCompile(`^[0-9.]+ \(L = [0-9]+\)$`)
	for i, sc := range scs {
		c := rows[i]
		if len(c) != 7 || c[0] != sc.label || c[1] != sc.script().Name {
			t.Errorf("worst-case row %d is %v, want %s of %s in 7 cells", i, c, sc.label, sc.script().Name)
			continue
		}
		if c[2] != strconv.FormatInt(sc.entries, 10) {
			t.Errorf("%s: %s stored entries, want %d", sc.label, c[2], sc.entries)
		}
		want := ": denied"
		if sc.allowed {
			want = ": allowed"
		}
		if !strings.HasSuffix(c[3], want) {
			t.Errorf("%s: decision %q, want it %s", sc.label, c[3], want)
		}
		cmds := commands(t, c[4])
		if len(cmds) == 0 || (len(writes(cmds)) > 0) != sc.writes() {
			t.Errorf("%s: commands %s for a decision that writes: %v", sc.label, c[4], sc.writes())
		}
		if us, err := strconv.ParseFloat(c[5], 64); err != nil || us <= 0 {
			t.Errorf("%s: time %q", sc.label, c[5])
		}
		if !typicalRE.MatchString(c[6]) {
			t.Errorf("%s: typical %q", sc.label, c[6])
		}
	}
}

// TestWorstCases checks the scenarios: distinct labels, requests in time
// order, parameters the scripts take, and each decision on the state its
// fill leaves (for a sliding_log or meta_window, its entries are the
// limit N).
func TestWorstCases(t *testing.T) {
	const N = 500
	seen := map[string]bool{}
	for _, sc := range worstCases(N) {
		if seen[sc.label] {
			t.Errorf("two scenarios %q", sc.label)
		}
		seen[sc.label] = true
		reqs := sc.fill.requests()
		if !slices.IsSortedFunc(reqs, func(a, b request) int { return cmp.Compare(a.t, b.t) }) {
			t.Errorf("%s: requests out of time order", sc.label)
		}
		if reqs[len(reqs)-1].t != sc.fill.last() {
			t.Errorf("%s: last request at %d, fill.last() = %d", sc.label, reqs[len(reqs)-1].t, sc.fill.last())
		}
		for _, v := range []map[string]int64{reqs[0].v, sc.v} {
			if _, err := params(sc.script(), v); err != nil {
				t.Errorf("%s: %v", sc.label, err)
			}
		}
		if alg := sc.script().Algorithm; (alg == "sliding_log" || alg == "meta_window") && (sc.entries != N || int64(len(reqs)) != N) {
			t.Errorf("%s: %d entries from %d requests, want %d", sc.label, sc.entries, len(reqs), N)
		}
	}
}

// TestParams checks the parameters of the row sets and their load.
func TestParams(t *testing.T) {
	const L = 100
	want := map[string]struct {
		params  []any
		n, span int64
	}{
		"bucket_window":           {[]any{int64(L), int64(60000), int64(1000)}, L, 60000},
		"bucket_window (3 tiers)": {[]any{int64(L), int64(1000), int64(1000), int64(5 * L), int64(10000), int64(7 * L), int64(15000)}, 7 * L, 15000},
		"sliding_log":             {[]any{int64(L), int64(60000)}, L, 60000},
		"meta_window":             {[]any{int64(L), int64(60000)}, L, 60000},
		"gcra":                    {[]any{int64(L), int64(L), int64(60000)}, L, 0},
	}
	for _, rs := range rowSets() {
		w, ok := want[rs.label]
		if !ok {
			continue
		}
		v := rs.values(L)
		got, err := params(rs.script, v)
		if err != nil {
			t.Fatal(err)
		}
		n, span := load(rs.script, v)
		if !reflect.DeepEqual(got, w.params) || n != w.n || span != w.span {
			t.Errorf("%s: params %v, load %d over %d ms; want %v, %d over %d ms", rs.label, got, n, span, w.params, w.n, w.span)
		}
	}
	for L, want := range map[int64]int64{1: 2000, 10: 200, 1000: 2, 3000: 1, 100000: 1} {
		if got := keysFor(L); got != want {
			t.Errorf("keysFor(%d) = %d, want %d", L, got, want)
		}
	}
}
