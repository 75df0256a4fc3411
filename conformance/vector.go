package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/limitspec/limitspec/internal/oracle"
)

// Vector is one replayable scenario, in the contract's JSON format.
type Vector struct {
	Name string `json:"name"`
	// Algorithm names the algorithm as policyfile.NewLimit takes it
	// ("gcra", or "library.name" for a user's spec); Params are its
	// parameters.
	Algorithm string                 `json:"algorithm,omitempty"`
	Params    map[string]json.Number `json:"params,omitempty"`
	// Policy (a project extension) decides the steps by a policy instead,
	// written as a policy file writes it; each step gives IDs instead of
	// Key.
	Policy  *Policy `json:"policy,omitempty"`
	Comment string  `json:"comment,omitempty"`
	Steps   []Step  `json:"steps"`
	// File is where the vector was read from.
	File string `json:"-"`
}

// Policy is a vector's policy: several limits decided all or nothing
// (docs/semantics.md, "Policies"), as policyfile.Parse reads it.
type Policy struct {
	Name   string        `json:"name"`
	Limits []PolicyLimit `json:"limits"`
	// Holds (a project extension) makes it a holding policy
	// (docs/semantics.md, "Holds"): every step runs an operation (Op) on
	// its holds, a decision included, by the holds script.
	Holds bool `json:"holds,omitempty"`
}

// PolicyLimit is one limit of a vector's policy: its algorithm and
// parameters, and the identity it counts or its constant.
type PolicyLimit struct {
	Name      string                 `json:"name"`
	Algorithm string                 `json:"algorithm"`
	Identity  string                 `json:"identity,omitempty"`
	Constant  string                 `json:"constant,omitempty"`
	Params    map[string]json.Number `json:"params"`
	// Unit (a project extension) names what the limit counts: a step's
	// amount of that unit (Step.Costs) is its cost (docs/semantics.md,
	// "Units").
	Unit string `json:"unit,omitempty"`
}

// Algorithms names the algorithms v decides by: its own, or its
// policy's limits', each once.
func (v *Vector) Algorithms() []string {
	if v.Policy == nil {
		return []string{v.Algorithm}
	}
	var out []string
	for _, l := range v.Policy.Limits {
		if !slices.Contains(out, l.Algorithm) {
			out = append(out, l.Algorithm)
		}
	}
	return out
}

// Identities names the policy's identities, in the order of their first
// limit.
func (p *Policy) Identities() []string {
	var out []string
	for _, l := range p.Limits {
		if l.Identity != "" && !slices.Contains(out, l.Identity) {
			out = append(out, l.Identity)
		}
	}
	return out
}

// OneSlot reports whether every limit counts the same identity: every key
// of a call in one hash tag, one Redis Cluster slot.
func (p *Policy) OneSlot() bool {
	for _, l := range p.Limits {
		if l.Identity == "" || l.Identity != p.Limits[0].Identity {
			return false
		}
	}
	return true
}

// Step is one request of a vector.
type Step struct {
	T    int64        `json:"t_ms"`
	Key  string       `json:"key,omitempty"`
	Cost *json.Number `json:"cost,omitempty"` // 1 when absent
	// Costs (a project extension) are a policy step's amounts by unit: a
	// limit whose unit is given counts that amount, the others Cost.
	Costs map[string]json.Number `json:"costs,omitempty"`
	Meta  *string                `json:"meta,omitempty"`
	// Meta is the contract's field for the string input named meta;
	// Inputs (a project extension) are the step's string inputs by name,
	// whatever the algorithm declares (a user's spec may declare any).
	// Request merges them.
	Inputs map[string]string `json:"inputs,omitempty"`
	// Params (a project extension) are the algorithm's parameters from
	// this step on, in place of the vector's: a limit changing between
	// calls (docs/semantics.md, "Keys").
	Params map[string]json.Number `json:"params,omitempty"`
	// IDs (a project extension) are a policy step's identity values, by
	// identity name.
	IDs map[string]string `json:"ids,omitempty"`
	// Reset (a project extension) deletes the state of the step's key (a
	// policy's: of every limit for its ids) instead of deciding; it
	// expects NoError or an error's class. Cost does not apply.
	Reset bool `json:"reset,omitempty"`
	// Force (a project extension) makes the step a forced call: decided as
	// usual, but consuming the cost even when denied (docs/semantics.md,
	// "Force").
	Force bool `json:"force,omitempty"`
	// ID (a project extension) is the request's id: a retry of a charged
	// request of the same id (and hash tag) gets its reply again
	// (docs/semantics.md, "Request ids").
	ID string `json:"id,omitempty"`
	// Op, Hold and HoldMs (project extensions) are a holding policy's
	// step: the operation (a decision when absent; reserve, commit,
	// release, renew), the hold's id, and its length for reserve and
	// renew. Cost (or Costs) is the amount reserved, or spent for a
	// commit. Parse refuses an op, hold or hold_ms on a vector that is not
	// a holding policy's, and an op it does not know.
	Op     string `json:"op,omitempty"`
	Hold   string `json:"hold,omitempty"`
	HoldMs int64  `json:"hold_ms,omitempty"`
	// View (a project extension) names a read-only view to run instead of
	// a decision, such as meta_window's "entries"; its expectation is
	// Entries. Cost and the string inputs do not apply.
	View string `json:"view,omitempty"`
	// WrongType (a project extension) stores a value of another Redis type
	// at the step key's state keys first: all of them (true) or those
	// listed, by their 1-based place in KEYS ([2]); only targets with a
	// keyspace run such a step.
	WrongType WrongType `json:"wrong_type,omitzero"`
	Expect    Expect    `json:"expect"`
}

