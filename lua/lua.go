// Package lua embeds the Lua scripts generated from spec/algorithms.yaml.
//
// Each script decides one request of one algorithm atomically inside Redis.
// Its calling convention (documented at the head of every .lua file and in
// manifest.json) is:
//
//	KEYS[i] = "{" + key + "}" + Keys[i]   (all keys share one hash tag)
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
	// Keys are the suffixes of the KEYS entries, in order; the full key is
	// "{" + key + "}" + suffix.
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

// KeyNames returns the KEYS of a call for the given limiter key.
func (s Script) KeyNames(key string) []string {
	out := make([]string, len(s.Keys))
	for i, suffix := range s.Keys {
		out[i] = "{" + key + "}" + suffix
	}
	return out
}

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
