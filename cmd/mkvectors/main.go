// Command mkvectors writes the generated conformance vectors:
//
//	go run ./cmd/mkvectors [-out vectors]
//
// Each algorithm, and each policy of spec/policies.yaml, gets edge
// scenarios; an algorithm's are (window boundaries, several requests
// in one ms, peeks, costs above the limit, long idle gaps, interleaved
// keys, a clock stepping backwards, emission intervals that are not a whole
// ms), refused input, long random traces, and limits changing between
// calls (change.go: amounts lowered and raised, which keep the state, and
// measures changed, which do not); an algorithm with an entries view also
// reads the recorded entries back. Their expectations come from
// package oracle. Generated files are named <out>/<algorithm>/gen-*.json
// (a policy's: <out>/<policy>/gen-*.json);
// every other file in <out> is written by hand and left alone. Output is
// deterministic: fixed seeds, sorted keys, two-space indentation.
//
// The code names no algorithm, policy or parameter. The generic scenarios
// (generic.go) need only the limit, which the oracle reports; the string
// inputs a request carries, and whether an algorithm has an entries view,
// come from its scripts (package kit's registry). Everything else is data, in scenarios.yaml
// (embedded): each algorithm's parameter sets, its extra edge scenarios
// and its vectors at the edges of its input domains, and each policy's
// per-call parameters and scenarios. There a scenario is a list of calls:
//
//	calls:
//	  - {dt: W - 2, cost: 1}           # W - 2 ms after the previous call
//	  - {cost: 1, repeat: L}           # L calls in the same ms
//	  - {ids: {<identity>: alice}}     # a policy's call, a peek
//	  - {repeat: 19, calls: [...]}     # a group of calls, repeated
//
// where dt, cost and repeat are integer expressions (+ - * / %, parentheses)
// over integers and symbols: T0, the time the first call starts from; L,
// the limit of the parameter set (what a peek on a fresh key reports); and
// the algorithm's symbols, each naming one of its parameters, resolved per
// parameter set. A scenario too irregular for that names a builder in Go
// (builders, data.go) instead. The head of scenarios.yaml documents every
// field.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/limitspec/limitspec/internal/oracle"
	"github.com/limitspec/limitspec/kit"
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
// instead of making a request: it has no cost and no inputs. A request's
// string input named meta is written in the contract's field meta, any
// other in inputs.
type step struct {
	T         int64                      `json:"t_ms"`
	Key       string                     `json:"key"`
	Cost      json.RawMessage            `json:"cost,omitempty"`
	Meta      *string                    `json:"meta,omitempty"`
	Inputs    map[string]string          `json:"inputs,omitempty"`
	View      string                     `json:"view,omitempty"`
	Params    map[string]json.RawMessage `json:"params,omitempty"`
	Reset     bool                       `json:"reset,omitempty"`
	Force     bool                       `json:"force,omitempty"`
	WrongType any                        `json:"wrong_type,omitempty"` // true, or the 1-based places of the keys
	Expect    map[string]any             `json:"expect"`
}

// call is one request of a scenario; a raw cost overrides cost.
type call struct {
	dt        int64  // ms after the previous call (negative: the clock steps back)
	at        *int64 // the call's time, instead of dt
	key       string
	cost      int64
	rawCost   string
	wrongType bool  // plant a value of another type at the keys first
	wrongKeys []int // only at these keys (1-based places in KEYS)
	// inputs are the string inputs the call gives; every other one the
	// algorithm takes gets its default (defaultInputs).
	inputs map[string]string
	view   bool // read the key's entries back instead
	reset  bool // delete the key's state instead
	force  bool // the forced call: consumes the cost even when denied
	// params, when set, are the parameters from this call on: a limit
	// changing between calls.
	params map[string]int64
}

// scenario is a named list of calls and the vector's comment.
type scenario struct {
	comment string
	calls   []call
}

// entriesView is the name of the view that reads a key's entries back.
const entriesView = "entries"

// algorithm is one algorithm: its name, its data from scenarios.yaml, and
// its scripts.
type algorithm struct {
	algorithmData
	name    string
	scripts *kit.Scripts
}

// defaultInputs are the string inputs of c, the n-th request of a
// vector: those c gives, and "<key>-<n>" for every other one the
// algorithm takes.
func (a algorithm) defaultInputs(c call, n int) map[string]string {
	out := maps.Clone(c.inputs)
	for _, name := range a.scripts.Inputs {
		if _, given := out[name]; !given {
			if out == nil {
				out = map[string]string{}
			}
			out[name] = fmt.Sprintf("%s-%d", c.key, n)
		}
	}
	return out
}

// setInputs writes a request's string inputs into s: the input named meta
// in the contract's field meta, the others in inputs.
func (s *step) setInputs(inputs map[string]string) {
	for name, v := range inputs {
		if name == "meta" {
			s.Meta = &v
			continue
		}
		if s.Inputs == nil {
			s.Inputs = map[string]string{}
		}
		s.Inputs[name] = v
	}
}