// MarshalJSON writes the step with its fields in their order, and its
// key even when empty unless it is a policy's step (it gives IDs): an
// empty key is refused input a vector may state.
func (s Step) MarshalJSON() ([]byte, error) {
	type plain Step // no MarshalJSON
	if s.IDs != nil {
		return json.Marshal(plain(s))
	}
	return json.Marshal(struct {
		T   int64  `json:"t_ms"`
		Key string `json:"key"`
		plain
	}{s.T, s.Key, plain(s)})
}

// WrongType says which state keys a step plants a value of another type
// at: none, all (JSON true) or the keys listed (JSON [1, 2], 1-based).
type WrongType struct {
	All  bool
	Keys []int
}

// Any reports whether the step plants anything.
func (w WrongType) Any() bool { return w.All || len(w.Keys) > 0 }

// IsZero reports whether the step plants nothing: JSON leaves it out.
func (w WrongType) IsZero() bool { return !w.Any() }

// UnmarshalJSON reads true, false or a list of 1-based key places.
func (w *WrongType) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &w.All); err == nil {
		return nil
	}
	if err := json.Unmarshal(b, &w.Keys); err != nil {
		return fmt.Errorf("wrong_type must be true, false or a list of 1-based key places: %s", b)
	}
	for _, k := range w.Keys {
		if k < 1 {
			return fmt.Errorf("wrong_type: key places start at 1, got %d", k)
		}
	}
	return nil
}

// MarshalJSON writes true or the list of key places.
func (w WrongType) MarshalJSON() ([]byte, error) {
	if w.All || len(w.Keys) == 0 {
		return json.Marshal(w.All)
	}
	return json.Marshal(w.Keys)
}

// Request is the step's input under the parameters params (the vector's,
// or a step's before it); the contract's meta is the string input named
// meta.
func (v *Vector) Request(s Step, params map[string]json.Number) Request {
	r := Request{Algorithm: v.Algorithm, Params: params, Policy: v.Policy,
		Key: s.Key, IDs: s.IDs, NowMs: s.T, Cost: s.CostArg(), Costs: s.Costs, Force: s.Force, ID: s.ID,
		Op: s.Op, Hold: s.Hold, HoldMs: s.HoldMs}
	if s.Meta != nil || len(s.Inputs) > 0 {
		r.Inputs = map[string]string{}
		maps.Copy(r.Inputs, s.Inputs)
		if s.Meta != nil {
			r.Inputs["meta"] = *s.Meta
		}
	}
	return r
}

// CostArg is the step's cost as given, "1" when absent.
func (s Step) CostArg() json.Number {
	if s.Cost == nil {
		return "1"
	}
	return *s.Cost
}

// Expect is any subset of the result fields, or Error.
type Expect struct {
	Allowed      *bool  `json:"allowed,omitempty"`
	Limit        *int64 `json:"limit,omitempty"`
	Remaining    *int64 `json:"remaining,omitempty"`
	RetryAfterMs *int64 `json:"retry_after_ms,omitempty"`
	ResetAfterMs *int64 `json:"reset_after_ms,omitempty"`
	DelayMs      *int64 `json:"delay_ms,omitempty"`
	// Tier and Entries are project extensions: the binding tier of a
	// tiered limiter, and the entries a view returns, each an array of
	// numbers and strings.
	Tier    *int64   `json:"tier,omitempty"`
	Entries *[][]any `json:"entries,omitempty"`
	// Index and Limits (project extensions) are a policy's: the binding
	// limit's index from 1, and what each limit's own result must be.
	Index  *int64   `json:"index,omitempty"`
	Limits []Expect `json:"limits,omitempty"`
	// Error is the class of error the step must end in, or NoError.
	Error *ErrorClass `json:"error,omitempty"`
}

// ErrorClass is what a step expects of an error: its class, the first
// word of the error (one of Classes; docs/semantics.md, "Errors"), or
// NoError. In JSON it is the class as a string ("BADINPUT"), false for
// NoError, and true for AnyError.
type ErrorClass string

const (
	// NoError (JSON false) expects a step that ends in no error, such as
	// a reset that succeeds.
	NoError ErrorClass = ""
	// AnyError (JSON true) expects an error of any class.
	//
	// Deprecated: name the class. It is read because the contract's
	// format writes a refusal as {"error": true}; nothing here writes it.
	AnyError ErrorClass = "any class"
)

