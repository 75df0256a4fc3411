package kit

import (
	"slices"
	"sync/atomic"
)

// validLimits is the most limits a Valid remembers.
const validLimits = 8

// Valid remembers limits of one type found valid, so that a table runs
// the Validate of each of them once rather than at each call: a
// generated limit is a plain value (integers and durations), and
// whether it is valid depends on that value alone. It remembers the
// first validLimits distinct ones for good (a service decides by a few
// plans), and never more, so that it never allocates again nor makes
// callers write to one place in turn; any other limit is validated at
// each call. The zero Valid remembers none; it is safe for concurrent
// use.
type Valid[L comparable] struct {
	known atomic.Pointer[[]L]
}

// Has reports whether l is remembered as valid.
func (v *Valid[L]) Has(l L) bool {
	known := v.known.Load()
	return known != nil && slices.Contains(*known, l)
}

// Add remembers l, which its Validate found valid, unless validLimits
// limits are remembered already.
func (v *Valid[L]) Add(l L) {
	for {
		old := v.known.Load()
		var known []L
		if old != nil {
			known = *old
		}
		if len(known) >= validLimits || slices.Contains(known, l) {
			return
		}
		next := append(known[:len(known):len(known)], l)
		if v.known.CompareAndSwap(old, &next) {
			return
		}
	}
}
