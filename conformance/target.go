package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/limitspec/limitspec/kit"
)

// Outcome is what a target answered to one step: the reply's fields (as
// the spec states them, kit.Reply), the entries a view returned, or an
// error whose class is the first word of the Redis error (BADINPUT,
// BADSTATE, WRONGTYPE, ...).
type Outcome struct {
	kit.Reply
	// Entries are a view's entries, each field in decimal or as the
	// string it is; nil for a decision, empty for a view that found none.
	Entries [][]string
	// Index and Limits are a policy's: the binding limit's index from 1,
	// and every limit's own outcome.
	Index   int64
	Limits  []Outcome
	Error   string // the class; "" when the step was decided
	Message string // the whole error text; not compared across targets
}

// Request is the input of one step: the algorithm and its parameters, or
// the policy, it is decided by; an algorithm's key or a policy's identity
// values; the time, the cost, the string inputs by name (those the
// algorithm declares, such as meta_window's meta), and whether the call
// is forced.
type Request struct {
	Algorithm string
	Params    map[string]json.Number
	Policy    *Policy
	Key       string
	IDs       map[string]string
	NowMs     int64
	Cost      json.Number
	// Costs are a policy's amounts by unit (see Step.Costs).
	Costs  map[string]json.Number
	Inputs map[string]string
	// Force asks for the forced call (docs/semantics.md, "Force").
	Force bool
	// ID is the request's id (docs/semantics.md, "Request ids"); empty:
	// none.
	ID string
	// Op, Hold and HoldMs are a holding policy's operation, hold id and
	// hold length (see Step).
	Op, Hold string
	HoldMs   int64
}

// HoldOp is r's operation on a holding policy's holds: Op, decide when
// empty.
func (r Request) HoldOp() string {
	if r.Op == "" {
		return "decide"
	}
	return r.Op
}

func failure(class, msg string) Outcome { return Outcome{Error: class, Message: msg} }

// intParams are parameters as integers, for the targets whose limits take
// int64s, or the refusal of one that is not an integer.
func intParams(name string, params map[string]json.Number) (map[string]int64, *Outcome) {
	ints := map[string]int64{}
	for k, v := range params {
		n, err := v.Int64()
		if err != nil {
			o := failure("BADINPUT", fmt.Sprintf("%s: parameter %s must be an integer, got %s", name, k, v))
			return nil, &o
		}
		ints[k] = n
	}
	return ints, nil
}

// intCost is a step's cost as an integer, or the refusal of one that is
// not.
func intCost(r Request) (int64, *Outcome) {
	c, err := r.Cost.Int64()
	if err != nil {
		o := failure("BADINPUT", fmt.Sprintf("cost must be an integer, got %s", r.Cost))
		return 0, &o
	}
	return c, nil
}

// errorOutcome classifies an error text by its first word.
func errorOutcome(msg string) Outcome {
	class, _, _ := strings.Cut(msg, " ")
	return failure(class, msg)
}

// Target is one implementation under test. Every step's Request names the
// limit (an algorithm and its parameters) or the policy it is decided by,
// as a service calls a limiter.
type Target interface {
	Name() string
	// Begin starts a vector: a fresh key space. An error wrapping
	// ErrNotApplicable says the target cannot run it (a policy over
	// several hash tags on a cluster); the runner then skips the vector
	// on that target.
	Begin(v *Vector) error
	// Decide runs one step.
	Decide(r Request) Outcome
	// Reset deletes the state of r's key under its limit (a policy's: of
	// every limit for r's identities); its outcome is empty, or an error.
	Reset(r Request) Outcome
	// View runs a read-only view of the state of r's key under its limit.
	View(view string, r Request) Outcome
	Close() error
}

// Keyspace is implemented by the targets that hold Redis keys.
type Keyspace interface {
	// Keys lists the keys this target wrote in the current vector, with
	// their TTL in ms (-1: none).
	Keys() ([]KeyTTL, error)
	// PlantWrongType stores a value of another type at the state keys of
	// r's call that w names.
	PlantWrongType(r Request, w WrongType) error
}

// KeyTTL is a key, its remaining TTL in ms (-1: no TTL), and its content
// as text (type and value), to tell whether a step changed it.
type KeyTTL struct {
	Key     string
	TTL     int64
	Content string
}

// entriesOutcome is a view's outcome: its entries, empty when none.
func entriesOutcome(entries [][]string) Outcome {
	if entries == nil {
		entries = [][]string{}
	}
	return Outcome{Entries: entries}
}

// ErrNotApplicable is wrapped by Begin's error when a target cannot run a
// vector at all.
var ErrNotApplicable = errors.New("not applicable on this target")

// notForCluster is Begin's error on a Redis Cluster for a vector whose
// policy counts several identities (or a constant): its keys may lie in
// several slots.
func notForCluster(v *Vector) error {
	if v.Policy == nil || v.Policy.OneSlot() {
		return nil
	}
	return fmt.Errorf("%w: policy %s counts several identities or a constant (%v), whose keys a Redis Cluster may place on different nodes: "+
		"no script can decide it atomically there; split it into one policy per identity, or count every limit by one identity "+
		"(docs/semantics.md, \"Policies\")", ErrNotApplicable, v.Policy.Name, v.Policy.Identities())
}

// EmbeddedTargets returns the targets that need no Redis server: package
// goimpl's limiter, called per request and through its bound handles,
// and the scripts in gopher-lua and in miniredis. Close each when done.
func EmbeddedTargets() ([]Target, error) {
	luaT, err := NewLuaTarget()
	if err != nil {
		return nil, err
	}
	mini, err := NewMiniredisTarget()
	if err != nil {
		luaT.Close()
		return nil, err
	}
	return []Target{NewGoimplTarget(), NewGoimplBoundTarget(), luaT, mini}, nil
}
