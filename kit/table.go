package kit

import (
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/limitspec/limitspec"
)

// MaxParams is the most parameters an algorithm may have.
const MaxParams = 16

// The domains of now_ms and cost, the same for every algorithm of every
// spec (the catalogue's NOW_MAX and COST_MAX).
const (
	NowMax  = 35184372088832
	CostMax = 9007199254740991
)

// Call is one decision of one limit on one key, as a Table decides it.
// The caller sets its Args; Prepare sets Key, Hash and Params.
type Call struct {
	// Key names the call's state, with the parameters it is measured in
	// (Params named by the limit's Redis keys): the hash tag alone (the
	// key the request names) for a limit's call, StateName's for a
	// policy's limit (built by NameState, with no allocation). It is no
	// Redis key name: a table compares the name and those parameters,
	// which tell states apart exactly as the names of their Redis keys
	// do.
	Key string
	// Hash is the hash of the state's key in its table's store.
	Hash uint64
	// Params are the limit's parameters as the scripts take them (ms for
	// durations), in the spec's order.
	Params [MaxParams]int64
	Args
	// name holds the bytes of Key when NameState built it: a Call kept
	// from call to call (a policy's, pooled) names its states in it
	// without allocating.
	name []byte
}

// Args are what the caller of a call gives besides the limit and the
// key.
type Args struct {
	NowMs int64
	Cost  int64
	// Inputs are the string inputs, in the algorithm's order.
	Inputs []string
	// Commit lets the decision write; without it, it writes nothing (a
	// policy decides every limit before any consumes). Force consumes
	// the cost even when the decision denies (docs/semantics.md,
	// "Force").
	Commit, Force bool
}

// StateName is the name of the state of a call's key (the hash tag) with
// a policy's limit's infix after it: the key alone without an infix;
// else '}', the key, '}' and the infix, which no key a request names can
// be (none begins with '}'), and which tells two policies' limits apart
// as their Redis keys' names do (an infix holds no '}').
func StateName(key, infix string) string {
	if infix == "" {
		return key
	}
	return "}" + key + "}" + infix
}

// NameState sets c.Key to StateName(key, infix), built in c's own buffer
// when infix is not empty, so that a Call that is reused names the
// states of its calls with no allocation once its buffer has grown to
// their length. The Key so built is valid until c is named again: a
// table only compares it, and copies it into the state it adds.
func (c *Call) NameState(key, infix string) {
	if infix == "" {
		c.Key = key
		return
	}
	c.name = append(append(append(append(c.name[:0], '}'), key...), '}'), infix...)
	c.Key = unsafe.String(unsafe.SliceData(c.name), len(c.name))
}

// Record is one entry a view returns: its fields in order, each an int64
// or a string.
type Record []any

// Table holds the in-process state of every limit of one algorithm, by
// key; package goimpl makes one per Limiter and algorithm. The generated
// code implements it.
type Table interface {
	// Prepare checks a call and fills in c.Params, c.Key and c.Hash: lim
	// must be a valid limit of the table's algorithm, key (the hash tag)
	// neither empty nor beginning with '}', c's time, cost and inputs
	// within their domains; infix follows the hash tag in the key (a
	// policy's limit's). Errors match limitspec.ErrBadInput, with the
	// scripts' messages, in the scripts' order.
	Prepare(c *Call, lim limitspec.Limit, infix, key string) error
	// Limit decides a limit's call alone: it prepares the call of args,
	// lim and key as Prepare does (with no infix) and decides it with its
	// shard locked. The call stays on its stack (a *Call passed to an
	// interface's method escapes to the heap): a decision on an existing
	// key allocates nothing.
	Limit(args Args, lim limitspec.Limit, key string) (Reply, error)
	// Bind checks lim as Prepare does (a valid limit of the table's
	// algorithm), once, and returns what decides its calls without
	// checking it again: package goimpl's Bound.
	Bind(lim limitspec.Limit) (Bound, error)
	// Shard is the index of the shard holding a prepared call's state;
	// Lock and Unlock lock and unlock a shard.
	Shard(c *Call) int
	Lock(shard int)
	Unlock(shard int)
	// Decide decides a prepared call whose shard the caller holds.
	Decide(c *Call) Reply
	// View runs a read-only view of a prepared call's state.
	View(name string, c *Call) ([]Record, error)
	// Reset deletes a prepared call's state.
	Reset(c *Call)
	// StopSweeper stops the table's background reclaiming of expired
	// keys (see Store.StopSweeper).
	StopSweeper()
}

// Bound is a limit of a Table's algorithm, checked once by the Table's
// Bind, and the table that decides its calls: its parameters are worked
// out once, so that a call checks only its key, time, cost and inputs.
type Bound interface {
	// Limit decides a call of the bound limit alone, as the Table's Limit
	// does.
	Limit(args Args, key string) (Reply, error)
	// Prepare checks a call of the bound limit and names its state, as
	// the Table's Prepare does.
	Prepare(c *Call, infix, key string) error
	// Value is the bound limit: a copy of the value Bind was given (a
	// pointer's target), boxed once.
	Value() limitspec.Limit
}

// TableAlgorithm is an algorithm's decision in Go.
type TableAlgorithm struct {
	ID limitspec.Algorithm
	// Inputs name the string inputs, in order.
	Inputs []string
	// New returns an empty table.
	New func() Table
}

var (
	mu      sync.RWMutex
	tables  = map[limitspec.Algorithm]TableAlgorithm{}
	scripts = map[limitspec.Algorithm]*Scripts{}
	libs    = map[string]*Library{}
)

// RegisterTable registers an algorithm's decision in Go; a second
// registration of one algorithm panics (at start-up: the generated code
// registers when its package is initialized).
func RegisterTable(a TableAlgorithm) { register(tables, a.ID, a, "algorithm "+a.ID.String()) }

// LookupTable returns an algorithm's decision in Go.
func LookupTable(id limitspec.Algorithm) (TableAlgorithm, bool) { return lookup(tables, id) }

// sortedKeys returns a registry's algorithms, sorted by name.
func sortedKeys[V any](m map[limitspec.Algorithm]V) []limitspec.Algorithm {
	out := make([]limitspec.Algorithm, 0, len(m))
	for a := range m {
		out = append(out, a)
	}
	slices.SortFunc(out, func(x, y limitspec.Algorithm) int { return strings.Compare(x.String(), y.String()) })
	return out
}
