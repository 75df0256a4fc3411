package kit

import (
	"strconv"

	"github.com/limitspec/limitspec"
)

// PolicyCall is the call of the policy script that decides a policy for
// some identity values: the library whose script it is, every limit's
// keys in order, and what ARGV holds after now_ms, cost and force (the
// whole ARGV of the library's PolicyReset): each limit's algorithm, key
// infix, number of parameters and parameters.
type PolicyCall struct {
	Library *Library
	Keys    []string
	Limits  []string
}

// NewPolicyCall prepares p's call for the identity values ids, with
// prefix inside every hash tag. It refuses what PolicyLibrary refuses,
// and identity values the scripts refuse as keys.
func NewPolicyCall(p *limitspec.Policy, ids map[string]string, prefix string) (*PolicyCall, error) {
	tags, err := PolicyKeys(p, ids)
	if err != nil {
		return nil, err
	}
	lib, limits, err := policyLimits(p)
	if err != nil {
		return nil, err
	}
	c := &PolicyCall{Library: lib}
	for i, pl := range p.Limits() {
		params, infix := Decimal(limits[i].args), p.KeyInfix(i)
		c.Keys = append(c.Keys, limits[i].scripts.KeyNames(prefix+tags[i], infix, params)...)
		c.Limits = append(c.Limits, pl.Limit.Algorithm().String(), infix, strconv.Itoa(len(params)))
		c.Limits = append(c.Limits, params...)
	}
	return c, nil
}

// PolicyLibrary returns the library whose policy script decides p: the
// one library, besides the catalogue, its limits' algorithms come from
// (the catalogue's when none). It refuses a limit no linked package
// decides or whose parameters are refused, and a policy whose limits come
// from two libraries besides the catalogue: one script decides a policy.
func PolicyLibrary(p *limitspec.Policy) (*Library, error) {
	lib, _, err := policyLimits(p)
	return lib, err
}

// policyLimit is a policy's limit's scripts and its parameters as they
// take them.
type policyLimit struct {
	scripts *Scripts
	args    []int64
}

// policyLimits checks p's limits (see PolicyLibrary) and returns its
// library and each limit's scripts and parameters.
func policyLimits(p *limitspec.Policy) (*Library, []policyLimit, error) {
	name := limitspec.Catalogue
	var out []policyLimit
	for _, pl := range p.Limits() {
		s, ok := LookupScripts(pl.Limit.Algorithm())
		if !ok {
			return nil, nil, BadInput("%s.%s: %s: no scripts of this algorithm are linked in (%T is not a limit of a generated package)", p.Name(), pl.Name, pl.Limit.Algorithm(), pl.Limit)
		}
		args, err := s.Args(pl.Limit)
		if err != nil {
			return nil, nil, BadInput("%s.%s: %s", p.Name(), pl.Name, err.Error())
		}
		switch other := pl.Limit.Algorithm().Library; {
		case other == limitspec.Catalogue || other == name:
		case name != limitspec.Catalogue:
			return nil, nil, BadInput("%s: its limits are of the libraries %s and %s: one script decides a policy, over the catalogue and one other library", p.Name(), name, other)
		default:
			name = other
		}
		out = append(out, policyLimit{s, args})
	}
	lib, ok := LookupLibrary(name)
	if !ok {
		return nil, nil, BadInput("%s: the library %s is not linked in", p.Name(), name)
	}
	return lib, out, nil
}
