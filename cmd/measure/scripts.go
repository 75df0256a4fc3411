package main

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/kit"
	_ "github.com/limitspec/limitspec/lua" // the catalogue's scripts
)

// script is one decision script or view of the catalogue, as measure
// runs it: its name, algorithm and view ("" for a decision), text and
// SHA1, the suffixes of its keys, its string inputs, its parameters and
// the defaults of the optional ones.
type script struct {
	Name, Algorithm, View, Source, SHA1 string
	Keys, Strings, Params               []string
	Defaults                            map[string]string
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
			Keys: s.Keys, Strings: s.Inputs, Defaults: map[string]string{}}
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

// paramRE is a parameter named in a key's suffix.
var paramRE = regexp.MustCompile(`<[a-z][a-z0-9_]*>`)

// KeyNames are the names of s's keys for key under parameters in decimal.
func (s script) KeyNames(key string, params map[string]string) []string {
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

// policyCall is the KEYS and ARGV of a decision of p for the identity
// values ids at t, cost 1, with prefix inside every hash tag: every
// limit's keys; now_ms, cost, force 0, then each limit's algorithm, key
// infix, number of parameters and parameters.
func policyCall(p *limitspec.Policy, prefix string, ids map[string]string, t int64) ([]string, []any, error) {
	tags, err := kit.PolicyKeys(p, ids)
	if err != nil {
		return nil, nil, err
	}
	var keys []string
	argv := []any{t, 1, 0}
	for i, l := range p.Limits() {
		s, ok := kit.LookupScripts(l.Limit.Algorithm())
		if !ok {
			return nil, nil, fmt.Errorf("no scripts of %s", l.Limit.Algorithm())
		}
		args, err := s.Args(l.Limit)
		if err != nil {
			return nil, nil, err
		}
		params := kit.Decimal(args)
		keys = append(keys, s.KeyNames(prefix+tags[i], p.KeyInfix(i), params)...)
		argv = append(argv, l.Limit.Algorithm().String(), p.KeyInfix(i), strconv.Itoa(len(params)))
		for _, v := range params {
			argv = append(argv, v)
		}
	}
	return keys, argv, nil
}
