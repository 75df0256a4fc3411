// Command mkvectors writes the generated conformance vectors:
//
//	go run ./cmd/mkvectors [-out vectors]
//
// Each algorithm, and each policy of spec/policies.yaml, gets edge
// scenarios; an algorithm's are (window boundaries, several requests
// in one ms, peeks, costs above the limit, long idle gaps, interleaved
// keys, a clock stepping backwards, emission intervals that are not a whole
// ms), refused input, and long random traces; meta_window's also read the
// recorded entries back. Their expectations come from package oracle.
// Generated files are named <out>/<algorithm>/gen-*.json; every other file
// in <out> is written by hand and left alone. Output is deterministic:
// fixed seeds, sorted keys, two-space indentation.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/limitspec/limitspec/lua"
	"github.com/limitspec/limitspec/oracle"
)

func main() {
	out := flag.String("out", "vectors", "the vectors directory")
	flag.Parse()
	files, err := generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkvectors:", err)
		os.Exit(1)
	}
	old, _ := filepath.Glob(filepath.Join(*out, "*", "gen-*.json"))
	for _, f := range old {
		os.Remove(f)
	}
	for name, b := range files {
		path := filepath.Join(*out, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "mkvectors:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "mkvectors:", err)
			os.Exit(1)
		}
	}
	fmt.Printf("wrote %d vectors to %s\n", len(files), *out)
}

// vector is the contract's JSON shape. Params and Cost are raw so that a
// vector can carry a non-integer as refused input.
type vector struct {
	Name      string                     `json:"name"`
	Algorithm string                     `json:"algorithm"`
	Comment   string                     `json:"comment,omitempty"`
	Params    map[string]json.RawMessage `json:"params"`
	Steps     []step                     `json:"steps"`
}

// A step with View "entries" reads the key's recorded entries back
// instead of making a request: it has no cost and no meta.
type step struct {
	T         int64           `json:"t_ms"`
	Key       string          `json:"key"`
	Cost      json.RawMessage `json:"cost,omitempty"`
	Meta      *string         `json:"meta,omitempty"`
	View      string          `json:"view,omitempty"`
	Reset     bool            `json:"reset,omitempty"`
	Force     bool            `json:"force,omitempty"`
	WrongType any             `json:"wrong_type,omitempty"` // true, or the 1-based places of the keys
	Expect    map[string]any  `json:"expect"`
}

// call is one request of a scenario; a raw cost overrides cost.
type call struct {
	dt        int64  // ms after the previous call (negative: the clock steps back)
	at        *int64 // the call's time, instead of dt
	key       string
	cost      int64
	rawCost   string
	wrongType bool    // plant a value of another type at the keys first
	wrongKeys []int   // only at these keys (1-based places in KEYS)
	meta      *string // nil: the default meta, where the algorithm takes one
	view      bool    // read the key's entries back instead
	reset     bool    // delete the key's state instead
	force     bool    // the forced call: consumes the cost even when denied
}

func at(t int64) *int64 { return &t }

// keyCount is the number of state keys of the algorithm's script.
func keyCount(alg string) int {
	s, ok := lua.Lookup(alg)
	if !ok {
		panic("no script for " + alg)
	}
	return len(s.Keys)
}

// takesMeta reports whether every request of the algorithm carries a meta.
func takesMeta(alg string) bool { return alg == "meta_window" }

func str(s string) *string { return &s }

const t0 = 1700006400000 // 2023-11-15T00:00:00Z: a multiple of a second, a minute and a day

func rawInt(v int64) json.RawMessage { return json.RawMessage(fmt.Sprint(v)) }

func intParams(p map[string]int64) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range p {
		out[k] = rawInt(v)
	}
	return out
}

