package limitspec

import (
	"context"
	"errors"
	"time"

	"github.com/limitspec/limitspec/goimpl"
)

// Limiter decides requests. The Redis limiters of package redisimpl, the
// in-process limiters of package goimpl (through Local and LocalPolicy)
// and package fallback's wrapper all implement it, so package httplimit
// and a caller take any of them. Implementations are safe for concurrent
// use.
type Limiter interface {
	// Limit decides req. An error leaves every limit's state as it was;
	// it matches ErrBadInput (the request or a parameter is refused),
	// ErrBadState (Redis holds a value the scripts did not write) or
	// ErrUnavailable (Redis could not be reached or did not answer
	// within ctx's deadline).
	Limit(ctx context.Context, req Request) (Result, error)
}

// Request is one request to decide.
type Request struct {
	// Key is what an algorithm's limiter counts (a user, an IP, an API
	// key); a policy's limiter ignores it.
	Key string
	// IDs are a policy's identity values by name (ip_user: "ip" and
	// "user"); an algorithm's limiter ignores them.
	IDs map[string]string
	// Cost is what the request consumes, ≥ 0. 0 is a peek: it reports
	// the state and consumes nothing.
	Cost int64
	// Now is the time of the decision; the zero Time leaves it to the
	// limiter (the caller's clock, or the Redis server's when the Redis
	// limiter is told to use it). Tests pass explicit times.
	Now time.Time
	// Force charges the cost even when the request is denied, for work
	// already done (docs/semantics.md, "Force").
	Force bool
	// Inputs are the per-call strings of the algorithms that take them
	// (meta_window's "meta"), by name; missing ones are empty.
	Inputs map[string]string
}

// Result is one decision. Its embedded goimpl.Result holds the reply of
// the spec (for a policy, its binding limit's, as the policy's script
// replies), with RetryAfter, ResetAfter and Delay as time.Duration.
type Result struct {
	goimpl.Result
	// Index is a policy's binding limit, from 1; 0 for an algorithm.
	Index int
	// Limits are the quotas behind the decision, each with its own
	// result: a policy's limits in order, or the algorithm's one. A
	// decision without a limiter behind it (fail open, fail closed) has
	// none.
	Limits []Quota
	// Side says who decided.
	Side Side
}

// Quota is one limit behind a decision, as the RateLimit header fields
// describe it.
type Quota struct {
	// Name is the policy's limit name, or the algorithm's name.
	Name string
	// Window is the time over which Limit is counted: the time a fully
	// used limit takes to be whole again; 0 when the algorithm has no
	// single window (bucket_window's tiers).
	Window time.Duration
	goimpl.Result
}

// Side says who decided a request.
type Side uint8

const (
	// Primary: the limiter itself (Redis, for a Redis limiter).
	Primary Side = iota
	// Fallback: the local limiter of package fallback, Redis being
	// unavailable.
	Fallback
	// FailOpen: admitted without a decision, Redis being unavailable.
	FailOpen
	// FailClosed: denied without a decision, Redis being unavailable.
	FailClosed
)

var sideNames = [...]string{"primary", "fallback", "fail-open", "fail-closed"}

// String is the side's name: primary, fallback, fail-open or fail-closed.
func (s Side) String() string {
	if int(s) < len(sideNames) {
		return sideNames[s]
	}
	return "unknown"
}

// ErrBadInput is matched by every error that refuses a request or a
// parameter; it is goimpl.ErrBadInput, and a Redis limiter refuses the
// same input with the same message as goimpl.
var ErrBadInput = goimpl.ErrBadInput

// ErrBadState is matched by the errors of a Redis key holding a value the
// scripts did not write (BADSTATE, or another Redis type: WRONGTYPE).
var ErrBadState = errors.New("bad state in Redis")

// ErrUnavailable is matched by the errors of a Redis that could not be
// reached, refused to run the call (loading, read-only, cluster down) or
// did not answer before the context's deadline; the error also matches
// its cause (context.DeadlineExceeded, a net.Error, ...).
var ErrUnavailable = errors.New("redis unavailable")
