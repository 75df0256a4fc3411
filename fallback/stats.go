package fallback

import "github.com/limitspec/limitspec"

// Stats are a Limiter's counters since New, for metrics: every count
// only grows (a Prometheus counter), State is a gauge. Each field is read
// atomically, but not all at one instant: a call may be counted in one
// field and not yet in another.
type Stats struct {
	// Primary, Fallback, FailOpen and FailClosed count the decisions
	// returned, by their Side.
	Primary, Fallback, FailOpen, FailClosed uint64
	// PrimaryErrors counts the primary's failures: its errors other than
	// bad input and misconfiguration, on calls whose ctx was not done.
	PrimaryErrors uint64
	// PrimarySlow and PrimaryDown divide PrimaryErrors: slow, the
	// failures whose call may have been applied (no reply within Timeout,
	// or the connection broke after the request was sent:
	// limitspec.ErrOutcomeUnknown); down, the others, not applied (the
	// primary unreachable or refusing, or a call the primary never sent:
	// one whose deadline came while it waited for redislimit's next
	// batch). Each only grows.
	PrimarySlow, PrimaryDown uint64
	// PrimaryLate counts the failures that came while this process
	// itself ran late (it saw the failure more than half the Timeout past
	// the call's deadline: a busy host, not a slow primary), which the
	// breaker does not count, but for Failures of them in a row. Each is
	// also in PrimarySlow or PrimaryDown.
	PrimaryLate uint64
	// Errors counts the calls of Limit that returned an error.
	Errors uint64
	// Opens counts the times the breaker opened: after Failures
	// consecutive failures, or after a failed probe.
	Opens uint64
	// State is the breaker's state.
	State State
	// SettlesOwed is how many commits and releases of holds the primary
	// granted are kept to send it again, having failed for want of it,
	// with the releases owed for reserves whose outcome was unknown and
	// the decisions with request ids whose outcome was unknown, admitted
	// locally (a gauge); SettlesReplayed counts those it then answered, SettlesLost
	// those dropped (past the 10,000 kept, or refused as bad input),
	// whose holds end by themselves.
	SettlesOwed                  int64
	SettlesReplayed, SettlesLost uint64
}

// Decisions is the count of decisions made by side.
func (s Stats) Decisions(side limitspec.Side) uint64 {
	switch side {
	case limitspec.Primary:
		return s.Primary
	case limitspec.Fallback:
		return s.Fallback
	case limitspec.FailOpen:
		return s.FailOpen
	case limitspec.FailClosed:
		return s.FailClosed
	}
	return 0
}

// Stats returns the counters. It takes no lock: call it as often as a
// metrics exporter needs.
func (l *Limiter) Stats() Stats {
	slow, down := l.c.primarySlow.Load(), l.c.primaryDown.Load()
	return Stats{
		Primary:         l.c.decisions[limitspec.Primary].Load(),
		Fallback:        l.c.decisions[limitspec.Fallback].Load(),
		FailOpen:        l.c.decisions[limitspec.FailOpen].Load(),
		FailClosed:      l.c.decisions[limitspec.FailClosed].Load(),
		PrimarySlow:     slow,
		PrimaryDown:     down,
		PrimaryLate:     l.c.primaryLate.Load(),
		PrimaryErrors:   slow + down,
		Errors:          l.c.errors.Load(),
		Opens:           l.br.opens.Load(),
		State:           l.br.state(),
		SettlesOwed:     l.owed.n.Load(),
		SettlesReplayed: l.owed.replayed.Load(),
		SettlesLost:     l.owed.lost.Load(),
	}
}
