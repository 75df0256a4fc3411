package config

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/policyfile"
)

// rateLimit reads the rate_limit p of the descriptor at path and builds
// its limit.
func (d *decoder) rateLimit(p pair, path string) (*RateLimit, error) {
	m := deref(p.value)
	if m.Kind != yaml.MappingNode {
		return nil, d.errAt(m, "rate_limit is a mapping (unit, requests_per_unit, ...), not %s", describe(m))
	}
	got, err := d.known(m, "rate_limit", rateLimitKeys)
	if err != nil {
		return nil, err
	}
	rl := &RateLimit{FullKey: path}
	unit, err := d.str(got["unit"].value, "unit")
	if err != nil {
		return nil, err
	}
	rl.Unit = parseUnit(unit)
	if p, ok := got["requests_per_unit"]; ok && !isNull(p.value) {
		n, err := d.integer(p.value, "requests_per_unit", 0, math.MaxUint32)
		if err != nil {
			return nil, err
		}
		rl.RequestsPerUnit = uint32(n)
	}
	if rl.Unlimited, err = d.flag(got["unlimited"].value, "unlimited"); err != nil {
		return nil, err
	}
	if rl.Holds, err = d.flag(got["holds"].value, "holds"); err != nil {
		return nil, err
	}
	if rl.Name, err = d.str(got["name"].value, "name"); err != nil {
		return nil, err
	}
	if _, ok := got["algorithm"]; ok {
		err = d.algorithmLimit(rl, got, unit)
	} else {
		err = d.fixedWindow(rl, got, p.key, unit)
	}
	if err != nil {
		return nil, err
	}
	rl.Replaces, err = d.replaces(got["replaces"].value, rl.Name)
	return rl, err
}

// badUnit refuses a unit that is none, at its node.
func (d *decoder) badUnit(got map[string]pair, unit string) error {
	return d.errAt(got["unit"].value, "invalid rate limit unit %q (%s)", unit, unitList)
}

// fixedWindow makes rl the reference's limit: requests_per_unit per
// unit in a fixed window, none when unlimited, every request over it
// when requests_per_unit is 0. at is the key rate_limit, unit the unit
// as written.
func (d *decoder) fixedWindow(rl *RateLimit, got map[string]pair, at *yaml.Node, unit string) error {
	if p, ok := got["params"]; ok {
		return d.errAt(p.key, "params needs algorithm: without one the limit is a fixed window of requests_per_unit per unit")
	}
	switch {
	case rl.Unlimited && rl.Unit != Unknown:
		return d.errAt(got["unit"].value, "unlimited: true takes no unit, and this one has %q", unit)
	case rl.Unlimited:
		return nil
	case unit == "":
		return d.errAt(at, "rate_limit has no unit (%s), nor unlimited: true", unitList)
	case rl.Unit == Unknown:
		return d.badUnit(got, unit)
	}
	if err := rl.fixedWindow(); err != nil {
		return d.errAt(got["requests_per_unit"].value, "%v", err)
	}
	return nil
}

// OverrideKey is the FullKey of the limit a descriptor carries itself
// (Envoy's limit override), which no file writes.
const OverrideKey = "override"

// Override is the limit of a descriptor that carries its own (Envoy's
// limit override): the reference's fixed window of requestsPerUnit per
// unit, every request over it when requestsPerUnit is 0. Its FullKey is
// OverrideKey. A unit that is none is refused.
func Override(unit Unit, requestsPerUnit uint32) (*RateLimit, error) {
	if unit.Seconds() == 0 {
		return nil, fmt.Errorf("limit override: unit %d is none of %s", int(unit), unitList)
	}
	rl := &RateLimit{FullKey: OverrideKey, Unit: unit, RequestsPerUnit: requestsPerUnit}
	return rl, rl.fixedWindow()
}

// fixedWindow sets rl's Limit to the reference's fixed window of its
// requests per unit, or DenyAll when that is 0.
func (rl *RateLimit) fixedWindow() error {
	if rl.RequestsPerUnit == 0 {
		rl.DenyAll = true
		return nil
	}
	fw := limitspec.FixedWindow{Limit: int64(rl.RequestsPerUnit), Window: time.Duration(rl.Unit.Seconds()) * time.Second}
	if err := fw.Validate(); err != nil {
		return err
	}
	rl.Limit = fw
	return nil
}