// build replays calls through the oracle and records its answers; refused
// input expects an error.
func build(name, alg, comment string, params map[string]json.RawMessage, calls []call) (vector, error) {
	v := vector{Name: alg + "/" + name, Algorithm: alg, Comment: comment, Params: params}
	ints := map[string]int64{}
	intOK := true
	for k, raw := range params {
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil {
			intOK = false
		}
		ints[k] = n
	}
	var m oracle.Model
	var mErr error = fmt.Errorf("non-integer parameter")
	if intOK {
		m, mErr = oracle.New(alg, ints)
	}
	t := int64(t0)
	requests := 0 // numbers the default metas
	for _, c := range calls {
		t += c.dt
		if c.at != nil {
			t = *c.at
		}
		if c.view {
			v.Steps = append(v.Steps, viewStep(m, mErr, t, c.key))
			continue
		}
		if c.reset {
			v.Steps = append(v.Steps, resetStep(m, mErr, t, c.key))
			continue
		}
		requests++
		s := step{T: t, Key: c.key, Cost: rawInt(c.cost), Meta: c.meta, Force: c.force}
		switch {
		case len(c.wrongKeys) > 0:
			s.WrongType = c.wrongKeys
		case c.wrongType:
			s.WrongType = true
		}
		if c.rawCost != "" {
			s.Cost = json.RawMessage(c.rawCost)
		}
		if s.Meta == nil && takesMeta(alg) {
			s.Meta = str(fmt.Sprintf("%s-%d", c.key, requests))
		}
		meta := ""
		if s.Meta != nil {
			meta = *s.Meta
		}
		var n int64
		costOK := json.Unmarshal(s.Cost, &n) == nil
		switch {
		case mErr != nil || !costOK || s.WrongType != nil:
			s.Expect = map[string]any{"error": true}
		default:
			decide := m.Decide
			if c.force {
				decide = m.Force
			}
			r, err := decide(c.key, t, n, meta)
			if err != nil {
				s.Expect = map[string]any{"error": true}
				break
			}
			s.Expect = map[string]any{
				"allowed": r.Allowed, "limit": r.Limit, "remaining": r.Remaining,
				"retry_after_ms": r.RetryAfterMs, "reset_after_ms": r.ResetAfterMs, "delay_ms": r.DelayMs,
			}
			if alg == "bucket_window" {
				s.Expect["tier"] = r.Tier
			}
		}
		v.Steps = append(v.Steps, s)
	}
	return v, nil
}

// viewStep reads a key's entries back at t: {"entries": [[t_ms, cost,
// meta], ...]}, or an error.
func viewStep(m oracle.Model, mErr error, t int64, key string) step {
	s := step{T: t, Key: key, View: "entries", Expect: map[string]any{"error": true}}
	lister, ok := m.(oracle.EntryLister)
	if mErr != nil || !ok {
		return s
	}
	entries, err := lister.Entries(key, t)
	if err != nil {
		return s
	}
	list := []any{}
	for _, e := range entries {
		list = append(list, []any{e.TMs, e.Cost, e.Meta})
	}
	s.Expect = map[string]any{"entries": list}
	return s
}

// resetStep deletes a key's state: {"error": false}, or an error.
func resetStep(m oracle.Model, mErr error, t int64, key string) step {
	s := step{T: t, Key: key, Reset: true, Expect: map[string]any{"error": true}}
	if mErr == nil && m.(oracle.Resetter).Reset(key) == nil {
		s.Expect = map[string]any{"error": false}
	}
	return s
}

// withViews follows every n-th call with a read-back of its key's entries.
func withViews(calls []call, n int) []call {
	var out []call
	for i, c := range calls {
		out = append(out, c)
		if (i+1)%n == 0 {
			out = append(out, call{key: c.key, view: true})
		}
	}
	return out
}

