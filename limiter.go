package limitspec

import (
	"context"
	"math"
	"strconv"
	"time"
)

// Limiter decides requests. The in-process limiter of package goimpl, the
// Redis limiter of package redislimit and package fallback's pair of them
// all implement it, so package httplimit and a caller take any of them.
// A Limiter is not bound to a limit: each Request names the Limit or the
// Policy it is decided by, so that one limiter serves tenants on
// different plans. Implementations are safe for concurrent use.
type Limiter interface {
	// Limit decides req. An error leaves every limit's state as it was
	// (but see ErrUnavailable); it matches ErrBadInput (the request, its
	// limit or its policy is refused), ErrBadState (Redis holds a value
	// the scripts did not write), ErrUnavailable (Redis could not be
	// reached or did not answer within ctx's deadline) or ErrMisconfigured
	// (the limiter cannot work as set up), or it is ctx's own error.
	Limit(ctx context.Context, req Request) (Result, error)
}

// Resetter is implemented by the limiters that can delete a key's state
// (a limit's for req.Key, or every limit's of a policy for req.IDs), so
// that the next request is decided as on a fresh key.
type Resetter interface {
	Reset(ctx context.Context, req Request) error
}

// Checker is implemented by the limiters that can tell, before any
// request, whether they can decide a limit or a policy at all: a Redis
// Cluster cannot decide a policy over several identities atomically, and
// no limiter can decide a limit whose algorithm's package is not linked
// in. Check looks at req.Limit or req.Policy only, and returns an error
// matching ErrBadInput or ErrMisconfigured that says why not; package
// httplimit calls it when it is built.
type Checker interface {
	Check(req Request) error
}

// Holder is implemented by the limiters that keep holds
// (docs/semantics.md, "Holds"): amounts an id reserves on every limit of
// a holding policy (Policy.WithHolds), all or nothing, which count toward
// admission like charges until the holder commits what it spent, releases
// them, or they end by themselves. Hold runs h on req.Policy's holds for
// req.IDs; req.Cost (or, for limits that count a unit, req.Costs) is the
// amount reserved, or the amount spent for a commit (0 for release and
// renew). Its result is a decision's: a
// reserve reports whether it was admitted; every other operation, and an
// admitted reserve, the state after it. Each operation is idempotent by
// h.ID: a reserve retried after a lost reply holds once, a commit or
// release sent again after it took effect gets its first result again,
// and one that finds nothing held, nor ended within a minute, changes
// nothing and returns an error matching ErrNoHold. Other errors are
// Limit's.
type Holder interface {
	Hold(ctx context.Context, req Request, h Hold) (Result, error)
}

// Hold is one operation on the holds of a holding policy.
type Hold struct {
	Op HoldOp
	// ID names the hold: 1 to 128 bytes, unique among the holds live on
	// a key.
	ID string
	// For is how long a reserve holds, or a renew extends the hold from
	// now: 1 ms to a day, in whole ms (rounded up). A holder whose work
	// takes longer renews before the end.
	For time.Duration
}

// HoldOp is an operation on a hold.
type HoldOp uint8

// The operations on a hold.
const (
	// Reserve holds req.Cost (each limit's amount, at least 1) for h.ID
	// on every limit, when every limit admits it as a decision of that
	// cost would be; it charges nothing.
	Reserve HoldOp = iota + 1
	// Commit ends the hold and charges req.Cost, the amount spent, more
	// or less than was held, even past the limit: work already done.
	Commit
	// Release ends the hold, charging nothing.
	Release
	// Renew moves the hold's end to now + h.For.
	Renew
)

// String is the operation's name in the holds script: reserve, commit,
// release or renew.
func (o HoldOp) String() string {
	switch o {
	case Reserve:
		return "reserve"
	case Commit:
		return "commit"
	case Release:
		return "release"
	case Renew:
		return "renew"
	}
	return "HoldOp(" + strconv.Itoa(int(o)) + ")"
}

// Ms is h.For in whole ms, rounded up.
func (h Hold) Ms() int64 {
	ms := h.For.Milliseconds()
	if time.Duration(ms)*time.Millisecond < h.For {
		ms++
	}
	return ms
}

