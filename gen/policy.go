package gen

import (
	"errors"
	"strconv"
	"strings"
)

// Policy decides one request by several limits at once, all or nothing
// (docs/semantics.md, "Policies").
type Policy struct {
	Name   string
	Doc    string
	Pos    Pos
	Limits []*Limit
}

// Limit is one limit of a policy: an algorithm, its parameters, and the
// identity it counts.
type Limit struct {
	Name string
	Alg  *Algorithm
	// Identity names the identity the limit counts; "" when Constant is
	// set instead.
	Identity string
	// Constant is the identity value of a limit that counts every caller
	// alike (such as "global"); "" when Identity is set.
	Constant string
	// Fixed are the parameter values the spec fixes; every other
	// parameter is passed per call (PerCall).
	Fixed map[string]int64
	Pos   Pos
}

// PerCall returns the parameters of l passed per call, in the algorithm's
// order.
func (l *Limit) PerCall() []*Param {
	var out []*Param
	for _, p := range l.Alg.Params {
		if _, ok := l.Fixed[p.Name]; !ok {
			out = append(out, p)
		}
	}
	return out
}

// The YAML shape of spec/policies.yaml.
type yamlPolicies struct {
	Policies []yamlPolicy `yaml:"policies"`
}

type yamlPolicy struct {
	Name   string      `yaml:"name"`
	Doc    string      `yaml:"doc"`
	Limits []yamlLimit `yaml:"limits"`
}

type yamlLimit struct {
	Name      string            `yaml:"name"`
	Algorithm string            `yaml:"algorithm"`
	Identity  string            `yaml:"identity"`
	Constant  string            `yaml:"constant"`
	Params    map[string]string `yaml:"params"`
}

// perCallValue is the value that, in place of an integer, makes a
// parameter one the caller passes with each call: an argument of the
// policy's Go function.
const perCallValue = "call"

// LoadPolicies parses and checks the policies of src (a file of policies
// alone) over the algorithms of sp and adds them to sp; file names the
// source in errors.
func LoadPolicies(sp *Spec, file string, src []byte) error {
	var y yamlPolicies
	root, err := decodeStrict(file, src, &y)
	if err != nil {
		return err
	}
	l := &loader{file: file, sp: sp, root: root}
	return l.policies(y.Policies)
}

// policies reads the policies of the file and adds them to the spec.
func (l *loader) policies(ys []yamlPolicy) error {
	lines := sequenceLines(l.root, "policies")
	seen := map[string]bool{}
	for i, yp := range ys {
		pos := Pos{l.file, 0}
		if i < len(lines) {
			pos.Line = lines[i]
		}
		p := l.policy(yp, i, pos)
		if p == nil {
			continue
		}
		if seen[p.Name] {
			l.errf(pos, "policy %q is defined twice", p.Name)
		}
		seen[p.Name] = true
		l.sp.Policies = append(l.sp.Policies, p)
	}
	return errors.Join(l.errs...)
}

func (l *loader) policy(yp yamlPolicy, index int, pos Pos) *Policy {
	p := &Policy{Name: yp.Name, Doc: strings.TrimSpace(yp.Doc), Pos: pos}
	if !nameRE.MatchString(p.Name) {
		l.errf(pos, "policy %q: names are lower_case", p.Name)
		return nil
	}
	if p.Doc == "" {
		l.errf(pos, "policy %s: doc is required", p.Name)
	}
	if len(yp.Limits) == 0 {
		l.errf(pos, "policy %s: no limits", p.Name)
	}
	names := map[string]bool{}
	for j, yl := range yp.Limits {
		lim := l.limit(p, yl, l.nodePos(pos, "policies", index, "limits", j))
		if lim == nil {
			continue
		}
		if names[lim.Name] {
			l.errf(lim.Pos, "policy %s: limit %s declared twice", p.Name, lim.Name)
		}
		names[lim.Name] = true
		p.Limits = append(p.Limits, lim)
	}
	return p
}

func (l *loader) limit(p *Policy, yl yamlLimit, pos Pos) *Limit {
	lim := &Limit{Name: yl.Name, Identity: yl.Identity, Constant: yl.Constant, Fixed: map[string]int64{}, Pos: pos}
	what := p.Name + "." + lim.Name
	if !nameRE.MatchString(lim.Name) {
		l.errf(pos, "policy %s: limit %q: names are lower_case", p.Name, lim.Name)
		return nil
	}
	for _, a := range l.sp.InScope() {
		if a.Name == yl.Algorithm || a.Qualified() == yl.Algorithm {
			lim.Alg = a
		}
	}
	switch {
	case lim.Alg == nil:
		l.errf(pos, "%s: unknown algorithm %q", what, yl.Algorithm)
		return nil
	case (lim.Identity == "") == (lim.Constant == ""):
		l.errf(pos, "%s: give either identity (a name the caller passes a value for) or constant (a value for every caller)", what)
	case lim.Identity != "" && !nameRE.MatchString(lim.Identity):
		l.errf(pos, "%s: identity %q: names are lower_case", what, lim.Identity)
	case lim.Constant != "" && (strings.HasPrefix(lim.Constant, "}") || strings.ContainsAny(lim.Constant, "{}")):
		l.errf(pos, "%s: constant %q must not contain '{' or '}'", what, lim.Constant)
	}
	for name, v := range yl.Params {
		l.fixParam(lim, what, name, v)
	}
	for _, prm := range lim.Alg.Params {
		_, given := yl.Params[prm.Name]
		switch {
		case given:
		case prm.Default != nil:
			lim.Fixed[prm.Name] = *prm.Default
		default:
			l.errf(pos, "%s: parameter %s is missing: give an integer or %q", what, prm.Name, perCallValue)
		}
	}
	return lim
}

// fixParam records the value the spec gives parameter name of lim: an
// integer in the parameter's domain, or perCallValue.
func (l *loader) fixParam(lim *Limit, what, name, v string) {
	var prm *Param
	for _, q := range lim.Alg.Params {
		if q.Name == name {
			prm = q
		}
	}
	if prm == nil {
		l.errf(lim.Pos, "%s: %s has no parameter %q", what, lim.Alg.Name, name)
		return
	}
	if v == perCallValue {
		return
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < prm.Min || n > prm.Max {
		l.errf(lim.Pos, "%s: parameter %s must be %q or an integer in [%d, %d], got %q", what, name, perCallValue, prm.Min, prm.Max, v)
		return
	}
	lim.Fixed[name] = n
}
