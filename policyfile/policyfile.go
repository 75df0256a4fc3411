// Package policyfile reads limits and policies as configuration states
// them: an algorithm by its name ("gcra", or "library.name" for a user's
// spec) with its parameters named and measured as its spec names and
// measures them (ms for durations), and a policy from a YAML or JSON
// file of such limits.
//
// It knows the catalogue's algorithms (spec/algorithms.yaml), and those
// of every package cmd/gen wrote from a user's spec that the program
// links in: such a package registers its algorithms when it is
// initialized.
package policyfile

import (
	"bytes"
	"fmt"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/kit"
)

// NewLimit returns the typed limit of the named algorithm ("gcra", or
// "library.name" for a user's spec) with params named and measured as
// its spec names and measures them (ms for durations); optional ones may
// be left out. An unknown algorithm, a missing, unknown or out-of-domain
// parameter: an error matching limitspec.ErrBadInput.
func NewLimit(algorithm string, params map[string]int64) (limitspec.Limit, error) {
	build, ok := kit.LookupLimit(limitspec.ParseAlgorithm(algorithm))
	if !ok {
		return nil, kit.BadInput("unknown algorithm %q (known: %v; is the package of its spec imported?)", algorithm, Algorithms())
	}
	return build(params)
}

// Algorithms lists the algorithms NewLimit knows, sorted by String.
func Algorithms() []limitspec.Algorithm { return kit.LimitAlgorithms() }

// file is the YAML (or JSON) form of a policy.
type file struct {
	Name   string `yaml:"name"`
	Limits []struct {
		Name      string           `yaml:"name"`
		Algorithm string           `yaml:"algorithm"`
		Identity  string           `yaml:"identity"`
		Constant  string           `yaml:"constant"`
		Params    map[string]int64 `yaml:"params"`
	} `yaml:"limits"`
}

// Parse reads a policy from YAML or JSON:
//
//	name: api
//	limits:
//	  - {name: burst, algorithm: gcra, identity: user, params: {burst: 5, rate: 10, period_ms: 1000}}
//	  - {name: daily, algorithm: sliding_log, identity: user, params: {limit: 1000, window_ms: 86400000}}
//
// Each limit names its algorithm as NewLimit takes it and its
// parameters as the spec names them, in its units (ms). An unknown
// field, algorithm or parameter is refused, as limitspec.NewPolicy
// refuses what it refuses: an error matching limitspec.ErrBadInput.
func Parse(data []byte) (*limitspec.Policy, error) {
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, kit.BadInput("policy: %v", err)
	}
	limits := make([]limitspec.PolicyLimit, len(f.Limits))
	for i, l := range f.Limits {
		lim, err := NewLimit(l.Algorithm, l.Params)
		if err != nil {
			return nil, kit.BadInput("%s.%s: %s", f.Name, l.Name, err.Error())
		}
		limits[i] = limitspec.PolicyLimit{Name: l.Name, Limit: lim, Identity: l.Identity, Constant: l.Constant}
	}
	return limitspec.NewPolicy(f.Name, limits...)
}

// Load reads a policy from a YAML or JSON file (see Parse).
func Load(path string) (*limitspec.Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}
