package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// WorstEntries is the number of entries of the worst cases whose state
// grows with the limit (sliding_log, meta_window): their limit N.
var WorstEntries int64 = 100000

const (
	// hour is the window of the worst cases, in ms.
	hour = 3600000
	// A fill through the script is given up after fillBudget, in
	// pipelines of about pipelineTime each.
	fillBudget   = 2 * time.Minute
	pipelineTime = 200 * time.Millisecond
)

// A request is one request of cost 1 at t under the parameters v, which
// the script admits.
type request struct {
	t int64
	v map[string]int64
}

// A fill is how a worst case's key is set up: n admitted requests of
// cost 1 on one key under the parameters v, request i at
// from + i*span/n. Worst cases that share a fill share its key.
type fill struct {
	script        script
	v             map[string]int64
	n, from, span int64
}

// requests returns the fill's requests.
func (f *fill) requests() []request {
	out := make([]request, f.n)
	for i := range f.n {
		out[i] = request{t: f.from + i*f.span/f.n, v: f.v}
	}
	return out
}

// last is the time of the fill's last request.
func (f *fill) last() int64 { return f.from + (f.n-1)*f.span/f.n }

// A scenario is one row of the worst-case table: a filled key, then one
// decision repeated on it.
type scenario struct {
	label string
	fill  *fill
	// v are the parameters of the measured decision, cost its cost, and
	// after its time relative to the fill's last request.
	v           map[string]int64
	cost, after int64
	// allowed is the decision's expected outcome; an allowed decision
	// that writes (cost > 0) runs each time on a fresh copy of the key.
	allowed bool
	// entries is the number of entries the fill leaves in the key.
	entries int64
}

// writes tells whether the measured decision writes the state.
func (sc scenario) writes() bool { return sc.allowed && sc.cost > 0 }

// script is the scenario's decision script.
func (sc scenario) script() script { return sc.fill.script }

// worstCases lists the decisions whose work grows with the entries a key
// holds: sliding_log and meta_window at limit N, bucket_window at its
// largest number of buckets (3600).
func worstCases(N int64) []scenario {
	sl, _ := lookup("sliding_log")
	bw, _ := lookup("bucket_window")
	mw, _ := lookup("meta_window")
	slv := func(limit int64) map[string]int64 { return map[string]int64{"limit": limit, "window_ms": hour} }
	bwv := func(limit, bucket int64) map[string]int64 {
		return map[string]int64{"limit": limit, "window_ms": hour, "bucket_ms": bucket}
	}
	spread := &fill{sl, slv(N), N, now0, hour}
	instant := &fill{sl, slv(N), N, now0, 0}
	bwMax := &fill{bw, bwv(3600, 1000), 3600, now0, hour}
	meta := &fill{mw, slv(N), N, now0, hour}
	full := fmt.Sprintf("full at limit %d (1 h window)", N)
	return []scenario{
		{label: fmt.Sprintf("a. %s, the limit lowered to %d", full, N-1), fill: spread, v: slv(N - 1), cost: 1, entries: N},
		{label: fmt.Sprintf("a. %s, the limit lowered to 10", full), fill: spread, v: slv(10), cost: 1, entries: N},
		{label: fmt.Sprintf("a. %s, the limit lowered to %d, a peek", full, N-1), fill: spread, v: slv(N - 1), entries: N},
		{label: "b. at its maximum: 3600 buckets of 1 s in a 1 h window, one admission in each", fill: bwMax, v: bwv(3600, 1000), cost: 1, entries: 3600},
		{label: fmt.Sprintf("c. %s, a request of cost %d", full, N), fill: spread, v: slv(N), cost: N, entries: N},
		{label: fmt.Sprintf("d. %s, a peek once every entry has left the window", full), fill: spread, v: slv(N), after: hour, allowed: true, entries: N},
		{label: fmt.Sprintf("e. %d entries at one instant, a caller whose clock is 1 s behind", N), fill: instant, v: slv(N), cost: 1, after: -1000, entries: N},
		{label: fmt.Sprintf("e. %s, the admission once every entry has left the window (it removes them)", full), fill: spread, v: slv(N), cost: 1, after: hour, allowed: true, entries: N},
		{label: "e. b's key, the admission once every bucket has left the window (it deletes them)", fill: bwMax, v: bwv(3600, 1000), cost: 1, after: hour, allowed: true, entries: 3600},
		{label: fmt.Sprintf("e. %s, the admission that opens the next window (it deletes the entries)", full), fill: meta, v: slv(N), cost: 1, after: hour, allowed: true, entries: N},
	}
}

