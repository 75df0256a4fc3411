package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/limitspec/limitspec/lua"
)

// Outcome is what a target answered to one step: the result fields, the
// entries a view returned, or an error whose class is the first word of
// the Redis error (BADINPUT, BADSTATE, WRONGTYPE, ...).
type Outcome struct {
	Allowed      bool
	Limit        int64
	Remaining    int64
	RetryAfterMs int64
	ResetAfterMs int64
	DelayMs      int64
	Tier         int64
	// Entries are a view's entries, each field in decimal or as the
	// string it is; nil for a decision, empty for a view that found none.
	Entries [][]string
	Error   string // the class; "" when the step was decided
	Message string // the whole error text; not compared across targets
}

func failure(class, msg string) Outcome { return Outcome{Error: class, Message: msg} }

// errorOutcome classifies an error text by its first word.
func errorOutcome(msg string) Outcome {
	class, _, _ := strings.Cut(msg, " ")
	return failure(class, msg)
}

// Target is one implementation under test.
type Target interface {
	Name() string
	// Begin starts a vector: a fresh key space and the limiter's parameters.
	Begin(algorithm string, params map[string]json.Number) error
	// Decide runs one step; meta is the per-call string of the algorithms
	// that take one ("" when the step gives none), ignored by the others.
	Decide(key string, nowMs int64, cost json.Number, meta string) Outcome
	// View runs a read-only view of the algorithm's state.
	View(view, key string, nowMs int64) Outcome
	Close() error
}

// Keyspace is implemented by the targets that hold Redis keys.
type Keyspace interface {
	// Keys lists the keys this target wrote in the current vector, with
	// their TTL in ms (-1: none).
	Keys() ([]KeyTTL, error)
	// PlantWrongType stores a value of another type at the state keys of
	// the limiter key that w names.
	PlantWrongType(key string, w WrongType) error
}

// KeyTTL is a key, its remaining TTL in ms (-1: no TTL), and its content
// as text (type and value), to tell whether a step changed it.
type KeyTTL struct {
	Key     string
	TTL     int64
	Content string
}

// call is a prepared script invocation for one vector: the script, and
// the ARGV tail of parameters, or the refusal every step gets.
type call struct {
	script  lua.Script
	params  []string
	refused *Outcome
	alg     string
	given   map[string]json.Number
}

// prepare maps a vector's parameters onto a script's ARGV, as a client
// library would: an unknown parameter is refused before calling, an
// optional parameter left out before a given one is passed as its
// default, and ARGV stops at the first missing required parameter, which
// the script refuses (its argument count lists what it takes).
func prepare(algorithm string, params map[string]json.Number) call {
	return prepareView(algorithm, "", params)
}

// prepareView prepares the script of a view ("" for the decision).
func prepareView(algorithm, view string, params map[string]json.Number) call {
	s, ok := lua.LookupView(algorithm, view)
	if !ok {
		o := failure("BADINPUT", fmt.Sprintf("unknown algorithm %q", algorithm))
		if view != "" {
			o = failure("BADINPUT", fmt.Sprintf("%s: unknown view %q", algorithm, view))
		}
		return call{refused: &o, alg: algorithm, given: params}
	}
	c := call{script: s, alg: algorithm, given: params}
	for k := range params {
		if !contains(s.Params, k) {
			o := failure("BADINPUT", fmt.Sprintf("%s: unknown parameter %q", algorithm, k))
			c.refused = &o
			return c
		}
	}
	last := -1
	for i, p := range s.Params {
		if _, ok := params[p]; ok {
			last = i
		}
	}
	for _, p := range s.Params[:last+1] {
		v, ok := params[p]
		if !ok {
			d, opt := s.Defaults[p]
			if !opt {
				break
			}
			v = json.Number(d)
		}
		c.params = append(c.params, v.String())
	}
	return c
}

// wrongTypeKeys are the state keys of key (with prefix inside the hash
// tag) that w names.
func (c call) wrongTypeKeys(prefix, key string, w WrongType) []string {
	all := c.script.KeyNames(prefix + key)
	if w.All {
		return all
	}
	var out []string
	for _, k := range w.Keys {
		if k <= len(all) {
			out = append(out, all[k-1])
		}
	}
	return out
}

// view prepares a view of the same algorithm and parameters.
func (c call) view(view string) call { return prepareView(c.alg, view, c.given) }

// args returns KEYS and ARGV for a step, with prefix inside the hash tag.
func (c call) args(prefix, key string, nowMs int64, cost json.Number, meta string) (keys []string, argv []string) {
	keys = c.script.KeyNames(prefix + key)
	argv = append([]string{strconv.FormatInt(nowMs, 10), cost.String()}, stringArgs(c.script.Strings, meta)...)
	return keys, append(argv, c.params...)
}

// stringArgs are the values of the string inputs named for one step: the
// vector's meta for an input named meta, the only string a step carries,
// and "" for any other.
func stringArgs(names []string, meta string) []string {
	out := make([]string, len(names))
	for i, name := range names {
		if name == "meta" {
			out[i] = meta
		}
	}
	return out
}

// viewArgs returns KEYS and ARGV for a view.
func (c call) viewArgs(prefix, key string, nowMs int64) (keys []string, argv []string) {
	keys = c.script.KeyNames(prefix + key)
	return keys, append([]string{strconv.FormatInt(nowMs, 10)}, c.params...)
}

// refuseKey is what a client does with a key the scripts refuse when it
// adds a prefix inside the hash tag: the script could no longer see that
// the key was empty, or began with "}".
func refuseKey(algorithm, key, prefix string) *Outcome {
	if prefix == "" {
		return nil
	}
	var o Outcome
	switch {
	case key == "":
		o = failure("BADINPUT", algorithm+": key must not be empty")
	case key[0] == '}':
		o = failure("BADINPUT", algorithm+": key must not begin with '}'")
	default:
		return nil
	}
	return &o
}

// replyOutcome turns a script's reply, seven integers, into an Outcome.
func replyOutcome(reply []int64) Outcome {
	if len(reply) != 7 {
		return failure("BADREPLY", fmt.Sprintf("reply has %d integers, want 7", len(reply)))
	}
	if reply[0] != 0 && reply[0] != 1 {
		return failure("BADREPLY", fmt.Sprintf("allowed is %d, want 0 or 1", reply[0]))
	}
	return Outcome{Allowed: reply[0] == 1, Limit: reply[1], Remaining: reply[2],
		RetryAfterMs: reply[3], ResetAfterMs: reply[4], DelayMs: reply[5], Tier: reply[6]}
}

// entriesOutcome is a view's outcome: its entries, empty when none.
func entriesOutcome(entries [][]string) Outcome {
	if entries == nil {
		entries = [][]string{}
	}
	return Outcome{Entries: entries}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var errNoVector = errors.New("Begin was not called")
