package goimpl

// SweepStopper is implemented by every limiter of this package (the
// generated code gives each its StopSweeper).
//
// A limiter reclaims its expired keys partly in a background goroutine,
// its sweeper, started with its first key; the sweeper reckons the
// caller's time as the package documentation describes. StopSweeper
// stops it and returns once it has stopped; the limiter goes on deciding
// as before and reclaims expired keys by the nowMs of its calls alone. A
// sweeper also stops by itself once its limiter has been garbage
// collected, so a limiter needs no closing.
type SweepStopper interface {
	StopSweeper()
}
