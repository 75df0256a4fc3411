package limitspec

import (
	"strings"
	"time"
)

// Limit is the parameters of one algorithm, the thing a request is
// decided by: GCRA{Burst: 20, Rate: 10, Period: time.Second}. This
// package holds one typed limit per algorithm of its spec (GCRA,
// FixedWindow, SlidingLog, ...), generated from spec/algorithms.yaml;
// cmd/gen writes the same for a user's own spec. A limit is a plain
// value: build one per plan, per route or per call.
type Limit interface {
	// Algorithm names the limit's algorithm.
	Algorithm() Algorithm
	// Validate reports, as an error matching ErrBadInput, a parameter
	// outside its domain (with the message the scripts give) or
	// parameters that cannot be decided exactly together; nil when the
	// limit can be decided.
	Validate() error
	// QuotaWindow is the time over which the limit's quota is counted,
	// the time a fully used quota takes to be whole again: the w of an
	// HTTP RateLimit-Policy field (docs/semantics.md, "Windows"). 0 when
	// the algorithm has no single window, or the limit is not valid. (It
	// is not named Window: that is the field of the windowed limits.)
	QuotaWindow() time.Duration
}

// StateNamer is implemented by the typed limits of this package and of
// every package cmd/gen writes. State names the state a limit keeps for
// a key: its algorithm's keys after the hash tag, with the parameters the
// state is measured in (a window, a rate) and not its amounts
// (FixedWindow{Limit: 100, Window: time.Minute}.State() is "fw:60000"),
// so that two limits share a state exactly when their States are equal;
// "" for a limit that is not valid. A policy's limit keeps it under its
// name (docs/semantics.md, "Policies"): limits of one name and State in
// several policies, the plans of a service, share one state.
type StateNamer interface {
	Limit
	State() string
}

// Shaper is implemented by the limits whose decisions may tell an
// admitted request to wait (Result.Delay): the shapers, such as
// leaky_bucket, which queue the work instead of refusing it. cmd/gen
// writes Shapes for each algorithm of a spec whose logic replies a
// delay_ms other than 0. A request on a shaper is decided alone: its
// wait depends on the work queued just before it (package lease sends
// it to the primary as it is).
type Shaper interface {
	Limit
	// Shapes is true.
	Shapes() bool
}

// Shapes reports whether l is a Shaper.
func Shapes(l Limit) bool {
	s, ok := l.(Shaper)
	return ok && s.Shapes()
}

// InFlightLimit is implemented by the limits whose decisions write no
// state, such as concurrency: only the holds of a holding policy
// (Policy.WithHolds) use their quota, which counts what is held at once,
// the requests in flight. Decided alone, or in a policy without holds,
// such a limit would admit every request: every limiter refuses it, as
// bad input, and so do the scripts. cmd/gen writes
// InFlight for each algorithm of a spec whose logic stores nothing;
// package httplimit sends such a quota with qu="concurrent-requests".
type InFlightLimit interface {
	Limit
	// InFlight is true.
	InFlight() bool
}

// InFlight reports whether l is an InFlightLimit.
func InFlight(l Limit) bool {
	f, ok := l.(InFlightLimit)
	return ok && f.InFlight()
}

// Algorithm names an algorithm: the library it was compiled into (the
// spec: Catalogue for this package's, the package name for a user's) and
// its name there.
type Algorithm struct {
	Library string
	Name    string
}

// Catalogue is the library of this package's own algorithms
// (spec/algorithms.yaml), and the name of its Redis Functions library.
const Catalogue = "limitspec"

// String is the algorithm's name as policyfile.NewLimit takes it: its name for the
// catalogue's ("gcra"), library.name for another's ("quotas.daily").
func (a Algorithm) String() string {
	if a.Library == Catalogue {
		return a.Name
	}
	return a.Library + "." + a.Name
}

// ParseAlgorithm is the algorithm String writes s of: "library.name", or
// the catalogue's "name".
func ParseAlgorithm(s string) Algorithm {
	if lib, name, ok := strings.Cut(s, "."); ok {
		return Algorithm{Library: lib, Name: name}
	}
	return Algorithm{Library: Catalogue, Name: s}
}