// paramSets are the parameters each algorithm is exercised with: small
// limits, an emission interval that is not a whole ms, and a large one.
var paramSets = map[string][]map[string]int64{
	"fixed_window":   {{"limit": 3, "window_ms": 1000}, {"limit": 7, "window_ms": 60000}, {"limit": 1, "window_ms": 1}},
	"token_bucket":   {{"capacity": 3, "refill_tokens": 7, "refill_ms": 1000}, {"capacity": 10, "refill_tokens": 1, "refill_ms": 60000}, {"capacity": 5, "refill_tokens": 3, "refill_ms": 7}},
	"gcra":           {{"burst": 3, "rate": 7, "period_ms": 1000}, {"burst": 16, "rate": 30, "period_ms": 60000}, {"burst": 1, "rate": 3, "period_ms": 10}},
	"leaky_bucket":   {{"capacity": 3, "rate": 7, "period_ms": 1000}, {"capacity": 16, "rate": 30, "period_ms": 60000}, {"capacity": 1, "rate": 3, "period_ms": 10}},
	"sliding_window": {{"limit": 3, "window_ms": 1000}, {"limit": 7, "window_ms": 60000}, {"limit": 2, "window_ms": 7}},
	"sliding_log":    {{"limit": 3, "window_ms": 1000}, {"limit": 7, "window_ms": 60000}, {"limit": 2, "window_ms": 7}},
	"meta_window":    {{"limit": 3, "window_ms": 1000}, {"limit": 7, "window_ms": 60000}, {"limit": 2, "window_ms": 7}},
	"bucket_window": {
		{"limit": 3, "window_ms": 1000, "bucket_ms": 100},
		{"limit": 7, "window_ms": 60000, "bucket_ms": 1000, "limit_2": 12, "window_ms_2": 120000},
		{"limit": 4, "window_ms": 1000, "bucket_ms": 1000, "limit_2": 10, "window_ms_2": 10000, "limit_3": 14, "window_ms_3": 15000},
		{"limit": 2, "window_ms": 7, "bucket_ms": 7},
	},
}

// limitOf is the largest cost the parameters admit at once: for tiers,
// the smallest limit of the used tiers.
func limitOf(p map[string]int64) int64 {
	for _, k := range []string{"limit", "capacity", "burst"} {
		if v, ok := p[k]; ok {
			for _, t := range []string{"limit_2", "limit_3"} {
				if p[t] > 0 {
					v = min(v, p[t])
				}
			}
			return v
		}
	}
	panic("no limit")
}