// runScript admits the requests through the script, pipelined, and
// fails if one is denied or if it takes longer than fillBudget. A
// pipeline's size follows the time of the last, so that none takes much
// longer than pipelineTime however slow each call becomes.
func (m *measurer) runScript(s script, key string, reqs []request) error {
	start := time.Now()
	size := batch
	for from := 0; from < len(reqs); {
		if time.Since(start) > fillBudget {
			return fmt.Errorf("filling through the script took over %v (%d of %d requests)", fillBudget, from, len(reqs))
		}
		to := from + 1
		for to < len(reqs) && to-from < size && sameValues(reqs[to].v, reqs[from].v) {
			to++
		}
		began := time.Now()
		if err := m.admit(s, key, reqs[from:to]); err != nil {
			return err
		}
		took := time.Since(began) + 1
		size = int(max(1, min(batch, int64(to-from)*int64(pipelineTime)/int64(took))))
		from = to
	}
	return nil
}

// admit runs requests under the same parameters in one pipeline and fails
// if one is denied.
func (m *measurer) admit(s script, key string, reqs []request) error {
	ps, err := params(s, reqs[0].v)
	if err != nil {
		return err
	}
	calls := make([]call, len(reqs))
	for i, r := range reqs {
		calls[i] = call{key, r.t, 1, reqs[0].v}
	}
	replies, err := m.eval(s, calls, args(s, ps))
	if err != nil {
		return err
	}
	for i, r := range replies {
		if allowed(r) != 1 {
			return fmt.Errorf("request at %d of the fill on %s was denied: %v", calls[i].t, key, r)
		}
	}
	return nil
}

func sameValues(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		if y, ok := b[k]; !ok || x != y {
			return false
		}
	}
	return true
}

// A worstRow is what one line of the worst-case table reports; err, when
// not nil, why it was not measured (and timer is nil).
type worstRow struct {
	sc       scenario
	entries  int64
	commands string
	timer    *timer
	err      error
}

// measureWorst fills the worst cases' keys (once per fill) and runs each
// decision once; the timers of the rows measured are ready for the
// sweeps. A row that could not be measured says why.
func (m *measurer) measureWorst(scs []scenario) []*worstRow {
	type filled struct {
		key string
		err error
	}
	keys := map[*fill]filled{}
	var out []*worstRow
	for i, sc := range scs {
		fk, ok := keys[sc.fill]
		if !ok {
			fk.key = fmt.Sprintf("%sworst:%d", m.prefix, i)
			fk.err = m.runScript(sc.fill.script, fk.key, sc.fill.requests())
			if fk.err == nil {
				fk.err = m.keep(sc.script(), fk.key, sc.fill.v)
			}
			keys[sc.fill] = fk
		}
		r := &worstRow{sc: sc, err: fk.err}
		if r.err == nil {
			r.err = m.worstRow(r, fk.key)
		}
		if r.err != nil {
			r.timer = nil
		}
		out = append(out, r)
	}
	return out
}

// keep gives a key's state keys a TTL long enough for the sweeps.
func (m *measurer) keep(s script, key string, v map[string]int64) error {
	for _, name := range keyNames(s, key, v) {
		if err := m.rdb.PExpire(m.ctx, name, keepFor).Err(); err != nil {
			return err
		}
	}
	return nil
}

