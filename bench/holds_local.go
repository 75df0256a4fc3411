package main

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
)

// holdIDs are the hold ids the in-process holds rows take in turn
// (nextHoldID), made once, each of 36 bytes as member's: an id is live
// only from a request's reserve to its commit or release, so that the
// few requests in flight at once never share one.
var holdIDs = func() []string {
	out := make([]string, 1<<12)
	for i := range out {
		out[i] = member()
	}
	return out
}()

var holdNext atomic.Uint64

// nextHoldID is the next of holdIDs.
func nextHoldID() string { return holdIDs[holdNext.Add(1)%uint64(len(holdIDs))] }

// requestIDs are the IDs of each key's requests, {holdIdentity: key},
// made by holdsInProcess for every key before any is measured (a caller
// that makes them at each request allocates a map more), and only read
// after.
var requestIDs map[string]map[string]string

// idsOf is key's IDs (requestIDs).
func idsOf(key string) map[string]string {
	ids, ok := requestIDs[key]
	if !ok {
		panic("no IDs made for key " + key)
	}
	return ids
}

// makeRequestIDs makes requestIDs for keys.
func makeRequestIDs(keys []string) {
	requestIDs = make(map[string]map[string]string, len(keys))
	for _, k := range keys {
		requestIDs[k] = map[string]string{holdIdentity: k}
	}
}

// limiterFailure is the first error an in-process limiter of the holds
// figure met (a call refused, live holds not as made), which benchLocal
// reports as the figure's failure.
var limiterFailure atomic.Pointer[error]

// fail notes err (the first error noted is kept) and returns false: the
// request is not admitted.
func fail(err error) bool {
	limiterFailure.CompareAndSwap(nil, &err)
	return false
}

// takeFailure returns the error noted by fail, if any, and forgets it.
func takeFailure() error {
	if p := limiterFailure.Swap(nil); p != nil {
		return *p
	}
	return nil
}

// newMemory is a goimpl.Limiter as New makes it (its sweeper on).
func newMemory() *goimpl.Limiter {
	l, err := goimpl.New(goimpl.Options{})
	if err != nil {
		panic(err)
	}
	return l
}

// decideFunc is a policy's decision in process: goimpl.Limiter.Limit,
// or goimpl.BoundPolicy.Limit.
type decideFunc func(ctx context.Context, req limitspec.Request) (limitspec.Result, error)

// holdFunc is an operation on a hold in process: goimpl.Limiter.Hold,
// or goimpl.BoundPolicy.Hold.
type holdFunc func(ctx context.Context, req limitspec.Request, h limitspec.Hold) (limitspec.Result, error)

// How the in-process rows call goimpl: through the Limiter, the policy
// given with each call, or through p bound to it once
// (Limiter.BindPolicy).
const (
	byLimiter = false
	byBound   = true
)

// goimplOf is a new goimpl.Limiter (newMemory) and p's Limit and Hold
// through it, or with bound, through p bound to it once.
func goimplOf(p *limitspec.Policy, bound bool) (*goimpl.Limiter, decideFunc, holdFunc) {
	l := newMemory()
	if !bound {
		return l, l.Limit, l.Hold
	}
	b, err := l.BindPolicy(p)
	if err != nil {
		panic(err) // the figure's policies are valid
	}
	return l, b.Limit, b.Hold
}

// memoryPolicy decides each request by policy p, a plain policy or a
// holding one (a decision counting its holds), at cost 1, with a
// goimpl.Limiter's Limit, or with bound its BoundPolicy's.
func memoryPolicy(p *limitspec.Policy, bound bool) func() (func(string) bool, func()) {
	return func() (func(string) bool, func()) {
		l, decide, _ := goimplOf(p, bound)
		ctx := context.Background()
		return func(key string) bool {
			res, err := decide(ctx, limitspec.Request{Policy: p, IDs: idsOf(key), Cost: 1})
			if err != nil {
				return fail(fmt.Errorf("%s: %w", key, err))
			}
			return res.Allowed
		}, func() { l.Close() }
	}
}

// memoryHoldPair runs holdPair's pairs on the holding policy p with a
// goimpl.Limiter's Hold, or with bound its BoundPolicy's.
func memoryHoldPair(p *limitspec.Policy, bound bool, then limitspec.HoldOp, spent int64) func() (func(string) bool, func()) {
	return func() (func(string) bool, func()) {
		l, _, hold := goimplOf(p, bound)
		return holdPair(hold, p, then, spent), func() { l.Close() }
	}
}

// holdPair runs two calls of hold for each request on the holding
// policy p, with a hold id of its own (nextHoldID): a reserve of 1 for
// holdFor, then then (a commit or a release) of the same hold at cost
// spent. A call refused is noted (fail).
func holdPair(hold holdFunc, p *limitspec.Policy, then limitspec.HoldOp, spent int64) func(string) bool {
	ctx := context.Background()
	return func(key string) bool {
		req, id := limitspec.Request{Policy: p, IDs: idsOf(key), Cost: 1}, nextHoldID()
		res, err := hold(ctx, req, limitspec.Hold{Op: limitspec.Reserve, ID: id, For: holdFor})
		if err != nil {
			return fail(fmt.Errorf("%s: reserve: %w", key, err))
		}
		if !res.Allowed {
			return false
		}
		req.Cost = spent
		if _, err = hold(ctx, req, limitspec.Hold{Op: then, ID: id}); err != nil {
			return fail(fmt.Errorf("%s: %s: %w", key, then, err))
		}
		return true
	}
}
