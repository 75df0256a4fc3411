// Command measure reports, for every generated decision script on a real
// Redis, what one active key costs at growing limits: its memory (MEMORY
// USAGE ... SAMPLES 0, summed over the key's state keys), the Redis
// commands of one admitted and of one denied decision (from INFO
// commandstats deltas) and the Redis-side time of a decision at a full key
// (EVALSHA's usec_per_call in commandstats). A second table gives the same
// for the views (read-backs of a full key), a third the worst cases. The
// measure block of docs/performance.md is its output.
//
//	go run ./cmd/measure -redis redis://127.0.0.1:6379
//
// The load: for each algorithm and limit L, each measured key is filled to
// its limit within one window by L admitted requests of cost 1: L-1, then
// the measured admission; its memory is read when full, then it gets the
// measured denied requests. Windowed algorithms get the requests spread
// evenly over their 60 s window_ms from an epoch-aligned instant, so
// sliding_log holds L zset entries, meta_window L list entries and
// bucket_window one field per bucket of 1 s (60 from L = 60 on); the
// rate-based ones (token_bucket, gcra, leaky_bucket) get them at one
// instant. bucket_window is measured twice: with one tier, and with the
// three tiers of "L per 1 s, 5L per 10 s, 7L per 15 s", filled to its
// widest tier by 7L requests over its 15 buckets. meta_window's requests
// carry the 10-byte meta "user:12345". Requests are pipelined in batches
// of 1000 (in production each decision is one EVALSHA: one round trip),
// and max(1, round(2000/L)) keys are measured per row.
//
// bucket_window reads all its buckets at each decision: above L = 1000 its
// first L-1 requests are written directly, as the script would write them
// (TestSeeders checks that both give the same state), and the measured
// decisions run the script.
//
// Parameters: the first (limit, capacity, burst) is L, bucket_ms is 1000,
// other *_ms are 60000, optional parameters are left out (single tier),
// the others (rates) are L.
//
// The time is EVALSHA's usec per call in INFO commandstats over rounds of
// denied decisions (or read-backs) at the full keys, each round preceded
// by a full collection of Lua's garbage (so that a large script's garbage
// is not billed to the next); the rounds come in sweeps over all rows, once
// every key is filled, and the table gives the median of each row's, so
// that a slow spell of the machine touches few of a row's rounds. It
// writes only under its own random key prefix and deletes what it wrote.
//
// A last table (measurePolicy) compares ip_user's six limits decided as
// one policy with the same six called one by one and pipelined.
//
// A third table gives the worst cases (worstCases): the decisions whose
// work grows with the entries a key holds, each on a key set up for it
// (sliding_log and meta_window full at limit WorstEntries, with a limit
// lowered by configuration, a large cost, a window passed, entries at one
// instant; bucket_window at its 3600 buckets),
// with the stored entries, the commands and the time of the decision (as
// above), next to the typical time of the first table. Keys are written
// directly by a writer when it gives the same state as the script on a
// few requests of the fill (checked before each fill), else filled through
// the script within fillBudget; a decision that writes runs each time on
// a fresh COPY of its key. A row that could not be measured says why, and
// the command then exits with an error.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/limitspec/limitspec/kit"
	"github.com/redis/go-redis/v9"
)

