package linearize

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// Call is one recorded call: the client (goroutine) that made it, its
// input and outcome, when it was invoked and when it returned, in ns on
// the recorder's monotonic clock, and whether its error was a timeout.
type Call struct {
	Client int
	Input  Input
	Output Output
	Call   int64
	Return int64
	// TimedOut says the call failed for a timeout (its context's
	// deadline, a network timeout): its last attempt may run after it
	// returned, on a server that had received it.
	TimedOut bool
}

// Attempts tells how many times the server may have run each call, by
// the call's Now in ms (unique per call of a Recorder): the attempts sent
// that were not answered with a refusal that ran nothing (NOSCRIPT,
// TRYAGAIN, ...), and how many of those timed out. A limiter sends an
// operation on a hold again after a lost reply, so that a call may have
// run more than once before the attempt whose reply it returned. Sends
// implements it for go-redis.
type Attempts interface {
	Ran(nowMs int64) (ran, timedOut int)
}

// A lost attempt is an attempt of a call that may have run without its
// reply reaching the caller: it may have taken effect, at most once,
// after the call was invoked; before the call returned, unless late.
type lost struct {
	call    int // index of the call in the calls given to Operations
	attempt int // from 1
	late    bool
}

// String names the call and the attempt.
func (l lost) String() string {
	if l.late {
		return fmt.Sprintf("call %d, lost attempt %d, maybe run late", l.call, l.attempt)
	}
	return fmt.Sprintf("call %d, lost attempt %d", l.call, l.attempt)
}

// Operations is the porcupine history of calls. A call with a known
// outcome (a result, NOHOLD, BADINPUT, or an error of no class) is an
// operation with that output over [Call, Return]. Every attempt of a call
// that may have run without its reply being the one returned is an
// operation of its own (a lost attempt), with the output Unknown: the
// model lets it take effect or not (see the package doc). How many:
// attempts.Ran less the attempt returned, for a known outcome; for
// Unknown, at least one; for Unavailable, what attempts says (none, when
// the limiter's word holds).
//
// A lost attempt is invoked with its call. One whose reply was lost to a
// broken connection ran, if at all, before the break was seen, so before
// its call returned: its operation returns with the call. One that timed
// out may run at any later time, on a server that received it and was
// slow or frozen: its operation returns after every call. These are the
// timeouts Attempts counts, and the call's last attempt when the call
// timed out. A nil attempts counts one attempt per call, and takes every
// lost attempt to have timed out.
//
// Each operation's ClientId is its client's; each lost attempt has one of
// its own after them, so that the visualization shows it on a line of
// its own.
func Operations(calls []Call, attempts Attempts) []porcupine.Operation {
	var end int64
	clients := 0
	for _, c := range calls {
		end = max(end, c.Return+1)
		clients = max(clients, c.Client+1)
	}
	var ops []porcupine.Operation
	phantoms := 0
	for i, c := range calls {
		if c.Output.known() {
			ops = append(ops, porcupine.Operation{ClientId: c.Client, Input: c.Input, Call: c.Call, Output: c.Output, Return: c.Return, Metadata: fmt.Sprintf("call %d", i)})
		}
		n, late := lostAttempts(c, attempts)
		for a := range n {
			l := lost{call: i, attempt: a + 1, late: a >= n-late}
			ret := c.Return
			if l.late {
				ret = end
			}
			ops = append(ops, porcupine.Operation{ClientId: clients + phantoms, Input: c.Input, Call: c.Call,
				Output: Output{Class: Unknown, Err: c.Output.Err}, Return: ret, Metadata: l})
			phantoms++
		}
	}
	return ops
}

// lostAttempts is how many attempts of c may have run without their
// reply being c's outcome, and how many of those may have run after c
// returned (see Operations).
func lostAttempts(c Call, attempts Attempts) (n, late int) {
	ran, timedOut := 1, 1
	if attempts != nil {
		ran, timedOut = attempts.Ran(c.Input.Now)
	}
	switch c.Output.Class {
	case Unknown:
		n = max(1, ran)
	case Unavailable:
		n = ran
	default:
		n = max(0, ran-1)
	}
	late = min(n, timedOut)
	if c.TimedOut && n > 0 {
		late = max(late, 1)
	}
	return n, late
}

// Stats counts the calls of a history by outcome.
type Stats struct {
	// Calls is the number of calls; Operations, of porcupine operations.
	Calls, Operations int
	// ByClass counts the calls by class; Allowed, the results admitted.
	ByClass map[Class]int
	Allowed int
	// Lost counts the lost attempts (operations of unknown outcome), Late
	// those of them that may have run after their call returned.
	Lost, Late int
}

// Count is the Stats of calls and their operations.
func Count(calls []Call, ops []porcupine.Operation) Stats {
	s := Stats{Calls: len(calls), Operations: len(ops), ByClass: map[Class]int{}}
	for _, c := range calls {
		s.ByClass[c.Output.Class]++
		if c.Output.Class == OK && c.Output.Allowed {
			s.Allowed++
		}
	}
	for _, op := range ops {
		if l, ok := op.Metadata.(lost); ok {
			s.Lost++
			if l.late {
				s.Late++
			}
		}
	}
	return s
}