// algorithmLimit makes rl our limit: the algorithm's with params. Its
// unit and requests_per_unit are optional, but a unit given must be
// one, and requests_per_unit needs it.
func (d *decoder) algorithmLimit(rl *RateLimit, got map[string]pair, unit string) error {
	alg := got["algorithm"]
	var err error
	if rl.Algorithm, err = d.str(alg.value, "algorithm"); err != nil {
		return err
	}
	if rl.Unlimited {
		return d.errAt(got["unlimited"].key, "unlimited: true and algorithm %q contradict each other: give one", rl.Algorithm)
	}
	if unit != "" && rl.Unit == Unknown {
		return d.badUnit(got, unit)
	}
	if p, ok := got["requests_per_unit"]; ok && !isNull(p.value) && rl.Unit == Unknown {
		return d.errAt(p.key, "requests_per_unit is reported per unit: give unit too (%s)", unitList)
	}
	params, err := d.params(got["params"].value)
	if err != nil {
		return err
	}
	rl.Params = params
	lim, err := policyfile.NewLimit(rl.Algorithm, params)
	if err != nil {
		return d.errAt(d.blame(err.Error(), rl.Algorithm, got), "%v", err)
	}
	if limitspec.InFlight(lim) && !rl.Holds {
		return d.errAt(alg.value, "algorithm %q counts the requests held at once: it needs holds: true", rl.Algorithm)
	}
	rl.Limit = lim
	return nil
}

// params reads our params: a mapping of parameter names to integers.
func (d *decoder) params(v *yaml.Node) (map[string]int64, error) {
	if isNull(v) {
		return nil, nil
	}
	m := deref(v)
	if m.Kind != yaml.MappingNode {
		return nil, d.errAt(m, "params is a mapping of parameter names to whole numbers, not %s", describe(m))
	}
	ps, err := d.fields(m)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(ps))
	for _, p := range ps {
		if out[p.key.Value], err = d.integer(p.value, "parameter "+p.key.Value, math.MinInt64, math.MaxInt64); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// blame finds the node a refusal of policyfile.NewLimit is about: the
// algorithm when it is unknown, the parameter the message names, else
// params (or the algorithm, when there are none).
func (d *decoder) blame(msg, algorithm string, got map[string]pair) *yaml.Node {
	if !slices.Contains(policyfile.Algorithms(), limitspec.ParseAlgorithm(algorithm)) {
		return got["algorithm"].value
	}
	params, ok := got["params"]
	if !ok || isNull(params.value) {
		return got["algorithm"].value
	}
	words := strings.FieldsFunc(msg, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })
	if ps, err := d.fields(deref(params.value)); err == nil {
		for _, p := range ps {
			for i := 0; i+1 < len(words); i++ {
				if words[i] == "parameter" && words[i+1] == p.key.Value {
					return p.value
				}
			}
		}
	}
	return params.value
}

// replaces reads the list of {name: x} of the limits a limit named own
// replaces; a name is required, and not own.
func (d *decoder) replaces(v *yaml.Node, own string) ([]string, error) {
	if isNull(v) {
		return nil, nil
	}
	list := deref(v)
	if list.Kind != yaml.SequenceNode {
		return nil, d.errAt(list, "replaces is a list of {name: ...}, not %s", describe(list))
	}
	var names []string
	for _, item := range list.Content {
		m := deref(item)
		if m.Kind != yaml.MappingNode {
			return nil, d.errAt(item, "replaces is a list of mappings ({name: ...}), not of %s", describe(item))
		}
		got, err := d.known(m, "a replaces entry", replacesKeys)
		if err != nil {
			return nil, err
		}
		name, err := d.str(got["name"].value, "name")
		if err != nil {
			return nil, err
		}
		switch name {
		case "":
			return nil, d.errAt(item, "replaces entry has no name")
		case own:
			return nil, d.errAt(item, "rate limit %q replaces itself", name)
		}
		names = append(names, name)
	}
	return names, nil
}