func main() {
	url := flag.String("redis", os.Getenv("REDIS_URL"), "URL of the Redis to measure on (default $REDIS_URL)")
	flag.Parse()
	if *url == "" {
		fmt.Fprintln(os.Stderr, "measure: -redis URL is required")
		os.Exit(2)
	}
	if err := run(*url, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
}

// Limits are the limits each algorithm is measured at.
var Limits = []int64{10, 1000, 100000}

const (
	// now0 is the time of the first request: a multiple of 60000 ms, so
	// that the epoch-aligned windows of fixed_window and sliding_window
	// start there.
	now0 = 1699999980000
	// Meta is the string passed for every string input (meta_window's
	// meta): a realistic user id of 10 bytes.
	Meta = "user:12345"
	// batch is the number of calls per pipeline.
	batch = 1000
	// The time per decision is the median of sweeps rounds of about
	// roundTime, each of at most maxChunk calls.
	sweeps    = 9
	roundTime = 20 * time.Millisecond
	maxChunk  = 200
	// maxCopies bounds the calls per round of a timer whose calls write,
	// each on a copy of a key that may hold 10^5 entries.
	maxCopies = 10
	// keepFor is the TTL of the measured keys once full, for the sweeps.
	keepFor = 10 * time.Minute
)

// keysFor is the number of keys measured at limit L: about 2000 requests
// per row, at least one key.
func keysFor(L int64) int64 {
	return max(1, (2000+L/2)/L)
}

// A rowSet is one line of the table per limit: a decision script and how
// its parameters follow L.
type rowSet struct {
	label  string
	script script
	values func(L int64) map[string]int64
}

// rowSets lists the decision scripts with the default parameters, and
// bucket_window once more with three tiers. An algorithm whose limits
// write no state (inFlight: concurrency) is left out: alone it admits
// every request within its limit, and keeps nothing to measure; its
// quota is a holding policy's holds (docs/semantics.md, "Holds").
func rowSets() []rowSet {
	var out []rowSet
	for _, s := range allScripts() {
		if s.View != "" || inFlight(s) {
			continue
		}
		out = append(out, rowSet{label: s.Name, script: s, values: func(L int64) map[string]int64 { return defaultValues(s, L) }})
		if s.Name == "bucket_window" {
			out = append(out, rowSet{label: s.Name + " (3 tiers)", script: s, values: tieredValues})
		}
	}
	return out
}

// defaultValues scales an algorithm's parameters with L; optional
// parameters are left out.
func defaultValues(s script, L int64) map[string]int64 {
	v := map[string]int64{}
	for i, p := range s.Params {
		_, optional := s.Defaults[p]
		switch {
		case i == 0:
			v[p] = L
		case optional:
		case p == "bucket_ms":
			v[p] = 1000
		case strings.HasSuffix(p, "_ms"):
			v[p] = 60000
		default:
			v[p] = L
		}
	}
	return v
}

// tieredValues is README's "1000 per 1 s, 5000 per 10 s, 7000 per 15 s"
// with 1000 replaced by L.
func tieredValues(L int64) map[string]int64 {
	return map[string]int64{
		"limit": L, "window_ms": 1000, "bucket_ms": 1000,
		"limit_2": 5 * L, "window_ms_2": 10000,
		"limit_3": 7 * L, "window_ms_3": 15000,
	}
}

// params puts the values in ARGV order. An optional parameter without a
// value takes its default, and trailing ones are left out.
func params(s script, v map[string]int64) ([]any, error) {
	var out []any
	given := 0
	for i, p := range s.Params {
		if x, ok := v[p]; ok {
			for len(out) < i {
				out = append(out, s.Defaults[s.Params[len(out)]])
			}
			out = append(out, x)
			given++
		} else if _, optional := s.Defaults[p]; !optional {
			return nil, fmt.Errorf("no value for parameter %s", p)
		}
	}
	if given != len(v) {
		return nil, fmt.Errorf("values %v name parameters %s does not have", v, s.Params)
	}
	return out, nil
}

// load is how a key is filled: n admitted requests of cost 1, spread
// evenly over span ms (request i at now0 + i*span/n). It fills the widest
// tier (window_ms, window_ms_2, window_ms_3) to its limit; without a
// window, the first parameter's worth arrives at one instant.
func load(s script, v map[string]int64) (n, span int64) {
	n, span = v[s.Params[0]], v["window_ms"]
	for _, suffix := range []string{"_2", "_3"} {
		if w := v["window_ms"+suffix]; w > span {
			n, span = v["limit"+suffix], w
		}
	}
	return n, span
}

func at(i, n, span int64) int64 { return now0 + i*span/n }

type measurer struct {
	ctx    context.Context
	rdb    *redis.Client
	prefix string
	// known are the commands any script calls, as named in commandstats.
	known map[string]bool
	// composed is the script of the policy comparison (measurePolicy).
	composed kit.Script
}

// newMeasurer loads every script and chooses a random key prefix.
func newMeasurer(ctx context.Context, rdb *redis.Client) (*measurer, error) {
	b := make([]byte, 6)
	rand.Read(b)
	m := &measurer{ctx: ctx, rdb: rdb, prefix: "limitspec-measure:" + hex.EncodeToString(b) + ":", known: map[string]bool{}}
	for _, s := range allScripts() {
		sha, err := rdb.ScriptLoad(ctx, s.Source).Result()
		if err != nil {
			return nil, fmt.Errorf("SCRIPT LOAD %s: %v", s.Name, err)
		}
		if sha != s.SHA1 {
			return nil, fmt.Errorf("%s: SCRIPT LOAD gave %s, allScripts() says %s", s.Name, sha, s.SHA1)
		}
		for _, c := range scriptCommands(s) {
			m.known[c] = true
		}
	}
	return m, nil
}

func run(url string, w io.Writer) error {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	// A pipeline that times out is never sent again: a retry would run
	// its decisions twice, and the fill would count past the limit. A
	// loaded machine gets 30 s per reply before the run stops.
	opt.MaxRetries, opt.ReadTimeout, opt.ContextTimeoutEnabled = -1, 30*time.Second, true
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("cannot reach Redis at %s: %v", opt.Addr, err)
	}
	version, _ := serverVersion(ctx, rdb)
	m, err := newMeasurer(ctx, rdb)
	if err != nil {
		return err
	}
	defer cleanup(ctx, rdb, m.prefix)

	rows, views, err := m.measureRows()
	if err != nil {
		return err
	}
	// The worst cases, on keys of their own.
	worst := m.measureWorst(worstCases(WorstEntries))
	if err := m.sweep(rows, views, worst); err != nil {
		return err
	}
	printRows(w, version, rows, views)
	printWorst(w, worst, rows)
	ways, err := m.measurePolicy()
	if err != nil {
		return fmt.Errorf("policy comparison: %v", err)
	}
	printPolicy(w, ways)
	rc, err := m.measureRequests()
	if err != nil {
		return err
	}
	printRequests(w, rc)
	return notMeasured(worst)
}

