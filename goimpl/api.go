// Package goimpl holds the native Go limiters generated from
// spec/algorithms.yaml, one per algorithm, deciding exactly as the Lua
// scripts in package lua do on Redis.
//
// A Limiter keeps its state in process memory, sharded by key so that
// goroutines deciding for different keys rarely contend. Every key's state
// carries the same TTL the Lua script would give it in Redis, measured on the
// caller's clock (the nowMs passed in); once that TTL has run out the state
// reads as absent, and its memory is reclaimed a few keys at a time: no call
// does work that grows with the number of keys, and a shard's memory shrinks
// with its live keys.
//
// A call reclaims only keys expired by its own nowMs. Each limiter also has
// a sweeper, a goroutine started with its first key, which reclaims the
// rest, those of an idle limiter too. Having no nowMs of its own, it takes
// the nowMs of the latest call and adds the time elapsed since, on the
// process's monotonic clock; it never reclaims a key whose expiry is later
// than that. This is exact for callers whose nowMs follows the wall clock
// (time.Now, or Now). A caller whose nowMs runs slower than the wall
// clock, such as a test that holds the time still or replays old times at
// leisure, could find a key reclaimed while it is still live on its own
// clock: it should stop the sweeper before its first call (see
// SweepStopper). A sweeper ends by itself once its limiter has been
// garbage collected. Callers that share a limiter should share a clock: a
// call whose nowMs lags behind another's may find a key reclaimed that is
// still live at its own nowMs.
//
// Memory stays bounded by the keys active within about one TTL. A gcra
// limiter holds about 125 bytes per key; when four million keys have
// expired, the sweeper reclaims them in a few seconds while decisions go
// on (go test -run '^$' -bench ExpiredKeys -benchtime 8000000x ./goimpl),
// in bursts of a tenth of a millisecond that take at most a tenth of a
// CPU.
//
// Time is an argument: nowMs is milliseconds since the Unix epoch, as the
// caller's clock reads it, or Now for the process clock. A call whose nowMs
// is earlier than the latest time the key has recorded, by at most
// MAX_SKEW_MS (60 s), is decided at that latest time; further behind, the
// key's state is not trusted and the call is decided as on a fresh key, as
// the scripts do (docs/semantics.md, "State and time").
//
// Use New to pick an algorithm by name, or the typed constructors
// (NewGCRA, NewTokenBucket, ...) to get compile-time parameter names.
package goimpl

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
)

// Limiter decides requests for many keys. Implementations are safe for
// concurrent use.
type Limiter interface {
	// Allow decides a request of the given cost for key at time nowMs.
	// Cost 0 is a peek: it reports the state and consumes nothing.
	Allow(key string, nowMs, cost int64) (Result, error)
}

// InputLimiter is implemented by the limiters that take per-call strings
// besides the cost, such as meta_window's meta; their Allow passes empty
// strings.
type InputLimiter interface {
	Limiter
	// Inputs names the per-call string inputs, in order.
	Inputs() []string
	// AllowInputs decides as Allow, with the string inputs in the order of
	// Inputs; missing ones are empty.
	AllowInputs(key string, nowMs, cost int64, inputs ...string) (Result, error)
	// ForceInputs is Force with the string inputs, as AllowInputs.
	ForceInputs(key string, nowMs, cost int64, inputs ...string) (Result, error)
}

// Forcer is implemented by every limiter of this package and by Policy
// (with identities for the key): Force decides as Allow and reports that
// decision, but consumes the cost even when it denies, for a request that
// has been served already. The state may go past the limit, by at most
// one limit; later requests wait until it has been paid back. The other
// fields describe the state after the charge (docs/semantics.md, "Force").
type Forcer interface {
	Force(key string, nowMs, cost int64) (Result, error)
}

// Resetter is implemented by every limiter of this package and by Policy:
// Reset deletes a key's state (a Policy's: every limit's, for the given
// identities), as the reset scripts do, so that the next request is
// decided as on a fresh key. It refuses a key the scripts refuse.
type Resetter interface {
	Reset(key string) error
}

