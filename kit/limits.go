package kit

import (
	"github.com/limitspec/limitspec"
)

// LimitBuilder builds an algorithm's typed limit from its parameters,
// named and measured as its spec names and measures them (ms for
// durations), refusing what the spec refuses: what package policyfile's
// NewLimit returns.
type LimitBuilder func(params map[string]int64) (limitspec.Limit, error)

var builders = map[limitspec.Algorithm]LimitBuilder{}

// RegisterLimit registers the builder of an algorithm's typed limit. The
// code cmd/gen writes calls it when its package is initialized (package
// policyfile holds the catalogue's); a second registration of one
// algorithm (two packages compiled into libraries of one name) panics
// then, at start-up.
func RegisterLimit(a limitspec.Algorithm, build LimitBuilder) {
	register(builders, a, build, "algorithm "+a.String()+" (two packages compiled into the library "+a.Library+")")
}

// LookupLimit returns the builder of an algorithm's typed limit.
func LookupLimit(a limitspec.Algorithm) (LimitBuilder, bool) { return lookup(builders, a) }

// LimitAlgorithms lists the algorithms whose builders are registered,
// sorted by String.
func LimitAlgorithms() []limitspec.Algorithm {
	mu.RLock()
	defer mu.RUnlock()
	return sortedKeys(builders)
}
