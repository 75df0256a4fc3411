package limitspec

import "errors"

// The classes of error every limiter's errors match (with errors.Is).
var (
	// ErrBadInput is matched by the errors that refuse a request, a limit
	// or a policy: a parameter outside its domain, an empty key, a
	// negative cost. The message is the same on every target (a script's
	// BADINPUT reply carries it too), and nothing was written.
	ErrBadInput = errors.New("bad input")
	// ErrBadState is matched by the errors of a Redis key holding a value
	// the scripts did not write (BADSTATE, or another Redis type:
	// WRONGTYPE). Nothing was written.
	ErrBadState = errors.New("bad state in Redis")
	// ErrUnavailable is matched by the errors of a Redis that could not
	// be reached, refused to run the call (loading, read-only, cluster
	// down) or did not answer before the context's deadline; the error
	// also matches its cause (context.DeadlineExceeded, a net.Error). A
	// call whose reply was lost may have been applied, once: its error
	// matches ErrOutcomeUnknown too.
	ErrUnavailable = errors.New("redis unavailable")
	// ErrOutcomeUnknown is matched, with ErrUnavailable, by the error of
	// a call that reached Redis (or may have) and whose reply did not
	// come back: the connection broke after the request was written, or
	// the deadline passed while waiting. Redis may have applied it, at
	// most once: the limiters never send a decision twice. An error of
	// ErrUnavailable without it says the call was not applied (the
	// connection was refused, Redis refused the script before running it).
	ErrOutcomeUnknown = errors.New("outcome unknown: the call may have been applied once")
	// ErrMisconfigured is matched by the errors of a limiter that cannot
	// work as it was set up, whatever the request: a Redis holding
	// another version of a Functions library, a client through which the
	// library cannot be loaded on every server; and the refusals of
	// every constructor (redislimit.New, and the New of packages
	// fallback, lease, denials and httplimit; otelmetrics.Observe) of a
	// client, a limiter or an option it cannot work with, each reading
	// "package: misconfigured: what is wrong", naming the field
	// ("lease: misconfigured: Options.Size must be in [1, 2^53−1], got 0"). Package fallback does not
	// decide such a request locally: it is a mistake to fix, not an
	// outage to ride out.
	ErrMisconfigured = errors.New("misconfigured")
	// ErrNoHold is matched by the error of a commit, release or renew of
	// a hold id that holds nothing live on any limit of its policy
	// (docs/semantics.md, "Holds"): it never held, its hold ended by its
	// length, or another operation ended it (a commit or release sent
	// again as the same operation, with the same amounts, gets its first
	// result instead). Nothing was written.
	ErrNoHold = errors.New("no live hold")
)

// InputError is a refused request, limit or policy. It matches
// ErrBadInput; Msg is the text a script replies after BADINPUT.
type InputError struct {
	Msg string
}

func (e *InputError) Error() string { return e.Msg }

// Is reports whether target is ErrBadInput.
func (e *InputError) Is(target error) bool { return target == ErrBadInput }