// Classes are the classes a vector may expect, as docs/semantics.md,
// "Errors", defines them.
var Classes = []ErrorClass{oracle.ClassBadInput, oracle.ClassWrongType, oracle.ClassBadState, oracle.ClassNoHold}

// Refused reports whether the expectation is an error.
func (c *ErrorClass) Refused() bool { return c != nil && *c != NoError }

// UnmarshalJSON reads a class, false or true.
func (c *ErrorClass) UnmarshalJSON(b []byte) error {
	var refused bool
	if err := json.Unmarshal(b, &refused); err == nil {
		*c = NoError
		if refused {
			*c = AnyError
		}
		return nil
	}
	var class string
	if err := json.Unmarshal(b, &class); err != nil || !slices.Contains(Classes, ErrorClass(class)) {
		return fmt.Errorf("error must be a class (%v), or false for none; got %s", Classes, b)
	}
	*c = ErrorClass(class)
	return nil
}

// MarshalJSON writes the class, false or true.
func (c ErrorClass) MarshalJSON() ([]byte, error) {
	switch c {
	case NoError:
		return []byte("false"), nil
	case AnyError:
		return []byte("true"), nil
	}
	return json.Marshal(string(c))
}

// entryStrings renders expected entries as Outcome.Entries does.
func entryStrings(entries [][]any) [][]string {
	out := [][]string{}
	for _, e := range entries {
		var row []string
		for _, x := range e {
			row = append(row, fmt.Sprint(x))
		}
		out = append(out, row)
	}
	return out
}

// Load reads every *.json file under dir, recursively, sorted by path.
func Load(dir string) ([]Vector, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".json") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []Vector
	for _, p := range paths {
		v, err := LoadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// LoadFile reads one vector (see Parse).
func LoadFile(path string) (Vector, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Vector{}, err
	}
	v, err := Parse(b)
	if err != nil {
		return Vector{}, fmt.Errorf("%s: %v", path, err)
	}
	v.File = path
	return v, nil
}

// Parse reads one vector from its JSON. Unknown top-level fields
// (comments, ids) are allowed; an unknown field of the policy, a step or
// an expectation is an error, since it would silently check nothing.
func Parse(b []byte) (Vector, error) {
	var v Vector
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return Vector{}, err
	}
	var raw struct {
		Policy json.RawMessage   `json:"policy"`
		Steps  []json.RawMessage `json:"steps"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Vector{}, err
	}
	if raw.Policy != nil {
		if err := decodeStrict(raw.Policy, new(Policy)); err != nil {
			return Vector{}, fmt.Errorf("policy: %v", err)
		}
	}
	for i, s := range raw.Steps {
		if err := decodeStrict(s, new(Step)); err != nil {
			return Vector{}, fmt.Errorf("step %d: %v", i, err)
		}
	}
	switch {
	case v.Name == "":
		return v, fmt.Errorf("no name")
	case (v.Algorithm == "") == (v.Policy == nil):
		return v, fmt.Errorf("give an algorithm or a policy")
	case len(v.Steps) == 0:
		return v, fmt.Errorf("no steps")
	}
	for i, s := range v.Steps {
		if err := v.checkStep(s); err != nil {
			return v, fmt.Errorf("step %d: %v", i, err)
		}
	}
	return v, nil
}

// stepOps are the operations a holding policy's step may name in op; a
// decision names none.
var stepOps = []string{"reserve", "commit", "release", "renew"}

// checkStep refuses a step that could not be run as written, so that no
// field of it is silently ignored: a wrong_type step expecting no error,
// params on a policy's step, costs on a limit's, an op, hold or hold_ms on
// a step of anything but a holding policy, an op of no holding policy,
// and force or id on a holding policy's step (docs/vectors.md).
func (v *Vector) checkStep(s Step) error {
	holding := v.Policy != nil && v.Policy.Holds
	switch {
	case s.WrongType.Any() && !s.Expect.Error.Refused():
		return fmt.Errorf("a wrong_type step must expect an error")
	case s.Params != nil && v.Policy != nil:
		return fmt.Errorf("params change an algorithm's parameters; a policy's are its limits'")
	case s.Costs != nil && v.Policy == nil:
		return fmt.Errorf("costs are a policy's amounts by unit; a limit counts cost")
	case !holding && (s.Op != "" || s.Hold != "" || s.HoldMs != 0):
		return fmt.Errorf("op, hold and hold_ms are a holding policy's (\"holds\": true)")
	case holding && s.Op != "" && !slices.Contains(stepOps, s.Op):
		return fmt.Errorf("op must be one of %v, or absent for a decision; got %q", stepOps, s.Op)
	case holding && (s.Force || s.ID != ""):
		return fmt.Errorf("a holding policy's step takes no force nor id: a commit charges work done, and a hold's id makes its calls idempotent")
	}
	return nil
}

// decodeStrict decodes b into x, refusing unknown fields.
func decodeStrict(b []byte, x any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	d.DisallowUnknownFields()
	return d.Decode(x)
}