// Windowed is implemented by every limiter of this package: WindowMs is
// the limiter's window in ms, the time over which its limit (Result.Limit,
// the largest cost admitted at once) is counted, that is the time a fully
// used limit takes to be whole again: the w, in seconds, of an HTTP
// RateLimit-Policy "name";q=<limit>;w=<window>. Each algorithm states it
// in spec/algorithms.yaml (window) over its parameters: window_ms for the
// windows and the log, the time to refill or drain a full bucket for
// token_bucket, gcra and leaky_bucket. It is 0 when the algorithm declares
// no single window: bucket_window with more than one tier, whose limit is
// the binding tier's.
type Windowed interface {
	WindowMs() int64
}

// Viewer is implemented by the limiters with read-only views of a key's
// state, such as meta_window's entries.
type Viewer interface {
	// View runs the named view for key at nowMs and returns its entries,
	// each a Record; it changes nothing.
	View(name, key string, nowMs int64) ([]Record, error)
}

// Record is one entry a view returns: its fields in order, each an int64
// or a string.
type Record []any

// Now is not a time: passed as nowMs, it makes a limiter decide at the
// process clock (time.Now, in ms), as an empty now_ms makes a script
// decide at the Redis server's clock. Explicit times keep tests exact.
const Now int64 = math.MinInt64

// Never is the wait RetryAfter reports for a request that can never be
// admitted (RetryAfterMs -1 on a denial: a cost above the limit); as a
// wait it is about 292 years.
const Never = time.Duration(math.MaxInt64)

// RetryAfter is RetryAfterMs as a Duration: 0 when the request was
// allowed, Never when it never will be.
func (r Result) RetryAfter() time.Duration {
	switch {
	case r.Allowed:
		return 0
	case r.RetryAfterMs < 0:
		return Never
	}
	return millis(r.RetryAfterMs)
}

// ResetAfter is ResetAfterMs as a Duration: the wait until Remaining
// equals Limit again.
func (r Result) ResetAfter() time.Duration {
	return millis(r.ResetAfterMs)
}

// Delay is DelayMs as a Duration: how long to hold an allowed request
// before acting on it (shapers only).
func (r Result) Delay() time.Duration { return millis(r.DelayMs) }

// millis converts ms to a Duration; waits longer than a Duration holds
// (about 292 years) are Never.
func millis(ms int64) time.Duration {
	if ms > int64(Never/time.Millisecond) {
		return Never
	}
	return time.Duration(ms) * time.Millisecond
}

// processNow is the process clock in ms since the epoch.
func processNow() int64 { return time.Now().UnixMilli() }

// ErrBadInput is matched (with errors.Is) by every error that refuses a
// parameter, a key, a time or a cost.
var ErrBadInput = errors.New("bad input")

// InputError describes refused input. Its message is the same text the Lua
// script returns after the BADINPUT error code.
type InputError struct {
	Msg string
}

func (e *InputError) Error() string { return e.Msg }

// Is reports whether target is ErrBadInput.
func (e *InputError) Is(target error) bool { return target == ErrBadInput }

func badInput(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// constructors maps each algorithm name to its generic constructor; the
// generated files fill it in.
var constructors = map[string]func(params map[string]int64) (Limiter, error){}

// New returns the limiter for the named algorithm with the given parameters.
// It refuses an unknown algorithm, a missing or unknown parameter and a
// parameter outside its declared domain with an error matching ErrBadInput.
func New(algorithm string, params map[string]int64) (Limiter, error) {
	mk, ok := constructors[algorithm]
	if !ok {
		return nil, badInput("unknown algorithm %q (known: %v)", algorithm, Algorithms())
	}
	return mk(params)
}

// Algorithms lists the algorithm names New accepts, sorted.
func Algorithms() []string {
	names := make([]string, 0, len(constructors))
	for n := range constructors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
