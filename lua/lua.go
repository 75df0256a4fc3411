// Package lua embeds the Lua scripts generated from spec/algorithms.yaml.
//
// Each script decides one request of one algorithm atomically inside Redis.
// Its calling convention (documented at the head of every .lua file and in
// manifest.json) is:
//
//	KEYS[i] = "{" + key + "}" + Keys[i], each <param> in it replaced by
//	          the parameter's value (all keys share one hash tag)
//	ARGV    = now_ms, cost, the Strings (meta), then the Params in order
//	reply   = {allowed (1/0), limit, remaining, retry_after_ms,
//	           reset_after_ms, delay_ms, tier}
//
// A view (View not empty) reads an algorithm's state and writes nothing:
// ARGV is now_ms then the Params, and the reply an array of entries, each
// an array of the Reply fields.
//
// Refused input is an error reply whose first word is BADINPUT; a stored
// value that is not what the script wrote is BADSTATE; a key holding another
// Redis type is Redis's own WRONGTYPE.
package lua

import (
	"fmt"
	"regexp"
)

// Script is one generated script and its interface.
type Script struct {
	// Name is the script's name: the algorithm's, or algorithm_view.
	Name string
	// Algorithm is the algorithm the script belongs to.
	Algorithm string
	// View is the view's name; "" for the decision script.
	View string
	// Source is the Lua text, as in the .lua file.
	Source string
	// SHA1 is the hex SHA1 of Source, as EVALSHA expects.
	SHA1 string
	// ResetSource and ResetSHA1 are the decision's reset script (empty
	// for a view): the same KEYS, the parameters as ARGV; it deletes the
	// keys and replies with the number deleted.
	ResetSource, ResetSHA1 string
	// ForceSource and ForceSHA1 are the decision's forced call (empty for
	// a view): the same KEYS, ARGV and reply; it consumes the cost even
	// when it denies (docs/semantics.md, "Force").
	ForceSource, ForceSHA1 string
	// Keys are the suffixes of the KEYS entries, in order, each naming
	// parameters in angle brackets: ":sl:<window_ms>:sum"; the full key is
	// "{" + key + "}" + the suffix with each <param> replaced by its value.
	Keys []string
	// Strings are the per-call string inputs, in ARGV order after now_ms
	// and cost.
	Strings []string
	// Params are the parameter names, in ARGV order after the inputs.
	Params []string
	// Defaults are the values of the optional parameters left out.
	Defaults map[string]string
	// Reply names the integers of the reply array, in order; for a view,
	// the fields of each entry.
	Reply []string
}

// KeyNames returns the KEYS of a call for the given limiter key and
// parameter values (in decimal, by name; a missing optional one is its
// default).
func (s Script) KeyNames(key string, params map[string]string) []string {
	out := make([]string, len(s.Keys))
	for i, suffix := range s.Keys {
		out[i] = "{" + key + "}" + paramRE.ReplaceAllStringFunc(suffix, func(p string) string {
			name := p[1 : len(p)-1]
			if v, ok := params[name]; ok {
				return v
			}
			return s.Defaults[name]
		})
	}
	return out
}

// paramRE is a parameter named in a key's suffix.
var paramRE = regexp.MustCompile(`<[a-z][a-z0-9_]*>`)

// Lookup returns the decision script of the named algorithm.
func Lookup(name string) (Script, bool) { return LookupView(name, "") }

// LookupView returns the script of one view of an algorithm; view ""
// is the decision script.
func LookupView(algorithm, view string) (Script, bool) {
	for _, s := range Scripts {
		if s.Algorithm == algorithm && s.View == view {
			return s, true
		}
	}
	return Script{}, false
}

// Policy is one generated policy script: several limits decided in one
// call, all or nothing (docs/semantics.md, "Policies"). Its calling
// convention:
//
//	KEYS = every limit's keys, in order (KeyNames); a constant identity's
//	       keys may carry a prefix inside the hash tag, as any key
//	       (a key namespace), so the script checks their form only
//	ARGV = now_ms, cost, then Params
//	reply = the policy's result (7 integers, as an algorithm's), the
//	        binding limit's index from 1, then each limit's 7 integers
type Policy struct {
	Name   string
	Source string
	SHA1   string
	// ResetSource and ResetSHA1 are the policy's reset script: the same
	// KEYS, no ARGV; it deletes them and replies with the number deleted.
	ResetSource, ResetSHA1 string
	// ForceSource and ForceSHA1 are the policy's forced call: the same
	// KEYS, ARGV and reply; every limit consumes the cost even when the
	// policy denies (docs/semantics.md, "Force").
	ForceSource, ForceSHA1 string
	// ClusterSafe is false when the keys of one call may lie in several
	// Redis Cluster slots (the limits count several identities): such a
	// policy cannot run atomically on a cluster.
	ClusterSafe bool
	// Identities name the values a call passes, in order of first use.
	Identities []string
	// Params are the ARGV names of the per-call parameters
	// ("limit.param"), in ARGV order after now_ms and cost.
	Params []string
	Limits []PolicyLimit
}

