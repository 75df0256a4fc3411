package main

import (
	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/kit"
	_ "github.com/limitspec/limitspec/lua" // the catalogue's scripts
	"github.com/limitspec/limitspec/policyfile"
)

// script is one decision script or view of the catalogue, as measure
// runs it: its name, algorithm and view ("" for a decision), text and
// SHA1, the suffixes of its keys, its string inputs, its parameters and
// the defaults of the optional ones.
type script struct {
	Name, Algorithm, View, Source, SHA1 string
	Keys, Strings, Params               []string
	Defaults                            map[string]string
	scripts                             *kit.Scripts // its algorithm's
}

// allScripts lists every decision script and view of the catalogue, by
// algorithm.
func allScripts() []script {
	var out []script
	for _, s := range kit.AllScripts() {
		if s.ID.Library != limitspec.Catalogue {
			continue
		}
		base := script{Name: s.Decide.Name, Algorithm: s.ID.Name, Source: s.Decide.Source, SHA1: s.Decide.SHA1,
			Keys: s.Keys, Strings: s.Inputs, Defaults: map[string]string{}, scripts: s}
		for _, p := range s.Params {
			base.Params = append(base.Params, p.Name)
			if p.Default != "" {
				base.Defaults[p.Name] = p.Default
			}
		}
		out = append(out, base)
		for _, v := range s.Views {
			view := base
			view.Name, view.View, view.Source, view.SHA1, view.Strings = v.Script.Name, v.Name, v.Script.Source, v.Script.SHA1, nil
			out = append(out, view)
		}
	}
	return out
}

// lookup returns the decision script of an algorithm.
func lookup(alg string) (script, bool) {
	for _, s := range allScripts() {
		if s.Algorithm == alg && s.View == "" {
			return s, true
		}
	}
	return script{}, false
}

// KeyNames are the names of s's keys for key under parameters in decimal
// (an optional one left out is its default).
func (s script) KeyNames(key string, params map[string]string) []string {
	ordered := make([]string, len(s.Params))
	for i, name := range s.Params {
		v, ok := params[name]
		if !ok {
			v = s.Defaults[name]
		}
		ordered[i] = v
	}
	return s.scripts.KeyNames(key, "", ordered)
}

// policyCall is the KEYS and ARGV of a decision of p for the identity
// values ids at t, cost 1, with prefix inside every hash tag
// (limitcall.NewPolicyCall).
func policyCall(p *limitspec.Policy, prefix string, ids map[string]string, t int64) ([]string, []any, error) {
	c, err := limitcall.NewPolicyCall(p, ids, prefix)
	if err != nil {
		return nil, nil, err
	}
	argv := []any{t, 1, kit.ForceArg(false)}
	for _, v := range c.Limits {
		argv = append(argv, v)
	}
	return c.Keys, argv, nil
}

// inFlight reports whether s's algorithm writes no state
// (limitspec.InFlight, of its limit with the default parameters).
func inFlight(s script) bool {
	lim, err := policyfile.NewLimit(s.Algorithm, defaultValues(s, 10))
	return err == nil && limitspec.InFlight(lim)
}
