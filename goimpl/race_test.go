//go:build race

package goimpl

// raceEnabled reports whether the race detector is on: it drops some of
// the calls a sync.Pool is given back, so that a pooled call allocates.
const raceEnabled = true