// worstRow counts the entries of a filled key and runs the row's decision
// on it once.
func (m *measurer) worstRow(r *worstRow, key string) error {
	sc := r.sc
	s := sc.script()
	var err error
	if r.entries, err = m.countEntries(s, key, sc.v); err != nil {
		return err
	}
	ps, err := params(s, sc.v)
	if err != nil {
		return err
	}
	want := int64(0)
	if sc.allowed {
		want = 1
	}
	r.timer = &timer{
		s:      s,
		calls:  []call{{key, sc.fill.last() + sc.after, sc.cost, sc.v}},
		args:   args(s, ps),
		copies: sc.writes(),
		check: func(reply any) error {
			if allowed(reply) != want {
				return fmt.Errorf("the decision replied %v, want allowed = %d", reply, want)
			}
			return nil
		},
	}
	r.commands, err = m.first(r.timer)
	return err
}

// countEntries counts the entries a key's state holds: the members of its
// zsets and the elements of its lists.
func (m *measurer) countEntries(s script, key string, v map[string]int64) (int64, error) {
	var n int64
	for _, name := range keyNames(s, key, v) {
		typ, err := m.rdb.Type(m.ctx, name).Result()
		if err != nil {
			return 0, err
		}
		switch typ {
		case "zset":
			c, err := m.rdb.ZCard(m.ctx, name).Result()
			if err != nil {
				return 0, err
			}
			n += c
		case "list":
			c, err := m.rdb.LLen(m.ctx, name).Result()
			if err != nil {
				return 0, err
			}
			n += c
		}
	}
	return n, nil
}

// decision describes a scenario's measured decision: its parameters, cost,
// time and outcome.
func (sc scenario) decision() string {
	var ps []string
	for _, p := range sc.script().Params {
		if x, ok := sc.v[p]; ok {
			ps = append(ps, fmt.Sprintf("%s %d", p, x))
		}
	}
	when := "at the last request"
	switch {
	case sc.after > 0:
		when = fmt.Sprintf("%d ms after the last request", sc.after)
	case sc.after < 0:
		when = fmt.Sprintf("%d ms before the last request", -sc.after)
	}
	outcome := "denied"
	if sc.allowed {
		outcome = "allowed"
	}
	return fmt.Sprintf("%s; cost %d, %s: %s", strings.Join(ps, ", "), sc.cost, when, outcome)
}

// typical is the time of the same algorithm's denied decision in the
// first table at the largest limit not above entries, or at its smallest
// limit if all are above.
func typical(rows []*row, alg string, entries int64) string {
	var below, smallest *row
	for _, r := range rows {
		if r.label != alg {
			continue
		}
		if r.L <= entries && (below == nil || r.L > below.L) {
			below = r
		}
		if smallest == nil || r.L < smallest.L {
			smallest = r
		}
	}
	best := below
	if best == nil {
		best = smallest
	}
	if best == nil {
		return "?"
	}
	return fmt.Sprintf("%s (L = %d)", micros(median(best.timer.usec)), best.L)
}

// printWorst prints the worst-case table.
func printWorst(w io.Writer, worst []*worstRow, rows []*row) {
	if len(worst) == 0 {
		return
	}
	fmt.Fprintf(w, "\nWorst cases: the decisions that once read every entry a key holds, on keys holding many. Each key is filled through its script, pipelined, "+
		"then one decision is repeated on it; a decision that writes runs each time on a fresh copy of the key (COPY, not timed). "+
		"Stored entries: zset members and list elements, before the decision. Time: as above (EVALSHA usec_per_call, median of %d rounds, Lua's garbage collected before each). "+
		"Typical: the denied decision of the first table, same algorithm, at the largest L not above the stored entries.\n\n", sweeps)
	fmt.Fprintln(w, "| worst case | algorithm | stored entries | the decision | commands per decision | time per decision (µs, Redis-side CPU) | typical (µs) |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range worst {
		s := r.sc.script()
		cell := "not measured: " + strings.ReplaceAll(fmt.Sprint(r.err), "|", "/")
		if r.err == nil {
			cell = micros(median(r.timer.usec))
		}
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s |\n", r.sc.label, s.Name, r.entries,
			r.sc.decision(), r.commands, cell, typical(rows, s.Algorithm, r.entries))
	}
}

// notMeasured is the error of a run some of whose worst cases were not
// measured, or nil.
func notMeasured(worst []*worstRow) error {
	n := 0
	for _, r := range worst {
		if r.err != nil {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d worst cases not measured (see the table)", n, len(worst))
}
