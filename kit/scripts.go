package kit

import (
	"slices"
	"strconv"
	"strings"

	"github.com/limitspec/limitspec"
)

// Script is one Lua script: its name (its Functions library's function
// is the library's name, "_", and this), its text and the SHA1 EVALSHA
// takes.
type Script struct {
	Name, Source, SHA1 string
}

// Param is a parameter as the scripts take it: its name, and its default
// when it is optional ("" when it is required).
type Param struct {
	Name    string
	Default string
}

// View is a read-only script over an algorithm's state.
type View struct {
	Name   string
	Script Script
	// Returns names the fields of each entry it returns.
	Returns []string
}

// Scripts are an algorithm's Lua scripts and their calling convention:
//
//	KEYS = KeyNames(...)
//	ARGV = now_ms, cost, force, the Inputs, then the Params in order
//
// and the reply, the Reply's fields in order (docs/semantics.md). force
// is ForceArg's: Decide with "1" is the forced call, which charges the
// cost even when it denies (docs/semantics.md, "Force"). A reset and a
// view take the parameters alone (a view, now_ms first).
type Scripts struct {
	ID limitspec.Algorithm
	// Library is the Functions library holding them.
	Library       string
	Decide, Reset Script
	Views         []View
	// Keys are the suffixes of the keys, each naming parameters in angle
	// brackets: ":bk:<bucket_ms>:<window_ms>:<window_ms_2>:<window_ms_3>".
	Keys   []string
	Inputs []string
	Params []Param
	// Args checks lim, a limit of this algorithm (Limit.Validate), and
	// returns its parameters as the scripts take them, every one.
	Args func(lim limitspec.Limit) ([]int64, error)
}

// KeyNames are the names of a call's keys: "{" + tag + "}" + infix +
// each suffix with the parameters it names. params are in the order of
// s.Params, in decimal; a missing trailing one is its default.
func (s *Scripts) KeyNames(tag, infix string, params []string) []string {
	out := s.KeyTails(infix, params)
	for i, tail := range out {
		out[i] = "{" + tag + tail
	}
	return out
}

// KeyTails are the names of a call's keys after the hash tag's "{" and
// value: "}" + infix + each suffix with the parameters it names (see
// KeyNames), so that a caller that decides one limit for many keys
// writes them once and each key's name is "{" + tag + its tail.
func (s *Scripts) KeyTails(infix string, params []string) []string {
	out := make([]string, len(s.Keys))
	for i, suffix := range s.Keys {
		var b strings.Builder
		b.WriteString("}" + infix)
		for {
			open := strings.IndexByte(suffix, '<')
			end := strings.IndexByte(suffix, '>')
			if open < 0 || end < open {
				b.WriteString(suffix)
				break
			}
			b.WriteString(suffix[:open])
			b.WriteString(s.param(suffix[open+1:end], params))
			suffix = suffix[end+1:]
		}
		out[i] = b.String()
	}
	return out
}

// param is the value of the named parameter among params.
func (s *Scripts) param(name string, params []string) string {
	for i, p := range s.Params {
		if p.Name != name {
			continue
		}
		if i < len(params) {
			return params[i]
		}
		return p.Default
	}
	return ""
}

// ForceArg is the argument force as a decision script and the policy
// script take it: "1" for the forced call, "0" for a decision.
func ForceArg(force bool) string {
	if force {
		return "1"
	}
	return "0"
}

// Decimal writes parameters as the scripts take them.
func Decimal(params []int64) []string {
	out := make([]string, len(params))
	for i, p := range params {
		out[i] = strconv.FormatInt(p, 10)
	}
	return out
}

// Library is one spec's Redis Functions library and the scripts that
// decide a policy over its algorithms (and the catalogue's, which every
// spec's policies may use).
type Library struct {
	// Name is the library's name: limitspec.Catalogue, or the package
	// name of a user's spec. Its version function is Name + "_version".
	Name    string
	Version string
	// Source is the library (FUNCTION LOAD).
	Source string
	// Policy decides a policy: KEYS are every limit's keys in order;
	// ARGV is now_ms, cost, force (0 or 1), then for each limit its
	// algorithm (as Algorithm.String writes it), its key infix, the number
	// n of its parameters and those n. PolicyReset deletes a policy's
	// keys: the same KEYS, ARGV the limits alone.
	Policy, PolicyReset Script
	// Holds runs an operation on a holding policy (docs/semantics.md,
	// "Holds"): KEYS are every limit's keys, each followed by its holds
	// key {tag}:<limit>:hd; ARGV is now_ms, cost, op, id, hold_ms, then
	// the limits as Policy takes them.
	Holds Script
	// Algorithms are the algorithms Policy decides.
	Algorithms []limitspec.Algorithm
}

// RegisterScripts registers an algorithm's scripts; a second registration
// of one algorithm panics (at start-up).
func RegisterScripts(s *Scripts) { register(scripts, s.ID, s, "scripts of "+s.ID.String()) }

// LookupScripts returns an algorithm's scripts.
func LookupScripts(id limitspec.Algorithm) (*Scripts, bool) { return lookup(scripts, id) }

// AllScripts returns the scripts of every algorithm, sorted by name.
func AllScripts() []*Scripts {
	mu.RLock()
	defer mu.RUnlock()
	var out []*Scripts
	for _, id := range sortedKeys(scripts) {
		out = append(out, scripts[id])
	}
	return out
}

// RegisterLibrary registers a spec's library; a second one of the same
// name panics (at start-up).
func RegisterLibrary(l *Library) { register(libs, l.Name, l, "library "+l.Name) }

// LookupLibrary returns the library of a name.
func LookupLibrary(name string) (*Library, bool) { return lookup(libs, name) }

// Libraries returns every registered library, the catalogue's first,
// then by name.
func Libraries() []*Library {
	mu.RLock()
	defer mu.RUnlock()
	var out []*Library
	if l, ok := libs[limitspec.Catalogue]; ok {
		out = append(out, l)
	}
	var names []string
	for n := range libs {
		if n != limitspec.Catalogue {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		out = append(out, libs[n])
	}
	return out
}