// scenarios returns the edge scenarios of one parameter set.
func scenarios(alg string, p map[string]int64) map[string]struct {
	comment string
	calls   []call
} {
	L := limitOf(p)
	burst := func(key string, n int64) []call {
		var cs []call
		for i := int64(0); i < n; i++ {
			cs = append(cs, call{dt: 0, key: key, cost: 1})
		}
		return cs
	}
	type sc = struct {
		comment string
		calls   []call
	}
	out := map[string]sc{}
	// Window edges: fill up, then probe the last ms before and the first ms
	// after a 1000 ms boundary (t0 is a multiple of 1000 ms and of 60000 ms).
	edge := append([]call{{dt: 999 - 100, key: "k", cost: 0}}, burst("k", L+1)...)
	edge = append(edge, call{dt: 100, key: "k", cost: 1}, call{dt: 1, key: "k", cost: 1}, call{dt: 58999, key: "k", cost: 1}, call{dt: 1, key: "k", cost: 1}, call{dt: 999, key: "k", cost: 1}, call{dt: 1, key: "k", cost: 1})
	out["window-edges"] = sc{"fills the limit at t0+899, then probes the last ms of a 1 s window (t0+999), the first of the next (t0+1000), and the same around the minute t0+60000/t0+61000", edge}
	out["same-ms"] = sc{"several requests in one ms until denied, then one ms later", append(burst("k", L+2), call{dt: 1, key: "k", cost: 1})}
	out["peek"] = sc{"cost 0 on a fresh key, after spending, and when exhausted: reports, consumes nothing, writes nothing",
		append(append([]call{{key: "k", cost: 0}, {key: "k", cost: 1}, {dt: 1, key: "k", cost: 0}}, burst("k", L)...), call{key: "k", cost: 0}, call{dt: 5, key: "k", cost: 0})}
	out["cost-above-limit"] = sc{"a cost above the limit is denied with retry_after_ms -1, fresh and after use; the limit itself is admitted on a full key",
		[]call{{key: "k", cost: L + 1}, {key: "k", cost: L}, {dt: 1, key: "k", cost: L + 1}, {dt: 1, key: "k", cost: 1 << 40}, {dt: 3600000, key: "k", cost: L}}}
	out["idle-gaps"] = sc{"long idle gaps: a day, a month, a year", append(append(burst("k", L), call{dt: 86400000, key: "k", cost: 1}, call{dt: 30 * 86400000, key: "k", cost: L}), call{dt: 365 * 86400000, key: "k", cost: 1})}
	inter := []call{}
	for i := int64(0); i < 2*L+4; i++ {
		inter = append(inter, call{dt: i % 3 * 7, key: []string{"alice", "bob"}[i%2], cost: 1})
	}
	out["interleaved-keys"] = sc{"two keys interleaved: each has its own state", inter}
	reset := append(append(burst("k", L), call{key: "k", reset: true}, call{key: "k", cost: L}, call{dt: 1, key: "fresh", reset: true}), burst("other", L)...)
	reset = append(reset, call{key: "other", reset: true}, call{key: "", reset: true}, call{key: "}x", reset: true}, call{key: "other", cost: 0})
	out["reset"] = sc{"a full key reset: the limit is admitted at once, as on a fresh key; resetting a key that has no state deletes nothing; an empty key or one beginning with '}' is refused and deletes nothing", reset}
	force := append(burst("k", L), call{key: "k", cost: 1, force: true}, call{key: "k", cost: 0}, call{dt: 1, key: "k", cost: L, force: true},
		call{key: "k", cost: 1, force: true}, call{dt: 1, key: "k", cost: 1}, call{dt: 1, key: "k", cost: 0, force: true})
	for _, dt := range []int64{500, 1000, 60000, 3600000} {
		force = append(force, call{dt: dt, key: "k", cost: 1})
	}
	force = append(force, call{key: "huge", cost: 1 << 40, force: true}, call{dt: 1, key: "huge", cost: 1}, call{key: "ok", cost: 1, force: true},
		call{key: "peek", cost: 0, force: true}, call{key: "peek", cost: L})
	out["force"] = sc{"forced calls: on a full key, cost 1 is charged though denied; cost limit is charged up to twice the limit; one more charges nothing; a normal request then waits until the debt is paid back (probed after 500 ms, 1 s, a minute, an hour); a forced cost 2^40 on a fresh key is charged up to twice the limit; a forced call that would be admitted is an admission; a forced peek writes nothing", force}
	back := append(burst("k", L-1), call{dt: 500, key: "k", cost: 1}, call{dt: -400, key: "k", cost: 1}, call{dt: -5000, key: "k", cost: 0}, call{dt: 3000, key: "k", cost: 1}, call{dt: -70000, key: "k", cost: 1}, call{dt: 140000, key: "k", cost: 1})
	out["clock-backwards"] = sc{"requests earlier than the key's last admission by at most MAX_SKEW_MS (60 s) are decided at that admission's time, durations still counting from the caller's clock; 70 s behind, the key is decided as if it had no state", back}
	skew := append(burst("k", L), call{dt: -oracle.MaxSkewMs, key: "k", cost: 1}, call{dt: -1, key: "k", cost: 1}, call{dt: oracle.MaxSkewMs + 1, key: "k", cost: 0})
	out["clock-skew-edge"] = sc{"a full key, then a request MAX_SKEW_MS (60000 ms) behind its last admission (trusted: decided at that time), one 1 ms further behind (not trusted: decided as a fresh key, which it replaces), and a peek back at the first time", skew}
	ahead := []call{{at: at(1 << 45), key: "k", cost: 1}, {at: at(t0), key: "k", cost: 1}, {dt: 1, key: "k", cost: 0}, {at: at(1 << 45), key: "k", cost: 1}, {at: at(t0 + 2), key: "k", cost: L}}
	out["clock-far-ahead"] = sc{"an admission at now_ms 2^45 (about the year 3085), then requests at t0: one wrong clock does not hold the key; each side decides the other's state as stale or long past", ahead}
	behind := append(burst("k", L), call{at: at(0), key: "k", cost: 1}, call{at: at(t0 + 1), key: "k", cost: 1}, call{dt: 1, key: "k", cost: 0})
	out["clock-far-behind"] = sc{"a full key at t0, then an admission at now_ms 0 (decided as a fresh key, its TTL counted from its own clock), then requests at t0 again: the state written at 0 is long past", behind}
	W := p["window_ms"]
	switch alg {
	case "sliding_log":
		exact := append([]call{{dt: 100, key: "k", cost: 1}}, burst("k", L-1)...)
		exact[1].dt = 1
		exact = append(exact, call{dt: W - 2, key: "k", cost: 1}, call{dt: 1, key: "k", cost: 1}, call{key: "k", cost: 1}, call{dt: 1, key: "k", cost: L - 1})
		out["log-exact-edge"] = sc{"1 at t = t0+100 and limit-1 at t+1; at t+window_ms-1 all still count (denied); at t+window_ms the first is exactly window_ms old and has left (admitted, then full again); at t+window_ms+1 the rest have left", exact}
		ham := []call{{dt: 100, key: "k", cost: L}}
		prev := int64(0)
		for d := int64(1); d <= W+2; d++ {
			if W > 20 && d > 5 && d < W-3 {
				continue // the long middle of a long window
			}
			ham = append(ham, call{dt: d - prev, key: "k", cost: 1})
			prev = d
		}
		out["denied-not-recorded"] = sc{"the limit at t = t0+100, then a client hammering every ms (the first and last ms of a long window): denied requests are not recorded, so it is admitted at t+window_ms, when the first admission leaves", ham}
	case "bucket_window":
		B := p["bucket_ms"]
		edge := append([]call{{dt: B - 1 - t0%B, key: "k", cost: 0}}, burst("k", L)...)
		edge = append(edge, call{dt: W - B, key: "k", cost: 1}, call{dt: 1, key: "k", cost: 1}, call{dt: B - 1, key: "k", cost: 0}, call{dt: 1, key: "k", cost: 0})
		out["bucket-edges"] = sc{"the limit in the last ms of a bucket b (b+bucket_ms-1, at or after t0): it counts until b+window_ms, when that bucket leaves the window (denied at b+window_ms-1, admitted at b+window_ms), then peeks around the next bucket edge", edge}
		var steady []call
		for round := int64(0); round < 20; round++ {
			cs := burst("k", L+1)
			if round > 0 {
				cs[0].dt = W
			}
			steady = append(steady, cs...)
		}
		out["steady"] = sc{"every window_ms, limit+1 requests of cost 1 in one ms, 20 times: the longer tiers, where set, bind in turn", steady}
	case "meta_window":
		entries := []call{
			{key: "k", view: true}, {key: "k", cost: 0, meta: str("peek")}, {key: "k", view: true},
			{dt: 10, key: "k", cost: 1, meta: str("alice")}, {key: "k", cost: 1, meta: str("bob")}, {key: "k", view: true},
			{dt: 1, key: "k", cost: L - 2, meta: str("carol")}, {key: "k", cost: 1, meta: str("mallory")}, {key: "k", view: true},
			{key: "other", view: true}, {dt: -5, key: "k", view: true},
			{dt: W + 3, key: "k", view: true}, {dt: 1, key: "k", view: true},
			{key: "k", cost: 0, meta: str("peek")}, {dt: 3, key: "k", cost: 1, meta: str("dave")}, {key: "k", view: true},
		}
		out["entries"] = sc{"read-backs: none on a fresh key or after a peek; the window opens at t0+10 with alice and bob, carol fills it at t0+11 (a cost of limit-2), mallory is denied and not recorded; another key has none; a lagging clock reads at the last admission; the last ms of the window still lists them, the next lists none; dave opens a new window that lists only him", entries}
	}
	if takesMeta(alg) {
		for n, s := range out {
			if n != "entries" {
				out[n] = sc{s.comment + "; each request is followed by a read-back of its key's entries", withViews(s.calls, 1)}
			}
		}
	}
	return out
}

