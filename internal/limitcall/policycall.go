package limitcall

import (
	"strconv"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/kit"
)

// PolicyCall is the call of the policy script that decides a policy for
// some identity values: the library whose script it is, every limit's
// keys in order, and what ARGV holds after now_ms, cost and force (the
// whole ARGV of the library's PolicyReset): each limit's algorithm, name
// (:<policy>:<limit>), number of parameters and parameters.
type PolicyCall struct {
	Library *kit.Library
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
	t, err := NewPolicyTemplate(p)
	if err != nil {
		return nil, err
	}
	c := &PolicyCall{Library: t.Library, Keys: make([]string, len(t.Tails)), Limits: t.Limits}
	for i, tail := range t.Tails {
		c.Keys[i] = "{" + prefix + tags[t.Of[i]] + tail
	}
	return c, nil
}

// PolicyTemplate is a policy's call before any identity value is known:
// what a caller that decides one policy for many identities prepares
// once. A key's name is "{", the prefix and the hash tag of its limit
// (PolicyKeys's), then its tail.
type PolicyTemplate struct {
	// Library is the library whose policy script decides the policy.
	Library *kit.Library
	// Tails are every limit's keys after their hash tags (see
	// Scripts.KeyTails), the limits' in order; Of[i] is the index of the
	// limit (in Policy.Limits) whose key Tails[i] is.
	Tails []string
	Of    []int
	// Limits is what ARGV holds after now_ms, cost and force (see
	// PolicyCall).
	Limits []string
}

// NewPolicyTemplate prepares p's call (see PolicyTemplate). It refuses
// what PolicyLibrary refuses.
func NewPolicyTemplate(p *limitspec.Policy) (*PolicyTemplate, error) {
	lib, limits, err := policyLimits(p)
	if err != nil {
		return nil, err
	}
	t := &PolicyTemplate{Library: lib}
	for i, pl := range p.Limits() {
		params, infix := kit.Decimal(limits[i].args), limiters.KeyInfix(pl)
		for _, tail := range limits[i].scripts.KeyTails(infix, params) {
			t.Tails, t.Of = append(t.Tails, tail), append(t.Of, i)
		}
		if p.Holds() { // the holds script's: the limit's holds keys after its keys
			t.Tails, t.Of = append(t.Tails, "}"+infix+":hh", "}"+infix+":hz"), append(t.Of, i, i)
		}
		// the script reads the limit's name, :<policy>:<limit>, for its
		// errors; its keys carry the infix, :<limit>
		t.Limits = append(t.Limits, pl.Limit.Algorithm().String(), ":"+p.Name()+infix, strconv.Itoa(len(params)))
		t.Limits = append(t.Limits, params...)
	}
	return t, nil
}

// PolicyLibrary returns the library whose policy script decides p: the
// one library, besides the catalogue, its limits' algorithms come from
// (the catalogue's when none). It refuses a limit no linked package
// decides or whose parameters are refused, and a policy whose limits come
// from two libraries besides the catalogue: one script decides a policy.
func PolicyLibrary(p *limitspec.Policy) (*kit.Library, error) {
	lib, _, err := policyLimits(p)
	return lib, err
}

// policyLimit is a policy's limit's scripts and its parameters as they
// take them.
type policyLimit struct {
	scripts *kit.Scripts
	args    []int64
}

// policyLimits checks p's limits (see PolicyLibrary) and returns its
// library and each limit's scripts and parameters.
func policyLimits(p *limitspec.Policy) (*kit.Library, []policyLimit, error) {
	name := limitspec.Catalogue
	var out []policyLimit
	for _, pl := range p.Limits() {
		s, ok := kit.LookupScripts(pl.Limit.Algorithm())
		if !ok {
			return nil, nil, kit.BadInput("%s.%s: %s: no scripts of this algorithm are linked in (%T is not a limit of a generated package)", p.Name(), pl.Name, pl.Limit.Algorithm(), pl.Limit)
		}
		args, err := s.Args(pl.Limit)
		if err != nil {
			return nil, nil, kit.BadInput("%s.%s: %s", p.Name(), pl.Name, err.Error())
		}
		switch other := pl.Limit.Algorithm().Library; {
		case other == limitspec.Catalogue || other == name:
		case name != limitspec.Catalogue:
			return nil, nil, kit.BadInput("%s: its limits are of the libraries %s and %s: one script decides a policy, over the catalogue and one other library", p.Name(), name, other)
		default:
			name = other
		}
		out = append(out, policyLimit{s, args})
	}
	lib, ok := kit.LookupLibrary(name)
	if !ok {
		return nil, nil, kit.BadInput("%s: the library %s is not linked in", p.Name(), name)
	}
	return lib, out, nil
}
