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
// package oracle, the class of each refusal too (oracle.Class). Generated
// files are named <out>/<algorithm>/gen-*.json (a policy's:
// <out>/<policy>/gen-*.json); every other file in <out> is written by
// hand and left alone. A vector is written as the types conformance reads
// (conformance.Vector, Step, Expect), its head on one line and then one
// step per line, and read back before it is written. Output is
// deterministic: fixed seeds, fields in their types' order, sorted map
// keys.
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
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/limitspec/limitspec/conformance"
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
	view   bool   // read the key's entries back instead
	reset  bool   // delete the key's state instead
	force  bool   // the forced call: consumes the cost even when denied
	id     string // the request's id (docs/semantics.md, "Request ids")
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
func setInputs(s *conformance.Step, inputs map[string]string) {
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

// number writes an integer as a vector does.
func number(v int64) json.Number { return json.Number(strconv.FormatInt(v, 10)) }

// numbers writes integer parameters as a vector does.
func numbers(p map[string]int64) map[string]json.Number {
	out := map[string]json.Number{}
	for k, v := range p {
		out[k] = number(v)
	}
	return out
}

// model is the oracle's model of alg with params on store's state, or why
// there is none.
func model(store *oracle.Store, alg string, params map[string]json.Number) (oracle.Model, error) {
	ints := map[string]int64{}
	for k, v := range params {
		n, err := v.Int64()
		if err != nil {
			return nil, fmt.Errorf("%w: parameter %s is no integer", oracle.ErrBadInput, k)
		}
		ints[k] = n
	}
	return store.Limit(alg, ints)
}

// build replays calls through the oracle and records its answers; refused
// input expects the class of the oracle's refusal.
func build(name string, a algorithm, comment string, params map[string]json.Number, calls []call) conformance.Vector {
	v := conformance.Vector{Name: a.name + "/" + name, Algorithm: a.name, Comment: comment, Params: params}
	store := oracle.NewStore()
	var rs oracle.Requests
	m, mErr := model(store, a.name, params)
	t := int64(t0)
	requests := 0 // numbers the default inputs
	for _, c := range calls {
		t += c.dt
		if c.at != nil {
			t = *c.at
		}
		if c.params != nil {
			params = numbers(c.params)
			m, mErr = store.Limit(a.name, c.params)
		}
		var s conformance.Step
		switch {
		case c.view:
			s = viewStep(m, mErr, t, c.key)
		case c.reset:
			s = resetStep(m, mErr, t, c.key)
		default:
			requests++
			dm, dErr := m, mErr
			if c.wrongType || len(c.wrongKeys) > 0 {
				// The input is checked before any key is read: decided
				// on a fresh state, the call shows whether it is refused.
				dm, dErr = model(oracle.NewStore(), a.name, params)
			}
			s = a.requestStep(dm, dErr, &rs, t, c, requests)
		}
		if c.params != nil {
			s.Params = params
		}
		v.Steps = append(v.Steps, s)
	}
	return v
}

// requestStep decides the nth request of a vector at t. A request that
// plants another Redis type at its keys is decided on m, a fresh state:
// WRONGTYPE, unless its input is refused.
func (a algorithm) requestStep(m oracle.Model, mErr error, rs *oracle.Requests, t int64, c call, nth int) conformance.Step {
	cost := stepCost(c.cost, c.rawCost)
	s := conformance.Step{T: t, Key: c.key, Cost: cost, Force: c.force, ID: c.id,
		WrongType: conformance.WrongType{All: c.wrongType && len(c.wrongKeys) == 0, Keys: c.wrongKeys}}
	inputs := a.defaultInputs(c, nth)
	setInputs(&s, inputs)
	s.Expect = expectOf(mErr, cost, s.WrongType.Any(), func(n int64) (oracle.Result, error) {
		return oracle.LimitOnce(rs, m, c.key, c.id, t, n, inputs, c.force)
	}, func(r oracle.Result) conformance.Expect {
		e := resultExpect(r)
		if a.Tiers {
			e.Tier = &r.Tier
		}
		return e
	})
	return s
}

// stepCost is a call's cost as a vector writes it: raw when given.
func stepCost(cost int64, raw string) *json.Number {
	n := number(cost)
	if raw != "" {
		n = json.Number(raw)
	}
	return &n
}

// expectOf is what a request expects: the class of its refusal (for mErr,
// the model's, for its cost, or by decide), else WRONGTYPE when it plants
// another Redis type at its keys (wrongType), else what expect makes of
// decide's result.
func expectOf[R any](mErr error, cost *json.Number, wrongType bool, decide func(cost int64) (R, error), expect func(R) conformance.Expect) conformance.Expect {
	n, err := cost.Int64()
	if err != nil {
		err = fmt.Errorf("%w: cost %s is no integer", oracle.ErrBadInput, *cost)
	}
	var r R
	switch {
	case mErr != nil:
		err = mErr
	case err == nil:
		r, err = decide(n)
	}
	switch {
	case err != nil && !(wrongType && errors.Is(err, oracle.ErrNoHold)):
		return refused(err)
	case wrongType: // the keys are read before an id's holds are looked up
		return refused(oracle.ErrWrongType)
	}
	return expect(r)
}

// refused expects the class of err.
func refused(err error) conformance.Expect {
	class := conformance.ErrorClass(oracle.Class(err))
	return conformance.Expect{Error: &class}
}

// viewStep reads a key's entries back at t: {"entries": [row, ...]},
// each row the entry's fields as the view returns them, or an error.
func viewStep(m oracle.Model, mErr error, t int64, key string) conformance.Step {
	s := conformance.Step{T: t, Key: key, View: entriesView}
	lister, ok := m.(oracle.EntryLister)
	if mErr == nil && !ok {
		mErr = fmt.Errorf("%w: no view %s", oracle.ErrBadInput, entriesView)
	}
	if mErr != nil {
		s.Expect = refused(mErr)
		return s
	}
	entries, err := lister.Entries(key, t)
	if err != nil {
		s.Expect = refused(err)
		return s
	}
	list := [][]any{}
	for _, e := range entries {
		list = append(list, e.Row())
	}
	s.Expect = conformance.Expect{Entries: &list}
	return s
}

// resetStep deletes a key's state: {"error": false}, or the class of
// its refusal.
func resetStep(m oracle.Model, mErr error, t int64, key string) conformance.Step {
	s := conformance.Step{T: t, Key: key, Reset: true}
	if mErr == nil {
		mErr = m.(oracle.Resetter).Reset(key)
	}
	s.Expect = refused(mErr)
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
	var vs []conformance.Vector
	for _, name := range sortedKeys(d.Algorithms) {
		scripts, _ := scriptsOf(name)
		avs, err := algorithmVectors(algorithm{algorithmData: d.Algorithms[name], name: name, scripts: scripts})
		if err != nil {
			return nil, err
		}
		vs = append(vs, avs...)
	}
	pvs, err := policyVectors(d.Policies)
	if err != nil {
		return nil, err
	}
	for _, v := range append(vs, pvs...) {
		dir := v.Algorithm
		if v.Policy != nil {
			dir = v.Policy.Name
		}
		b, err := marshal(v)
		if err != nil {
			return nil, err
		}
		files[filepath.Join(dir, "gen-"+strings.TrimPrefix(v.Name, dir+"/")+".json")] = b
	}
	return files, nil
}

// marshal writes a vector with one step per line, for readable diffs,
// and reads it back as conformance does, so that what is written is what
// is read.
func marshal(v conformance.Vector) ([]byte, error) {
	whole, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	head := v
	head.Steps = nil
	h, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	b.Write(bytes.TrimSuffix(h, []byte(`,"steps":null}`)))
	b.WriteString(",\n\"steps\": [\n")
	for i, s := range v.Steps {
		sb, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		b.WriteString("  ")
		b.Write(sb)
		if i < len(v.Steps)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]}\n")
	back, err := conformance.Parse(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", v.Name, err)
	}
	if again, err := json.Marshal(back); err != nil || !bytes.Equal(again, whole) {
		return nil, fmt.Errorf("%s: the vector read back differs from the one written", v.Name)
	}
	return b.Bytes(), nil
}