// PolicyLimit is one limit of a policy.
type PolicyLimit struct {
	Name      string
	Algorithm string
	// Identity names the identity the limit counts; "" when Constant is
	// the value it counts for every caller.
	Identity string
	Constant string
	// Params are the parameters the spec fixes; PerCall names the others,
	// passed in ARGV as Name + "." + param.
	Params  map[string]int64
	PerCall []string
	// Keys are the suffixes of the limit's KEYS entries; the full key is
	// "{" + the identity's value (or Constant) + "}" + suffix.
	Keys []string
}

// KeyNames returns the KEYS of a call for the given identity values,
// with prefix in front of each value and constant inside the hash tag (""
// for none), or false when one of p's identities has no value in ids.
func (p Policy) KeyNames(prefix string, ids map[string]string) ([]string, bool) {
	var out []string
	for _, l := range p.Limits {
		tag, ok := l.Counts(ids)
		if !ok {
			return nil, false
		}
		for _, suffix := range l.Keys {
			out = append(out, "{"+prefix+tag+"}"+suffix)
		}
	}
	return out, true
}

// Counts returns the value the limit counts for the identity values ids:
// its identity's value, or its Constant; false when ids lacks it.
func (l PolicyLimit) Counts(ids map[string]string) (string, bool) {
	if l.Identity == "" {
		return l.Constant, true
	}
	v, ok := ids[l.Identity]
	return v, ok
}

// ParamsWith returns every parameter of the limit: those the spec fixes,
// and those of params (a policy's per-call parameters, named limit.param)
// that are the limit's.
func (l PolicyLimit) ParamsWith(params map[string]int64) map[string]int64 {
	all := map[string]int64{}
	for k, v := range l.Params {
		all[k] = v
	}
	for _, name := range l.PerCall {
		if v, ok := params[l.Name+"."+name]; ok {
			all[name] = v
		}
	}
	return all
}

// ResetName is the name of the reset script of an algorithm or policy:
// the file lua/<ResetName>.lua.
func ResetName(name string) string { return name + resetSuffix }

// ForceName is the name of the forced call of an algorithm or policy: the
// file lua/<ForceName>.lua.
func ForceName(name string) string { return name + forceSuffix }

// LookupPolicy returns the named policy's script.
func LookupPolicy(name string) (Policy, bool) {
	for _, p := range Policies {
		if p.Name == name {
			return p, true
		}
	}
	return Policy{}, false
}

// FunctionName is the library's function that runs the named script (an
// algorithm, view, policy, reset or forced call) with the same KEYS, ARGV
// and reply: FCALL FunctionName(name) numkeys KEYS... ARGV...
func FunctionName(script string) string { return functionPrefix + script }

// ClusterRefusal is what a client says when asked to run p on a Redis
// Cluster (or a Ring) while p is not ClusterSafe: why it cannot, and what
// to do instead.
func (p Policy) ClusterRefusal() string {
	return fmt.Sprintf("policy %s counts several identities (%v), whose keys a Redis Cluster or Ring may place on different nodes: "+
		"no script can decide it atomically there; split it into one policy per identity, or count every limit by one identity "+
		"(docs/semantics.md, \"Policies\")", p.Name, p.Identities)
}

// An error a script raises through redis.call comes back from miniredis
// as "ERR Error running script (...): :LINE: <the error> stack
// traceback: ..."; Redis itself answers with the error alone.
var scriptErrorRE = regexp.MustCompile(`^ERR Error (?:compiling|running) script[^:]*: [^:]*:\d+: ([A-Z]+ .*?)(?: stack traceback:.*)?$`)

// ErrorReply is the error reply a script gave (BADINPUT ..., BADSTATE
// ..., WRONGTYPE ...), recovered from the text of a Redis error as Redis
// or miniredis reports it; other texts are returned as they are.
func ErrorReply(msg string) string {
	if m := scriptErrorRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return msg
}