// badInput returns the refused-input vectors of one algorithm.
func badInput(alg string, p map[string]int64) []vector {
	names, lo, hi := oracle.Params(alg)
	var out []vector
	add := func(name, comment string, params map[string]json.RawMessage, calls []call) {
		v, _ := build(name, alg, comment, params, calls)
		out = append(out, v)
	}
	ok := intParams(p)
	calls := []call{{key: "k", cost: 1}, {dt: 1, key: "k", cost: 0}}
	add("bad-negative-cost", "cost -1 is refused and writes nothing: the next request sees a fresh key",
		ok, []call{{key: "k", rawCost: "-1"}, {key: "k", cost: 1}})
	add("bad-non-integer-cost", "cost 1.5 and 1e3 are refused", ok,
		[]call{{key: "k", rawCost: "1.5"}, {key: "k", rawCost: "1e3"}, {key: "k", cost: 1}})
	add("bad-huge-cost", "cost 2^53 cannot be represented exactly in Lua and is refused; 2^53-1 is valid",
		ok, []call{{key: "k", rawCost: "9007199254740992"}, {key: "k", cost: 1<<53 - 1}})
	add("bad-empty-key", "the empty key is refused: {} is no hash tag", ok, []call{{key: "", cost: 1}, {key: "k", cost: 1}})
	add("bad-time", "now_ms outside [0, 2^45] is refused", ok, []call{{dt: -t0 - 1, key: "k", cost: 1}, {dt: t0 + 1, key: "k", cost: 1}, {dt: 1<<45 - t0 + 1, key: "k", cost: 1}})
	add("bad-wrong-type", "a state key holding another Redis type is an error (Redis-like targets only)", ok,
		[]call{{key: "k", cost: 1}, {key: "other", cost: 1, wrongType: true}})
	if n := keyCount(alg); n > 1 {
		var each []call
		for i := 1; i <= n; i++ {
			k := fmt.Sprint("k", i)
			each = append(each, call{key: k, cost: 1}, call{dt: 1, key: k, cost: 1, wrongKeys: []int{i}},
				call{key: fmt.Sprint("fresh", i), cost: 1, wrongKeys: []int{i}})
		}
		add("bad-wrong-type-each-key", "each state key on its own holding another Redis type, after an admission and on a fresh key: an error, and nothing written to the other keys (Redis-like targets only)", ok, each)
	}
	add("bad-key-brace", "a key beginning with '}' is refused: the hash tag of {}x}:... would be empty, and a cluster would spread the call's keys over slots", ok,
		[]call{{key: "}x", cost: 1}, {key: "}", cost: 1}, {key: "x}", cost: 1}})
	for i, n := range names {
		if !oracle.Optional(alg, n) {
			missing := intParams(p)
			delete(missing, n)
			add("bad-missing-"+n, "parameter "+n+" missing", missing, calls)
		}
		below := intParams(p)
		below[n] = rawInt(lo[i] - 1)
		add("bad-below-"+n, fmt.Sprintf("parameter %s below its domain [%d, %d]", n, lo[i], hi[i]), below, calls)
		above := intParams(p)
		above[n] = rawInt(hi[i] + 1)
		add("bad-above-"+n, fmt.Sprintf("parameter %s above its domain [%d, %d]", n, lo[i], hi[i]), above, calls)
		frac := intParams(p)
		frac[n] = json.RawMessage("2.5")
		add("bad-fraction-"+n, "parameter "+n+" not an integer", frac, calls)
	}
	switch alg {
	case "bucket_window":
		with := func(extra map[string]int64) map[string]json.RawMessage {
			q := intParams(p)
			for k, v := range extra {
				q[k] = rawInt(v)
			}
			return q
		}
		add("optional-zero", "the optional tiers set to 0 explicitly: unused, as when missing", with(map[string]int64{"limit_2": 0, "window_ms_2": 0, "limit_3": 0, "window_ms_3": 0}),
			[]call{{key: "k", cost: 1}, {key: "k", cost: limitOf(p)}, {dt: 1, key: "k", cost: 0}})
		add("bad-not-multiple", "window_ms 1000 is no multiple of bucket_ms 300", with(map[string]int64{"window_ms": 1000, "bucket_ms": 300}), calls)
		add("bad-too-many-buckets", "window_ms / bucket_ms = 3601 buckets, above 3600", with(map[string]int64{"window_ms": 3601000, "bucket_ms": 1000}), calls)
		add("many-buckets-edge", "window_ms / bucket_ms = 3600 buckets exactly is accepted: the limit admitted at t0 counts until t0+3600000", with(map[string]int64{"window_ms": 3600000, "bucket_ms": 1000}),
			[]call{{key: "k", cost: 3}, {dt: 3599999, key: "k", cost: 1}, {dt: 1, key: "k", cost: 1}})
		add("bad-half-tier", "limit_2 set without window_ms_2", with(map[string]int64{"limit_2": 5, "window_ms_2": 0}), calls)
		add("bad-half-tier-3", "window_ms_3 set without limit_3", with(map[string]int64{"window_ms_3": 2000}), calls)
		add("bad-tier-not-multiple", "window_ms_2 1050 is no multiple of bucket_ms 100", with(map[string]int64{"limit_2": 5, "window_ms_2": 1050}), calls)
		add("bad-tier-too-many-buckets", "window_ms_3 / bucket_ms = 3601 buckets, above 3600", with(map[string]int64{"limit_3": 9, "window_ms_3": 360100}), calls)
	case "meta_window":
		add("bad-meta-too-long", "a meta longer than 256 bytes is refused and records nothing, even for a peek; 256 bytes are accepted; the limit is in bytes, not characters (129 two-byte characters are 258 bytes)", ok,
			[]call{{key: "k", cost: 1, meta: str(strings.Repeat("m", 257))}, {key: "k", cost: 0, meta: str(strings.Repeat("m", 257))}, {key: "k", view: true},
				{key: "k", cost: 1, meta: str(strings.Repeat("m", 256))}, {dt: 1, key: "k", cost: 1, meta: str(strings.Repeat("é", 129))},
				{key: "k", cost: 1, meta: str(strings.Repeat("é", 128))}, {key: "k", view: true}})
	}
	if alg == "token_bucket" || alg == "gcra" || alg == "leaky_bucket" { // count, rate, period
		// names are count, rate, period: 10^6 x 10^9 = 10^15 exactly.
		joint := intParams(p)
		joint[names[0]] = rawInt(1000000)
		joint[names[2]] = rawInt(1000000001)
		add("bad-joint-bound", fmt.Sprintf("%s times %s above 10^15", names[0], names[2]), joint, calls)
		edge := intParams(p)
		edge[names[0]] = rawInt(1000000)
		edge[names[1]] = rawInt(10000)
		edge[names[2]] = rawInt(1000000000)
		add("joint-bound-edge", fmt.Sprintf("%s times %s exactly 10^15, and from empty to full in exactly 10^11 ms, is accepted", names[0], names[2]), edge,
			[]call{{key: "k", cost: 1000000}, {dt: 1, key: "k", cost: 1}, {dt: 86400000, key: "k", cost: 0}, {dt: 100000000000 - 86400001, key: "k", cost: 0}, {dt: 1, key: "k", cost: 0}})
		slow := intParams(p)
		slow[names[0]] = rawInt(1000000)
		slow[names[1]] = rawInt(9999)
		slow[names[2]] = rawInt(1000000000)
		add("bad-horizon", "from empty to full in more than 10^11 ms (about three years) is refused", slow, calls)
	}
	return out
}

