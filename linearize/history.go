package linearize

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/limitspec/limitspec"
)

// The operations of a holding policy, as the holds script names them.
const (
	Decide  = "decide"
	Reserve = "reserve"
	Commit  = "commit"
	Release = "release"
	Renew   = "renew"
)

// Class is the class of a call's outcome.
type Class string

// The classes of outcome.
const (
	// OK is a result: no error.
	OK Class = ""
	// NoHold is an error matching limitspec.ErrNoHold.
	NoHold Class = "NOHOLD"
	// BadInput is an error matching limitspec.ErrBadInput.
	BadInput Class = "BADINPUT"
	// Unknown is an error matching limitspec.ErrOutcomeUnknown, or a
	// context's deadline: the call may have been applied, once per
	// attempt.
	Unknown Class = "UNKNOWN"
	// Unavailable is an error matching limitspec.ErrUnavailable and not
	// ErrOutcomeUnknown: the limiter says the call was not applied.
	Unavailable Class = "UNAVAILABLE"
	// Other is any other error (ErrBadState, a Redis error of no class):
	// no model explains it.
	Other Class = "ERROR"
)

// Input is one call: its operation, the identity's value, the hold's id
// (none for a decision), the cost (the amount reserved, spent, or the
// decision's cost), the hold's length in ms (reserve and renew), and the
// call's explicit Now in ms since the epoch.
type Input struct {
	Op     string
	Value  string
	ID     string
	Cost   int64
	HoldMs int64
	Now    int64
}

// key identifies the input within its partition (its Value's), for
// memoising its steps.
func (in Input) key() string {
	return fmt.Sprintf("%s/%s/%d/%d/%d", in.Op, in.ID, in.Cost, in.HoldMs, in.Now)
}

// String is the input as the visualization shows it.
func (in Input) String() string {
	s := fmt.Sprintf("%s %s", in.Op, in.Value)
	if in.ID != "" {
		s += " " + in.ID
	}
	s += fmt.Sprintf(" ×%d", in.Cost)
	if in.HoldMs != 0 {
		s += fmt.Sprintf(" for %dms", in.HoldMs)
	}
	return s + fmt.Sprintf(" @%d", in.Now)
}

// LimitOut is one limit's part of a result, its waits in ms as a
// limitspec.LimitResult gives them: RetryAfterMs is 0 when the limit
// admitted, -1 when it never will (limitspec.Never).
type LimitOut struct {
	Allowed      bool
	Remaining    int64
	RetryAfterMs int64
	ResetAfterMs int64
}

// Output is a call's outcome: its class and, for OK, the result.
type Output struct {
	Class   Class
	Allowed bool
	// Binding is the index in Limits of the binding limit, from 0.
	Binding int
	Limits  []LimitOut
	// Err is the error's text (not compared).
	Err string
}

// known reports whether o is an outcome a model must explain: a result,
// NOHOLD or BADINPUT (or an error of no class, which none explains).
func (o Output) known() bool { return o.Class != Unknown && o.Class != Unavailable }

// Equal reports whether o and p are the same outcome: the class and, for
// a result, every compared field. Err is not compared.
func (o Output) Equal(p Output) bool {
	if o.Class != p.Class {
		return false
	}
	if o.Class != OK {
		return true
	}
	return o.Allowed == p.Allowed && o.Binding == p.Binding && slices.Equal(o.Limits, p.Limits)
}

// String is the outcome as the visualization shows it: its class, or
// allowed or denied and each limit's [allowed remaining retry_after
// reset_after], the binding one marked with *.
func (o Output) String() string {
	switch o.Class {
	case OK:
	case Other:
		return string(o.Class) + ": " + o.Err
	default:
		return string(o.Class)
	}
	var b strings.Builder
	if o.Allowed {
		b.WriteString("allowed")
	} else {
		b.WriteString("denied")
	}
	for i, l := range o.Limits {
		mark := " "
		if i == o.Binding {
			mark = " *"
		}
		fmt.Fprintf(&b, "%s[%v %d %d %d]", mark, l.Allowed, l.Remaining, l.RetryAfterMs, l.ResetAfterMs)
	}
	return b.String()
}

// Outcome is the Output of a limiter's call that returned res and err.
func Outcome(res limitspec.Result, err error) Output {
	if err != nil {
		return Output{Class: classOf(err), Err: err.Error()}
	}
	out := Output{Allowed: res.Allowed, Binding: res.Binding, Limits: make([]LimitOut, len(res.Limits))}
	for i, l := range res.Limits {
		out.Limits[i] = LimitOut{Allowed: l.Allowed, Remaining: l.Remaining, RetryAfterMs: ms(l.RetryAfter), ResetAfterMs: ms(l.ResetAfter)}
	}
	return out
}

// classOf is the class of a limiter's error.
func classOf(err error) Class {
	switch {
	case errors.Is(err, limitspec.ErrNoHold):
		return NoHold
	case errors.Is(err, limitspec.ErrBadInput):
		return BadInput
	case errors.Is(err, limitspec.ErrOutcomeUnknown):
		return Unknown
	case errors.Is(err, limitspec.ErrUnavailable):
		return Unavailable
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return Unknown
	}
	return Other
}

// timeout reports whether err is a timeout: a context's deadline (or
// cancellation), or a network timeout.
func timeout(err error) bool {
	var nerr net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.As(err, &nerr) && nerr.Timeout()
}

// ms is a wait in whole ms, -1 for limitspec.Never.
func ms(d time.Duration) int64 {
	if d == limitspec.Never {
		return -1
	}
	return d.Milliseconds()
}