// Request is one request to decide.
type Request struct {
	// Key is what a limit counts (a user, an IP, an API key); a policy
	// ignores it.
	Key string
	// Limit is the limit the request is decided by: one of the typed
	// limits of this package (GCRA, FixedWindow, ...) or of a package
	// cmd/gen wrote from a user's spec. Give a Limit or a Policy.
	Limit Limit
	// Policy decides the request by several limits at once, all or
	// nothing; IDs are then the values of its identities by name.
	Policy *Policy
	IDs    map[string]string
	// Cost is what the request consumes, ≥ 0; left 0, it is 1, as
	// x/time/rate's Allow charges 1: a request that forgets its cost is
	// still counted. A hold's release and renew take no amount, so their
	// Cost stays 0. (docs/semantics.md, "Amounts in Go".)
	Cost int64
	// Costs are a policy's amounts by unit (docs/semantics.md, "Units"):
	// a limit whose PolicyLimit.Unit is in Costs counts that amount
	// (0 included), every other limit Cost; so one request takes 1 slot,
	// 1 request and 4000 tokens. A unit no limit of the policy counts is
	// refused, as are Costs with a Limit (a single limit counts Cost).
	Costs map[string]int64
	// Peek asks for nothing: the request reports the state and consumes
	// nothing on any limit. Its Cost and Costs must be 0 (or absent). A
	// request whose every amount is 0 in Costs consumes nothing too.
	Peek bool
	// Now is the time of the decision; the zero Time leaves it to the
	// limiter (its clock, or the Redis server's when the Redis limiter is
	// told to use it). Tests pass explicit times.
	Now time.Time
	// Force charges the cost even when the request is denied, for work
	// already done (docs/semantics.md, "Force").
	Force bool
	// Inputs are the per-call strings of the algorithms that take them
	// (meta_window's "meta"), by name; missing ones are empty. A policy
	// passes none to its limits.
	Inputs map[string]string
	// ID, when not empty, names the request (1 to 128 bytes, unique per
	// request of a key): a retry with the same ID within a minute of a
	// charged decision (admitted, or forced) gets that decision's Result
	// again, not a second charge, so that a call whose reply was lost
	// can be retried (docs/semantics.md, "Request ids"). A retry must
	// repeat the request's Cost and Force. A limiter remembers the
	// Result under the hash tag of the request's first key (Key, or the
	// value of the policy's first limit's identity).
	ID string
}

// Result is one decision: whether the request is admitted, what the
// caller should do about it (RetryAfter, Delay), and the state of each
// limit behind it, for the RateLimit header fields.
type Result struct {
	// Allowed reports whether the request was admitted: by every limit.
	Allowed bool
	// RetryAfter is 0 when allowed; when denied, the wait until the same
	// request would be allowed if nothing else happened (the binding
	// limit's), or Never when it never will be (its cost exceeds a
	// limit).
	RetryAfter time.Duration
	// Delay is how long to hold an allowed request before acting on it:
	// the longest of its limits' (shapers: leaky_bucket). A denied
	// request has none, unless it was forced: its work was queued too
	// (docs/semantics.md, "Force").
	Delay time.Duration
	// Limits are the limits behind the decision, each with its own
	// result: the one limit of a Request.Limit, or a policy's in order. A
	// decision made without a limiter (a fallback failing open or
	// closed) has none.
	Limits []LimitResult
	// Binding is the index in Limits of the limit that binds the
	// decision: when denied, the one with the longest wait; when allowed,
	// the one with the least remaining relative to its quota
	// (docs/semantics.md, "Policies"). 0 when Limits is empty.
	Binding int
	// Side says who decided.
	Side Side
}

// LimitResult is one limit's part in a decision.
type LimitResult struct {
	// Name names the limit: its name in the policy, or its algorithm's.
	Name string
	// Unit is what the limit counts (its PolicyLimit.Unit), "" for a
	// request's Cost.
	Unit string
	// Limit is the limit decided.
	Limit Limit
	// Allowed reports whether this limit admitted the request. A limit
	// that would admit a request its policy denies reports a peek: it
	// consumed nothing.
	Allowed bool
	// Quota is the largest cost the limit can ever admit at once (the q
	// of a RateLimit-Policy field).
	Quota int64
	// Remaining is the largest cost the limit would admit now, after
	// this request.
	Remaining int64
	// RetryAfter is 0 when this limit admitted; else the wait until it
	// would admit the same request, or Never.
	RetryAfter time.Duration
	// ResetAfter is the wait until Remaining equals Quota again.
	ResetAfter time.Duration
	// Delay is the wait before acting on an admitted (or forced) request
	// (shapers only).
	Delay time.Duration
	// Tier is the tier that binds a tiered limit (bucket_window), from 1;
	// 0 elsewhere.
	Tier int
}

// Window is the limit's window (Limit.QuotaWindow), 0 without a limit.
func (r LimitResult) Window() time.Duration {
	if noLimit(r.Limit) {
		return 0
	}
	return r.Limit.QuotaWindow()
}

// Never is the wait of a request that can never be admitted: its cost is
// above a limit's quota. As a wait it is about 292 years.
const Never = time.Duration(math.MaxInt64)

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
