package linearize

import (
	"fmt"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/policyfile"
)

// Spec is the holding policy a history is checked against, as both sides
// take it: the limiter is given Policy, the oracle the same limits by
// algorithm and parameters. Every limit counts the one identity, so that
// a request names a single value and the keys of a value lie in one
// Redis Cluster slot.
type Spec struct {
	// Name is the policy's name.
	Name string
	// Identity names the identity every limit counts.
	Identity string
	// Limits are the policy's limits, in order.
	Limits []LimitSpec
}

// LimitSpec is one limit of a Spec: its name in the policy, its
// algorithm's name (as policyfile.NewLimit and the oracle take it) and
// its parameters, named and measured as the spec names them (ms for
// durations).
type LimitSpec struct {
	Name      string
	Algorithm string
	Params    map[string]int64
}

// Policy is the holding policy of s (limitspec.Policy.WithHolds), for
// the limiter under test.
func (s Spec) Policy() (*limitspec.Policy, error) {
	limits := make([]limitspec.PolicyLimit, 0, len(s.Limits))
	for _, l := range s.Limits {
		lim, err := policyfile.NewLimit(l.Algorithm, l.Params)
		if err != nil {
			return nil, fmt.Errorf("linearize: limit %s: %w", l.Name, err)
		}
		limits = append(limits, limitspec.PolicyLimit{Name: l.Name, Limit: lim, Identity: s.Identity})
	}
	p, err := limitspec.NewPolicy(s.Name, limits...)
	if err != nil {
		return nil, fmt.Errorf("linearize: %w", err)
	}
	return p.WithHolds(), nil
}