// random returns a long random trace: several keys, costs from 0 to above
// the limit, gaps from 0 ms to days, and the clock sometimes stepping back.
func random(alg string, p map[string]int64, seed int64, n int) []call {
	rng := rand.New(rand.NewSource(seed))
	L := limitOf(p)
	keys := []string{"k1", "k2", "k3", "user:42"}
	var calls []call
	for i := 0; i < n; i++ {
		c := call{key: keys[rng.Intn(len(keys))], cost: rng.Int63n(min(L, 4) + 1)}
		switch r := rng.Intn(100); {
		case r < 40:
			c.dt = 0
		case r < 80:
			c.dt = rng.Int63n(200)
		case r < 90:
			c.dt = rng.Int63n(5000)
		case r < 95:
			c.dt = -rng.Int63n(2000)
		case r < 98:
			c.dt = rng.Int63n(200000)
		default:
			c.dt = rng.Int63n(3 * 86400000)
		}
		if rng.Intn(25) == 0 {
			c.cost = L + 1 + rng.Int63n(3)
		}
		c.force = rng.Intn(10) == 0
		calls = append(calls, c)
	}
	return calls
}

func generate() (map[string][]byte, error) {
	files := map[string][]byte{}
	put := func(v vector) error {
		b, err := marshal(v)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(v.Name, v.Algorithm+"/")
		files[filepath.Join(v.Algorithm, "gen-"+name+".json")] = b
		return nil
	}
	algs := make([]string, 0, len(paramSets))
	for a := range paramSets {
		algs = append(algs, a)
	}
	sort.Strings(algs)
	for _, alg := range algs {
		for i, p := range paramSets[alg] {
			sc := scenarios(alg, p)
			names := make([]string, 0, len(sc))
			for n := range sc {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				v, err := build(fmt.Sprintf("%s-p%d", n, i+1), alg, sc[n].comment+fmt.Sprintf(" (parameter set %d)", i+1), intParams(p), sc[n].calls)
				if err != nil {
					return nil, err
				}
				if err := put(v); err != nil {
					return nil, err
				}
			}
			calls := random(alg, p, int64(1000*i+len(alg)), 400)
			comment := "a long random trace, expectations from the oracle"
			if takesMeta(alg) {
				calls = withViews(calls, 8)
				comment += "; every 8th request is followed by a read-back of its key's entries"
			}
			v, err := build(fmt.Sprintf("random-p%d", i+1), alg, comment, intParams(p), calls)
			if err != nil {
				return nil, err
			}
			if err := put(v); err != nil {
				return nil, err
			}
		}
		for _, v := range badInput(alg, paramSets[alg][0]) {
			if err := put(v); err != nil {
				return nil, err
			}
		}
	}
	pvs, err := policyVectors()
	if err != nil {
		return nil, err
	}
	for _, v := range pvs {
		head := v
		head.Steps = nil
		b, err := marshalParts(v.Name, head, v.Steps)
		if err != nil {
			return nil, err
		}
		files[filepath.Join(v.Policy, "gen-"+strings.TrimPrefix(v.Name, v.Policy+"/")+".json")] = b
	}
	return files, nil
}

// marshal writes a vector with one step per line, for readable diffs.
func marshal(v vector) ([]byte, error) {
	head := v
	head.Steps = nil
	return marshalParts(v.Name, head, v.Steps)
}

// marshalParts writes a vector's head (its steps nil) and its steps.
func marshalParts[S any](name string, head any, steps []S) ([]byte, error) {
	var b bytes.Buffer
	h, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	b.Write(bytes.TrimSuffix(h, []byte(`,"steps":null}`)))
	b.WriteString(",\n\"steps\": [\n")
	for i, s := range steps {
		sb, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		b.WriteString("  ")
		b.Write(sb)
		if i < len(steps)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]}\n")
	var check any
	if err := json.Unmarshal(b.Bytes(), &check); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return b.Bytes(), nil
}