// hasEntries reports whether the algorithm's recorded entries can be read
// back.
func (a algorithm) hasEntries() bool {
	return slices.ContainsFunc(a.scripts.Views, func(v kit.View) bool { return v.Name == entriesView })
}

func at(t int64) *int64 { return &t }

const t0 = 1700006400000 // 2023-11-15T00:00:00Z: a multiple of a second, a minute and a day

func rawInt(v int64) json.RawMessage { return json.RawMessage(fmt.Sprint(v)) }

func intParams(p map[string]int64) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range p {
		out[k] = rawInt(v)
	}
	return out
}

// model is the oracle's model of alg with params on store's state, or why
// there is none.
func model(store *oracle.Store, alg string, params map[string]json.RawMessage) (oracle.Model, error) {
	ints := map[string]int64{}
	for k, raw := range params {
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, fmt.Errorf("non-integer parameter")
		}
		ints[k] = n
	}
	return store.Limit(alg, ints)
}

// build replays calls through the oracle and records its answers; refused
// input expects an error.
func build(name string, a algorithm, comment string, params map[string]json.RawMessage, calls []call) vector {
	v := vector{Name: a.name + "/" + name, Algorithm: a.name, Comment: comment, Params: params}
	store := oracle.NewStore()
	m, mErr := model(store, a.name, params)
	t := int64(t0)
	requests := 0 // numbers the default inputs
	for _, c := range calls {
		t += c.dt
		if c.at != nil {
			t = *c.at
		}
		if c.params != nil {
			m, mErr = store.Limit(a.name, c.params)
		}
		var s step
		switch {
		case c.view:
			s = viewStep(m, mErr, t, c.key)
		case c.reset:
			s = resetStep(m, mErr, t, c.key)
		default:
			requests++
			s = a.requestStep(m, mErr, t, c, requests)
		}
		if c.params != nil {
			s.Params = intParams(c.params)
		}
		v.Steps = append(v.Steps, s)
	}
	return v
}

// requestStep decides the n-th request of a vector at t.
func (a algorithm) requestStep(m oracle.Model, mErr error, t int64, c call, n int) step {
	s := step{T: t, Key: c.key, Cost: rawInt(c.cost), Force: c.force, Expect: map[string]any{"error": true}}
	switch {
	case len(c.wrongKeys) > 0:
		s.WrongType = c.wrongKeys
	case c.wrongType:
		s.WrongType = true
	}
	if c.rawCost != "" {
		s.Cost = json.RawMessage(c.rawCost)
	}
	inputs := a.defaultInputs(c, n)
	s.setInputs(inputs)
	var cost int64
	if mErr != nil || json.Unmarshal(s.Cost, &cost) != nil || s.WrongType != nil {
		return s
	}
	decide := m.Decide
	if c.force {
		decide = m.Force
	}
	r, err := decide(c.key, t, cost, inputs)
	if err != nil {
		return s
	}
	s.Expect = resultExpect(r)
	if a.Tiers {
		s.Expect["tier"] = r.Tier
	}
	return s
}

// viewStep reads a key's entries back at t: {"entries": [row, ...]},
// each row the entry's fields as the view returns them, or an error.
func viewStep(m oracle.Model, mErr error, t int64, key string) step {
	s := step{T: t, Key: key, View: entriesView, Expect: map[string]any{"error": true}}
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
		list = append(list, e.Row())
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

// symbols are the values of a parameter set's symbols: T0, L (the limit a
// peek on a fresh key reports) and the algorithm's own.
func symbols(a algorithm, p map[string]int64) (map[string]int64, error) {
	m, err := oracle.New(a.name, p)
	if err != nil {
		return nil, fmt.Errorf("%s %v: %v", a.name, p, err)
	}
	peek, err := m.Decide("k", t0, 0, nil)
	if err != nil {
		return nil, fmt.Errorf("%s %v: peek: %v", a.name, p, err)
	}
	sym := map[string]int64{"T0": t0, "L": peek.Limit}
	for s, param := range a.Symbols {
		v, ok := p[param]
		if !ok {
			return nil, fmt.Errorf("%s %v: symbol %s: no parameter %s", a.name, p, s, param)
		}
		sym[s] = v
	}
	return sym, nil
}

func generate() (map[string][]byte, error) {
	d, err := loadData()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, name := range sortedKeys(d.Algorithms) {
		scripts, _ := scriptsOf(name)
		vs, err := algorithmVectors(algorithm{algorithmData: d.Algorithms[name], name: name, scripts: scripts})
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			b, err := marshal(v)
			if err != nil {
				return nil, err
			}
			files[filepath.Join(v.Algorithm, "gen-"+strings.TrimPrefix(v.Name, v.Algorithm+"/")+".json")] = b
		}
	}
	pvs, err := policyVectors(d.Policies)
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
		files[filepath.Join(v.Policy.Name, "gen-"+strings.TrimPrefix(v.Name, v.Policy.Name+"/")+".json")] = b
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
