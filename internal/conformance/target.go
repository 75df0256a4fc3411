package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	// Index and Limits are a policy's: the binding limit's index from 1,
	// and every limit's own outcome.
	Index   int64
	Limits  []Outcome
	Error   string // the class; "" when the step was decided
	Message string // the whole error text; not compared across targets
}

// Request is the input of one decision: an algorithm's key or a policy's
// identity values, the time, the cost, the string inputs by name
// (meta_window's meta), and whether the call is forced.
type Request struct {
	Key    string
	IDs    map[string]string
	NowMs  int64
	Cost   json.Number
	Inputs map[string]string
	// Force asks for the forced call (docs/semantics.md, "Force").
	Force bool
}

func failure(class, msg string) Outcome { return Outcome{Error: class, Message: msg} }

// intParams are a vector's parameters as integers, for the targets whose
// constructors take int64s, or the refusal of one that is not an integer.
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

// Target is one implementation under test.
type Target interface {
	Name() string
	// Begin starts a vector: a fresh key space, the algorithm or policy
	// by name, and its parameters. An error wrapping ErrNotApplicable
	// says the target cannot run it (a policy over several hash tags on
	// a cluster); the runner then skips the vector on that target.
	Begin(name string, params map[string]json.Number) error
	// Decide runs one step.
	Decide(r Request) Outcome
	// Reset deletes the state of r's key (a policy's: of every limit for
	// r's identities); its outcome is empty, or an error.
	Reset(r Request) Outcome
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

// call is a prepared script invocation for one vector: the script, and
// the ARGV tail of parameters, or the refusal every step gets.
type call struct {
	script  lua.Script
	policy  *lua.Policy // the policy's script, instead of script
	params  []string
	refused *Outcome
	alg     string // the algorithm's or the policy's name
	given   map[string]json.Number
}

// scriptSources maps the name of every generated script to its source:
// each algorithm's decision, view, reset and forced call, and each
// policy's decision, reset and forced call.
func scriptSources() map[string]string {
	out := map[string]string{}
	for _, s := range lua.Scripts {
		out[s.Name] = s.Source
		if s.View == "" {
			out[lua.ResetName(s.Name)] = s.ResetSource
			out[lua.ForceName(s.Name)] = s.ForceSource
		}
	}
	for _, p := range lua.Policies {
		out[p.Name] = p.Source
		out[lua.ResetName(p.Name)] = p.ResetSource
		out[lua.ForceName(p.Name)] = p.ForceSource
	}
	return out
}

// resetName is the name of the reset script.
func (c call) resetName() string { return lua.ResetName(c.alg) }

// resetArgs is the reset script's ARGV: an algorithm's parameters (its
// keys name some), none for a policy.
func (c call) resetArgs() []string {
	if c.policy != nil {
		return nil
	}
	return c.params
}

// keyParams are the vector's parameters as a key names them: in decimal,
// as the scripts print them; a value that is no integer as given (the
// script refuses it before it reads the keys).
func (c call) keyParams() map[string]string {
	out := map[string]string{}
	for name, v := range c.given {
		if n, err := v.Int64(); err == nil {
			out[name] = strconv.FormatInt(n, 10)
		} else {
			out[name] = v.String()
		}
	}
	return out
}

// resetOutcome is a reset script's outcome: empty when it replied with
// the number of keys deleted.
func resetOutcome(res any, err error) Outcome {
	if err != nil {
		return errorOutcome(lua.ErrorReply(err.Error()))
	}
	if _, ok := res.(int64); !ok {
		return failure("BADREPLY", fmt.Sprintf("reset reply %v is not an integer", res))
	}
	return Outcome{}
}

// scriptName is the name of the decision script: the policy's, or the
// algorithm's (or view's); with force, of its forced call.
func (c call) scriptName(force bool) string {
	name := c.script.Name
	if c.policy != nil {
		name = c.policy.Name
	}
	if force {
		return lua.ForceName(name)
	}
	return name
}

// ErrNotApplicable is wrapped by Begin's error when a target cannot run a
// vector at all.
var ErrNotApplicable = errors.New("not applicable on this target")

// prepare maps a vector's parameters onto a script's ARGV, as a client
// library would: an unknown parameter is refused before calling, an
// optional parameter left out before a given one is passed as its
// default, and ARGV stops at the first missing required parameter, which
// the script refuses (its argument count lists what it takes).
func prepare(name string, params map[string]json.Number) call {
	if p, ok := lua.LookupPolicy(name); ok {
		return preparePolicy(p, params)
	}
	return prepareView(name, "", params)
}

// preparePolicy maps a vector's parameters onto a policy's ARGV: its
// per-call parameters, named limit.param, in order, up to the first
// missing one (which the script's argument count refuses).
func preparePolicy(p lua.Policy, params map[string]json.Number) call {
	c := call{policy: &p, alg: p.Name, given: params}
	for k := range params {
		if !slices.Contains(p.Params, k) {
			o := failure("BADINPUT", fmt.Sprintf("%s: unknown parameter %q", p.Name, k))
			c.refused = &o
			return c
		}
	}
	for _, name := range p.Params {
		v, ok := params[name]
		if !ok {
			break
		}
		c.params = append(c.params, v.String())
	}
	return c
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
		if !slices.Contains(s.Params, k) {
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

// wrongTypeKeys are the state keys of r's call (with prefix inside the
// hash tag) that w names.
func (c call) wrongTypeKeys(prefix string, r Request, w WrongType) []string {
	all, refused := c.keys(prefix, r)
	if refused != nil {
		return nil
	}
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

// args returns KEYS and ARGV for a step, with prefix inside the hash tag,
// or the refusal a client gives a policy's identities that cannot make
// its keys.
func (c call) args(prefix string, r Request) (keys, argv []string, refused *Outcome) {
	if keys, refused = c.keys(prefix, r); refused != nil {
		return nil, nil, refused
	}
	argv = []string{strconv.FormatInt(r.NowMs, 10), r.Cost.String()}
	if c.policy == nil {
		argv = append(argv, stringArgs(c.script.Strings, r.Inputs)...)
	}
	return keys, append(argv, c.params...), nil
}

// keys returns the KEYS of r's call, with prefix inside every hash tag.
func (c call) keys(prefix string, r Request) ([]string, *Outcome) {
	if c.policy == nil {
		return c.script.KeyNames(prefix+r.Key, c.keyParams()), nil
	}
	for name := range r.IDs {
		if !slices.Contains(c.policy.Identities, name) {
			o := failure("BADINPUT", fmt.Sprintf("%s: unknown identity %q", c.alg, name))
			return nil, &o
		}
	}
	keys, ok := c.policy.KeyNames(prefix, r.IDs)
	if !ok {
		o := failure("BADINPUT", c.alg+": an identity is missing")
		return nil, &o
	}
	return keys, nil
}

// stringArgs are the values of the string inputs a script takes, by name
// from a step's inputs, "" for those it leaves out.
func stringArgs(names []string, inputs map[string]string) []string {
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = inputs[name]
	}
	return out
}

// viewArgs returns KEYS and ARGV for a view.
func (c call) viewArgs(prefix, key string, nowMs int64) (keys []string, argv []string) {
	keys = c.script.KeyNames(prefix+key, c.keyParams())
	return keys, append([]string{strconv.FormatInt(nowMs, 10)}, c.params...)
}

// refuseKey is what a client does with a key (or a policy's identity
// value) the scripts refuse when it adds a prefix inside the hash tag: the
// script could no longer see that the key was empty, or began with "}".
func (c call) refuseKey(prefix string, r Request) *Outcome {
	if prefix == "" {
		return nil
	}
	keys := []string{r.Key}
	if c.policy != nil {
		keys = keys[:0]
		for _, v := range r.IDs {
			keys = append(keys, v)
		}
	}
	for _, key := range keys {
		var o Outcome
		switch {
		case key == "":
			o = failure("BADINPUT", c.alg+": key must not be empty")
		case key[0] == '}':
			o = failure("BADINPUT", c.alg+": key must not begin with '}'")
		default:
			continue
		}
		return &o
	}
	return nil
}

// outcome turns a decision script's reply into an Outcome: an algorithm's
// seven integers, or a policy's.
func (c call) outcome(reply []int64) Outcome {
	if c.policy == nil {
		return replyOutcome(reply)
	}
	n := len(c.policy.Limits)
	if len(reply) != 8+7*n {
		return failure("BADREPLY", fmt.Sprintf("reply has %d integers, want %d", len(reply), 8+7*n))
	}
	o := replyOutcome(reply[:7])
	if o.Error != "" {
		return o
	}
	o.Index = reply[7]
	for i := range n {
		l := replyOutcome(reply[8+7*i : 15+7*i])
		if l.Error != "" {
			return l
		}
		o.Limits = append(o.Limits, l)
	}
	return o
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

var errNoVector = errors.New("Begin was not called")
