package conformance

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/kit"
	_ "github.com/limitspec/limitspec/lua" // the catalogue's scripts
)

// The targets that run the scripts themselves (gopher-lua, miniredis, a
// real Redis) call them as a client library in any language would, from
// the vector's raw input: a parameter that is no integer, an unknown
// algorithm, reach the script as given where a client would pass them.

// callKind is what a step runs: a decision (forced when the request
// is), a reset or a view.
type callKind int

const (
	decideCall callKind = iota
	resetCall
	viewCall
)

// scriptCall is one call of a script: its library and name (its function
// in the library is lib + "_" + script), KEYS, ARGV, and for a decision
// how many limits its reply holds (0: an algorithm's).
type scriptCall struct {
	lib, script string
	keys, argv  []string
	limits      int
	// force: a forced call, whose policy's delay is its limits' longest
	// even when denied.
	force bool
}

// function is the call's function in its library (and the script's key
// in sources).
func (c scriptCall) function() string { return c.lib + "_" + c.script }

// prepareCall prepares r's call of kind (a view: named view), with
// prefix inside every hash tag, or returns the refusal a client gives
// before calling.
func prepareCall(prefix string, r Request, kind callKind, view string) (scriptCall, *Outcome) {
	if r.Policy != nil {
		return policyCall(prefix, r, kind)
	}
	s, o := lookupScripts(r.Algorithm)
	if o != nil {
		return scriptCall{}, o
	}
	argvParams, keyParams, o := scriptParams(r.Algorithm, s, r.Params)
	if o != nil {
		return scriptCall{}, o
	}
	if o := refuseKey(prefix, r.Algorithm, r.Key); o != nil {
		return scriptCall{}, o
	}
	c := scriptCall{lib: s.Library, keys: s.KeyNames(prefix+r.Key, "", keyParams)}
	now := strconv.FormatInt(r.NowMs, 10)
	switch kind {
	case resetCall:
		c.script, c.argv = s.Reset.Name, argvParams
	case viewCall:
		i := slices.IndexFunc(s.Views, func(v kit.View) bool { return v.Name == view })
		if i < 0 {
			o := failure("BADINPUT", fmt.Sprintf("%s: unknown view %q", r.Algorithm, view))
			return scriptCall{}, &o
		}
		c.script, c.argv = s.Views[i].Script.Name, append([]string{now}, argvParams...)
	default:
		c.script = s.Decide.Name
		c.argv = append([]string{now, r.Cost.String(), kit.ForceArg(r.Force)}, stringArgs(s.Inputs, r.Inputs)...)
		c.argv = append(c.argv, argvParams...)
	}
	if kind == decideCall && r.ID != "" {
		c.keys = append(c.keys, "{"+prefix+r.Key+limitcall.RequestKeyTail(r.ID))
	}
	return c, nil
}

// lookupScripts returns the scripts of an algorithm named as
// policyfile.NewLimit names it.
func lookupScripts(name string) (*kit.Scripts, *Outcome) {
	s, ok := kit.LookupScripts(limitspec.ParseAlgorithm(name))
	if !ok {
		o := failure("BADINPUT", fmt.Sprintf("unknown algorithm %q", name))
		return nil, &o
	}
	return s, nil
}

// scriptParams maps parameters onto a script's ARGV, as a client library
// would: an unknown parameter is refused before calling, an optional one
// left out before a given one is passed as its default, and ARGV stops at
// the first missing required one (the script's argument count refuses
// it). keyParams are every parameter as the keys name them: in decimal,
// a missing one its default ("" when required), one that is no integer
// as given (the script refuses it before it reads a key).
func scriptParams(alg string, s *kit.Scripts, params map[string]json.Number) (argv, keyParams []string, refused *Outcome) {
	for k := range params {
		if !slices.ContainsFunc(s.Params, func(p kit.Param) bool { return p.Name == k }) {
			o := failure("BADINPUT", fmt.Sprintf("%s: unknown parameter %q", alg, k))
			return nil, nil, &o
		}
	}
	last := -1
	for i, p := range s.Params {
		v, ok := params[p.Name]
		if ok {
			last = i
		}
		keyParams = append(keyParams, decimal(v, p.Default))
	}
	for _, p := range s.Params[:last+1] {
		v, ok := params[p.Name]
		if !ok && p.Default == "" {
			break
		}
		argv = append(argv, string(decimalOr(v, p.Default)))
	}
	return argv, keyParams, nil
}

// decimal is a parameter as a key names it.
func decimal(v json.Number, dflt string) string {
	if v == "" {
		return dflt
	}
	if n, err := v.Int64(); err == nil {
		return strconv.FormatInt(n, 10)
	}
	return v.String()
}