// measureRows fills and measures every row, keeping the keys for the
// timing.
func (m *measurer) measureRows() (rows, views []*row, err error) {
	for _, rs := range rowSets() {
		for _, L := range Limits {
			r, vr, err := m.measure(rs, L)
			if err != nil {
				return nil, nil, fmt.Errorf("%s, L=%d: %v", rs.label, L, err)
			}
			rows = append(rows, r)
			views = append(views, vr...)
		}
	}
	return rows, views, nil
}

// sweep times every row, view and worst case in sweeps over them all, so
// that a slow spell of the machine touches few samples of any row.
func (m *measurer) sweep(rows, views []*row, worst []*worstRow) error {
	timers := map[*timer]string{}
	var order []*timer
	for _, r := range append(slices.Clone(rows), views...) {
		timers[r.timer] = fmt.Sprintf("%s, L=%d", r.label, r.L)
		order = append(order, r.timer)
	}
	for _, r := range worst {
		if r.timer != nil {
			timers[r.timer] = r.sc.script().Name + ", " + r.sc.label
			order = append(order, r.timer)
		}
	}
	for range sweeps {
		for _, t := range order {
			if err := m.round(t, t.chunk); err != nil {
				return fmt.Errorf("%s: %v", timers[t], err)
			}
		}
	}
	return nil
}

// printRows prints the load, then the table of rows and that of views.
func printRows(w io.Writer, version string, rows, views []*row) {
	fmt.Fprintf(w, "Measured on Redis %s with `go run ./cmd/measure`. Load: each key is filled to its limit L within one window by L admitted requests of cost 1, "+
		"spread evenly over the 60 s window (bucket_window: over its buckets of 1 s), at one instant for token_bucket, gcra and leaky_bucket; "+
		"the tiered bucket_window (L per 1 s, 5L per 10 s, 7L per 15 s) by 7L requests over its 15 buckets. "+
		"Measured: the L-th admission, the memory of the full key, denied requests at the full key. "+
		"meta_window's requests carry the 10-byte meta %q. Requests are pipelined in batches of %d (in production each decision is one EVALSHA: one round trip). "+
		"Time: Redis-side CPU time of a denied decision at the full key (EVALSHA usec_per_call in INFO commandstats, median of %d rounds spread over the run, Lua's garbage collected before each).\n\n",
		version, Meta, batch, sweeps)
	fmt.Fprintln(w, "| algorithm | limit L | keys measured | bytes per key (MEMORY USAGE) | keys per limiter key | commands per admitted decision | commands per denied decision | time per decision (µs, Redis-side CPU) | round trips |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %s | %s | %s | 1 |\n", r.label, r.L, len(r.timer.calls), r.bytes, len(r.timer.s.Keys), r.admitted, r.denied, micros(median(r.timer.usec)))
	}
	if len(views) == 0 {
		return
	}
	fmt.Fprintf(w, "\nThe views, read back on the same full keys (L entries each):\n\n")
	fmt.Fprintln(w, "| view | limit L | keys measured | entries read back | commands per read-back | time per read-back (µs, Redis-side CPU) | round trips |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range views {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %s | 1 |\n", r.label, r.L, len(r.timer.calls), r.entries, r.denied, micros(median(r.timer.usec)))
	}
}

// A row is what one table line reports. For a view, denied holds the
// commands per read-back.
type row struct {
	label            string
	L                int64
	bytes, entries   int64
	admitted, denied string
	timer            *timer
}

// A timer repeats calls that do not change the state (denied decisions,
// read-backs), cycling over them, and collects EVALSHA's usec per call of
// each round.
type timer struct {
	s     script
	calls []call
	args  func(call) []any
	check func(any) error
	chunk int // calls per round
	done  int
	usec  []float64
	// lastStats is commandstats after the last round.
	lastStats map[string]stat
	// copies, when set, runs each call on a fresh copy of its key (for
	// calls that write): the copy is made before the round and deleted
	// after it.
	copies bool
}

type call struct {
	key     string
	t, cost int64
	// v are the parameters, which the key's names carry.
	v map[string]int64
}

// keyNames are the names of s's keys for key under the parameters v.
func keyNames(s script, key string, v map[string]int64) []string {
	params := map[string]string{}
	for name, x := range v {
		params[name] = strconv.FormatInt(x, 10)
	}
	return s.KeyNames(key, params)
}

// args is the ARGV of a decision: now_ms, cost, force (0: a decision),
// the strings, the parameters.
func args(s script, ps []any) func(call) []any {
	return func(c call) []any {
		a := []any{c.t, c.cost, kit.ForceArg(false)}
		for range s.Strings {
			a = append(a, Meta)
		}
		return append(a, ps...)
	}
}