// decimalOr is v, or dflt when v is not given.
func decimalOr(v json.Number, dflt string) json.Number {
	if v == "" {
		return json.Number(dflt)
	}
	return v
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

// refuseKey is what a client does with a key (or a policy's identity
// value) the scripts refuse when it adds a prefix inside the hash tag: the
// script could no longer see that the key was empty, or began with "}".
func refuseKey(prefix, what, key string) *Outcome {
	if prefix == "" {
		return nil
	}
	var o Outcome
	switch {
	case key == "":
		o = failure("BADINPUT", what+": "+limitcall.KeyEmpty)
	case key[0] == '}':
		o = failure("BADINPUT", what+": "+limitcall.KeyBrace)
	default:
		return nil
	}
	return &o
}

// policyCall prepares the call of the policy script of r's policy: every
// limit's keys; ARGV now_ms, cost, force, then each limit's algorithm,
// name (:<policy>:<limit>), number of parameters and parameters (a reset: the limits
// alone).
func policyCall(prefix string, r Request, kind callKind) (scriptCall, *Outcome) {
	p := r.Policy
	lib, tags, o := policyPrologue(prefix, p, r.IDs)
	if o != nil {
		return scriptCall{}, o
	}
	c := scriptCall{lib: lib.Name, script: lib.Policy.Name, limits: len(p.Limits), force: r.Force}
	now := strconv.FormatInt(r.NowMs, 10)
	cost, o := costArg(p, r)
	if o != nil && kind == decideCall {
		return scriptCall{}, o
	}
	switch {
	case kind == resetCall: // a holding policy's too: its holds stay
		c.script = lib.PolicyReset.Name
	case p.Holds:
		c.script = lib.Holds.Name
		c.argv = []string{now, cost, r.HoldOp(), r.Hold, strconv.FormatInt(r.HoldMs, 10)}
	default:
		c.argv = []string{now, cost, kit.ForceArg(r.Force)}
	}
	for i, l := range p.Limits {
		s, _ := lookupScripts(l.Algorithm)
		argv, keyParams, o := scriptParams(p.Name+"."+l.Name+": "+l.Algorithm, s, l.Params)
		if o != nil {
			return scriptCall{}, o
		}
		// its keys carry :<limit>; the script takes :<policy>:<limit> for
		// its errors (docs/semantics.md, "Policies")
		c.keys = append(c.keys, s.KeyNames(prefix+tags[i], ":"+l.Name, keyParams)...)
		if p.Holds && kind != resetCall { // its holds keys, after its state keys
			c.keys = append(c.keys, "{"+prefix+tags[i]+"}:"+l.Name+":hh", "{"+prefix+tags[i]+"}:"+l.Name+":hz")
		}
		c.argv = append(c.argv, l.Algorithm, ":"+p.Name+":"+l.Name, strconv.Itoa(len(argv)))
		c.argv = append(c.argv, argv...)
	}
	if kind == decideCall && r.ID != "" {
		c.keys = append(c.keys, "{"+prefix+tags[0]+limitcall.RequestKeyTail(r.ID))
	}
	return c, nil
}

// costArg is a policy step's cost as the scripts take it, as a client
// maps units to limits (docs/semantics.md, "Units"): its cost as given
// when it gives no amount by unit, else each limit's amount (of its unit
// when given, else the cost) joined by ','; a unit no limit counts is
// refused before calling.
func costArg(p *Policy, r Request) (string, *Outcome) {
	if len(r.Costs) == 0 {
		return r.Cost.String(), nil
	}
	for _, u := range slices.Sorted(maps.Keys(r.Costs)) {
		if u == "" || !slices.ContainsFunc(p.Limits, func(l PolicyLimit) bool { return l.Unit == u }) {
			name := u
			if u == "" { // names no unit: the limits without one count the cost
				name = `""`
			}
			o := failure("BADINPUT", fmt.Sprintf("%s: no limit counts the unit %s", p.Name, name))
			return "", &o
		}
	}
	costs := make([]string, len(p.Limits))
	for i, l := range p.Limits {
		costs[i] = r.Cost.String()
		if v, ok := r.Costs[l.Unit]; ok && l.Unit != "" {
			costs[i] = v.String()
		}
	}
	return strings.Join(costs, ","), nil
}

// policyPrologue checks a policy's call as a client does before calling:
// its limits' algorithms known and of one library besides the catalogue's
// (whose policy script it returns), their names unique, the identities
// known and given; and it returns each limit's hash tag.
func policyPrologue(prefix string, p *Policy, ids map[string]string) (*kit.Library, []string, *Outcome) {
	refuse := func(format string, args ...any) (*kit.Library, []string, *Outcome) {
		o := failure("BADINPUT", p.Name+": "+fmt.Sprintf(format, args...))
		return nil, nil, &o
	}
	libName := limitspec.Catalogue
	for i, l := range p.Limits {
		s, o := lookupScripts(l.Algorithm)
		switch {
		case o != nil:
			return nil, nil, o
		case slices.ContainsFunc(p.Limits[:i], func(b PolicyLimit) bool { return b.Name == l.Name }):
			return refuse("limit %s is given twice", l.Name)
		case (l.Identity == "") == (l.Constant == ""):
			o := failure("BADINPUT", p.Name+"."+l.Name+": give an Identity (a name each request passes a value for) or a Constant (one value for every caller)")
			return nil, nil, &o
		case s.Library != limitspec.Catalogue && libName != limitspec.Catalogue && s.Library != libName:
			return refuse("its limits are of the libraries %s and %s", libName, s.Library)
		case s.Library != limitspec.Catalogue:
			libName = s.Library
		}
	}
	lib, _ := kit.LookupLibrary(libName)
	idents := p.Identities()
	for name := range ids {
		if !slices.Contains(idents, name) {
			return refuse("unknown identity %q", name)
		}
	}
	tags := make([]string, len(p.Limits))
	for i, l := range p.Limits {
		tags[i] = l.Constant
		if l.Identity == "" {
			continue
		}
		v, ok := ids[l.Identity]
		if !ok {
			return refuse("missing identity %s", l.Identity)
		}
		if o := refuseKey(prefix, p.Name+": identity "+l.Identity, v); o != nil {
			return nil, nil, o
		}
		tags[i] = v
	}
	return lib, tags, nil
}

// scriptSources maps the function name of every script of every library
// linked in to its source: each algorithm's decision, reset and views,
// and each library's policy scripts.
func scriptSources() map[string]string {
	out := map[string]string{}
	add := func(lib string, s kit.Script) { out[lib+"_"+s.Name] = s.Source }
	for _, s := range kit.AllScripts() {
		for _, x := range []kit.Script{s.Decide, s.Reset} {
			add(s.Library, x)
		}
		for _, v := range s.Views {
			add(s.Library, v.Script)
		}
	}
	for _, l := range kit.Libraries() {
		add(l.Name, l.Policy)
		add(l.Name, l.PolicyReset)
		add(l.Name, l.Holds)
	}
	return out
}

// outcome turns a decision's reply into an Outcome: an algorithm's seven
// integers, or a policy's (the binding index, then each limit's seven),
// whose result a client composes: the binding limit's, its delay the
// longest of all when every limit admitted or the call was forced, else
// 0 (docs/semantics.md, "Policies").
func (c scriptCall) outcome(reply []int64) Outcome {
	if c.limits == 0 {
		return replyOutcome(reply)
	}
	n, k := len(kit.ReplyFields), c.limits
	if len(reply) != 1+n*k {
		return failure("BADREPLY", fmt.Sprintf("reply has %d integers, want %d", len(reply), 1+n*k))
	}
	b := reply[0]
	if b < 1 || b > int64(k) {
		return failure("BADREPLY", fmt.Sprintf("binding limit %d of %d", b, k))
	}
	var o Outcome
	all := true
	for i := range k {
		l := replyOutcome(reply[1+n*i : 1+n*(i+1)])
		if l.Error != "" {
			return l
		}
		o.Limits = append(o.Limits, l)
		all = all && l.Allowed
	}
	o.Reply, o.Index = o.Limits[b-1].Reply, b
	o.DelayMs = 0
	if all || c.force {
		for _, l := range o.Limits {
			o.DelayMs = max(o.DelayMs, l.DelayMs)
		}
	}
	return o
}

// replyOutcome turns a script's reply, seven integers, into an Outcome.
func replyOutcome(reply []int64) Outcome {
	if len(reply) != len(kit.ReplyFields) {
		return failure("BADREPLY", fmt.Sprintf("reply has %d integers, want %d", len(reply), len(kit.ReplyFields)))
	}
	if reply[0] != 0 && reply[0] != 1 {
		return failure("BADREPLY", fmt.Sprintf("allowed is %d, want 0 or 1", reply[0]))
	}
	return Outcome{Reply: kit.Reply{Allowed: reply[0] == 1, Limit: reply[1], Remaining: reply[2],
		RetryAfterMs: reply[3], ResetAfterMs: reply[4], DelayMs: reply[5], Tier: reply[6]}}
}

// wrongTypeKeys are the keys of r's call (with prefix inside the hash
// tag) that w names: its state keys, and a holding policy's holds keys.
// A target plants there a value of plantedType: a hash, the type of no
// state (a string, a zset or a list), but on a holding policy's hash of
// holds, a string.
func wrongTypeKeys(prefix string, r Request, w WrongType) []string {
	c, refused := prepareCall(prefix, r, decideCall, "")
	if refused != nil {
		return nil
	}
	if w.All {
		return c.keys
	}
	var out []string
	for _, k := range w.Keys {
		if k <= len(c.keys) {
			out = append(out, c.keys[k-1])
		}
	}
	return out
}

// plantedType is the type of what a wrong_type step plants at key k
// (see wrongTypeKeys): "hash", or "string" for a hash of holds.
func plantedType(k string) string {
	if strings.HasSuffix(k, ":hh") {
		return "string"
	}
	return "hash"
}