// fill gives each key the first n-1 admitted requests of the load,
// through the script, pipelined.
func (m *measurer) fill(s script, v map[string]int64, keys []string, n, span int64) error {
	ps, err := params(s, v)
	if err != nil {
		return err
	}
	var calls []call
	flush := func() error {
		replies, err := m.eval(s, calls, args(s, ps))
		if err != nil {
			return err
		}
		for i, r := range replies {
			if allowed(r) != 1 {
				return fmt.Errorf("request at %d of the fill on %s was denied: %v", calls[i].t, calls[i].key, r)
			}
		}
		calls = calls[:0]
		return nil
	}
	for i := int64(0); i < n-1; i++ {
		for _, k := range keys {
			calls = append(calls, call{k, at(i, n, span), 1, v})
			if len(calls) == batch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

// measure fills keysFor(L) keys and measures them; it returns the row and
// the rows of the algorithm's views, whose timers are ready for sweeps.
// The keys stay until cleanup.
func (m *measurer) measure(rs rowSet, L int64) (*row, []*row, error) {
	s := rs.script
	v := rs.values(L)
	ps, err := params(s, v)
	if err != nil {
		return nil, nil, err
	}
	n, span := load(s, v)
	base := fmt.Sprintf("%s%s:%d:", m.prefix, strings.ReplaceAll(rs.label, " ", "_"), L)
	keys := make([]string, keysFor(L))
	for k := range keys {
		keys[k] = base + strconv.Itoa(k)
	}
	if err := m.fill(s, v, keys, n, span); err != nil {
		return nil, nil, err
	}
	last := at(n-1, n, span)
	one := make([]call, len(keys))
	for k, key := range keys {
		one[k] = call{key, last, 1, v}
	}
	r := &row{label: rs.label, L: L}
	if r.admitted, err = m.admitLast(s, one, ps); err != nil {
		return nil, nil, err
	}
	if r.bytes, err = m.memoryPerKey(s, keys, v); err != nil {
		return nil, nil, err
	}
	// One denied request at each full key.
	r.timer = &timer{s: s, calls: one, args: args(s, ps), check: func(reply any) error {
		if allowed(reply) != 0 {
			return fmt.Errorf("a request at a full key was not denied: %v", reply)
		}
		return nil
	}}
	if r.denied, err = m.first(r.timer); err != nil {
		return nil, nil, err
	}
	views, err := m.viewRows(s, v, one, L)
	return r, views, err
}

// admitLast makes the n-th admission of each key and returns the
// commands per call it took.
func (m *measurer) admitLast(s script, one []call, ps []any) (string, error) {
	before, err := commandStats(m.ctx, m.rdb)
	if err != nil {
		return "", err
	}
	replies, err := m.eval(s, one, args(s, ps))
	if err != nil {
		return "", err
	}
	for _, r := range replies {
		if allowed(r) != 1 {
			return "", fmt.Errorf("the last request of the fill was denied: %v", r)
		}
	}
	after, err := commandStats(m.ctx, m.rdb)
	if err != nil {
		return "", err
	}
	return m.perCall(s, before, after, int64(len(one))), nil
}

// memoryPerKey is the mean memory of the full keys; it gives each a TTL
// long enough for the timing sweeps (the scripts' own are 60 s beyond the
// window).
func (m *measurer) memoryPerKey(s script, keys []string, v map[string]int64) (int64, error) {
	var bytes int64
	for _, key := range keys {
		for _, name := range keyNames(s, key, v) {
			b, err := m.rdb.MemoryUsage(m.ctx, name, 0).Result()
			if err != nil {
				return 0, fmt.Errorf("MEMORY USAGE %s: %v", name, err)
			}
			bytes += b
			if err := m.rdb.PExpire(m.ctx, name, keepFor).Err(); err != nil {
				return 0, err
			}
		}
	}
	return bytes / int64(len(keys)), nil
}

// viewRows are the rows of s's views, read back on the same full keys.
func (m *measurer) viewRows(s script, v map[string]int64, one []call, L int64) ([]*row, error) {
	var views []*row
	for _, view := range allScripts() {
		if view.Algorithm != s.Algorithm || view.View == "" {
			continue
		}
		vv := map[string]int64{}
		for _, p := range view.Params {
			if x, ok := v[p]; ok {
				vv[p] = x
			}
		}
		vps, err := params(view, vv)
		if err != nil {
			return nil, fmt.Errorf("view %s: %v", view.Name, err)
		}
		vr := &row{label: view.Name, L: L, entries: -1}
		vr.timer = &timer{s: view, calls: one, args: func(c call) []any { return append([]any{c.t}, vps...) }, check: vr.checkEntries}
		if vr.denied, err = m.first(vr.timer); err != nil {
			return nil, err
		}
		views = append(views, vr)
	}
	return views, nil
}

// checkEntries checks a view's reply: a list of entries, as many at every
// read-back.
func (vr *row) checkEntries(reply any) error {
	got, ok := reply.([]any)
	if !ok {
		return fmt.Errorf("view %s replied %T", vr.label, reply)
	}
	if vr.entries >= 0 && int64(len(got)) != vr.entries {
		return fmt.Errorf("view %s read back %d entries, then %d", vr.label, vr.entries, len(got))
	}
	vr.entries = int64(len(got))
	return nil
}

// first runs each call of a timer once and returns the commands per call;
// it sets the timer's chunk so that a round takes about roundTime.
func (m *measurer) first(t *timer) (string, error) {
	before, err := commandStats(m.ctx, m.rdb)
	if err != nil {
		return "", err
	}
	start := time.Now()
	if err := m.round(t, len(t.calls)); err != nil {
		return "", err
	}
	each := time.Since(start)/time.Duration(len(t.calls)) + 1
	t.usec = nil // the first calls warm up
	t.chunk = int(min(maxChunk, max(1, roundTime/each)))
	if t.copies {
		t.chunk = min(t.chunk, maxCopies)
	}
	return m.perCall(t.s, before, t.lastStats, int64(len(t.calls))), nil
}

// round runs n calls of a timer between two readings of commandstats.
// It first has Lua collect its garbage (by EVAL, not counted in EVALSHA's
// usec): Redis runs a step of Lua's collector every 50 script calls, in
// whatever script comes then, so the garbage of a large decision (a
// sliding_log of 100000 entries) would be billed to the next rows.
func (m *measurer) round(t *timer, n int) error {
	cs, err := m.roundCalls(t, n)
	if err != nil {
		return err
	}
	if t.copies {
		defer m.deleteCopies(t.s, cs)
	}
	if err := m.rdb.Eval(m.ctx, "collectgarbage('collect') return 0", nil).Err(); err != nil {
		return fmt.Errorf("Lua collectgarbage: %v", err)
	}
	before, err := commandStats(m.ctx, m.rdb)
	if err != nil {
		return err
	}
	replies, err := m.eval(t.s, cs, t.args)
	if err != nil {
		return err
	}
	for _, r := range replies {
		if err := t.check(r); err != nil {
			return err
		}
	}
	after, err := commandStats(m.ctx, m.rdb)
	if err != nil {
		return err
	}
	t.done += n
	t.usec = append(t.usec, usecPerCall(before, after))
	t.lastStats = after
	return nil
}

// roundCalls returns the n calls of a timer's next round, its calls in
// turn; for a timer with copies, each on a new copy (COPY, which keeps the
// TTL) of the call's key.
func (m *measurer) roundCalls(t *timer, n int) ([]call, error) {
	cs := make([]call, n)
	for i := range cs {
		cs[i] = t.calls[(t.done+i)%len(t.calls)]
		if !t.copies {
			continue
		}
		from := cs[i].key
		cs[i].key = from + ":copy:" + strconv.Itoa(t.done+i)
		dst := keyNames(t.s, cs[i].key, cs[i].v)
		for k, name := range keyNames(t.s, from, cs[i].v) {
			if err := m.rdb.Copy(m.ctx, name, dst[k], 0, false).Err(); err != nil {
				return nil, fmt.Errorf("COPY %s: %v", name, err)
			}
		}
	}
	return cs, nil
}

// deleteCopies deletes the keys of a round's copies.
func (m *measurer) deleteCopies(s script, cs []call) {
	for _, c := range cs {
		m.rdb.Unlink(m.ctx, keyNames(s, c.key, c.v)...)
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// eval runs the calls by EVALSHA, pipelined in batches.
func (m *measurer) eval(s script, calls []call, args func(call) []any) ([]any, error) {
	var out []any
	for from := 0; from < len(calls); from += batch {
		pipe := m.rdb.Pipeline()
		cmds := make([]*redis.Cmd, 0, batch)
		for _, c := range calls[from:min(from+batch, len(calls))] {
			cmds = append(cmds, pipe.EvalSha(m.ctx, s.SHA1, keyNames(s, c.key, c.v), args(c)...))
		}
		if _, err := pipe.Exec(m.ctx); err != nil {
			return nil, fmt.Errorf("EVALSHA %s: %v", s.Name, err)
		}
		for _, c := range cmds {
			out = append(out, c.Val())
		}
	}
	return out, nil
}

// allowed is the first integer of a decision's reply, -1 if none.
func allowed(reply any) int64 {
	if a, ok := reply.([]any); ok && len(a) > 0 {
		if x, ok := a[0].(int64); ok {
			return x
		}
	}
	return -1
}

var callRE = regexp.MustCompile(`redis\.call\('([A-Za-z]+)'`)

// scriptCommands lists the commands a script calls, in the order they
// first appear in its source, lower case as in commandstats.
func scriptCommands(s script) []string {
	var out []string
	for _, m := range callRE.FindAllStringSubmatch(s.Source, -1) {
		if c := strings.ToLower(m[1]); !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

type stat struct{ calls, usec int64 }

// commandStats reads the calls and usec of every command from INFO
// commandstats.
func commandStats(ctx context.Context, rdb *redis.Client) (map[string]stat, error) {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := map[string]stat{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var st stat
		for _, kv := range strings.Split(rest, ",") {
			k, val, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				st.calls, _ = strconv.ParseInt(val, 10, 64)
			case "usec":
				st.usec, _ = strconv.ParseInt(val, 10, 64)
			}
		}
		out[strings.TrimPrefix(name, "cmdstat_")] = st
	}
	return out, nil
}

// perCall lists the commands the scripts ran between two readings, per
// call, in the order the script calls them first; commands no script
// calls (the script call itself, the measuring commands) are left out.
func (m *measurer) perCall(s script, before, after map[string]stat, calls int64) string {
	names := scriptCommands(s)
	var rest []string
	for name := range after {
		if m.known[name] && !slices.Contains(names, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	var parts []string
	for _, name := range append(names, rest...) {
		d := after[name].calls - before[name].calls
		if d == 0 {
			continue
		}
		per := strconv.FormatFloat(float64(d)/float64(calls), 'f', 2, 64)
		per = strings.TrimSuffix(strings.TrimRight(per, "0"), ".")
		parts = append(parts, strings.ToUpper(name)+" "+per)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// usecPerCall is EVALSHA's usec_per_call between two readings.
func usecPerCall(before, after map[string]stat) float64 {
	b, a := before["evalsha"], after["evalsha"]
	if a.calls == b.calls {
		return 0
	}
	return float64(a.usec-b.usec) / float64(a.calls-b.calls)
}

// micros rounds a time in µs to two significant digits: it varies by
// some 10% between runs.
func micros(us float64) string {
	if us <= 0 {
		return "?"
	}
	digits := int(math.Floor(math.Log10(us))) - 1
	scale := math.Pow(10, float64(digits))
	return strconv.FormatFloat(math.Round(us/scale)*scale, 'f', max(0, -digits), 64)
}

func serverVersion(ctx context.Context, rdb *redis.Client) (string, error) {
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v, nil
		}
	}
	return "?", nil
}

func cleanup(ctx context.Context, rdb *redis.Client, prefix string) {
	iter := rdb.Scan(ctx, 0, "{"+prefix+"*", 500).Iterator()
	for iter.Next(ctx) {
		rdb.Del(ctx, iter.Val())
	}
}
