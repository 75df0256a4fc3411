package main

import (
	"context"
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

// newMemory is a goimpl.Limiter as New makes it (its sweeper on).
func newMemory() *goimpl.Limiter {
	l, err := goimpl.New(goimpl.Options{})
	if err != nil {
		panic(err)
	}
	return l
}

// memoryPolicy decides each request by policy p, a plain policy or a
// holding one (a decision counting its holds), at cost 1, with
// goimpl.Limiter.Limit.
func memoryPolicy(p *limitspec.Policy) func() (func(string) bool, func()) {
	return func() (func(string) bool, func()) {
		l := newMemory()
		ctx := context.Background()
		return func(key string) bool {
			res, err := l.Limit(ctx, limitspec.Request{Policy: p, IDs: idsOf(key), Cost: 1})
			return err == nil && res.Allowed
		}, func() { l.Close() }
	}
}

// memoryHoldPair runs two calls of goimpl.Limiter.Hold for each request
// on the holding policy p, with a hold id of its own: a reserve of 1 for
// holdFor, then then (a commit or a release) of the same hold at cost
// spent.
func memoryHoldPair(p *limitspec.Policy, then limitspec.HoldOp, spent int64) func() (func(string) bool, func()) {
	return func() (func(string) bool, func()) {
		l := newMemory()
		ctx := context.Background()
		return func(key string) bool {
			req, id := limitspec.Request{Policy: p, IDs: idsOf(key), Cost: 1}, nextHoldID()
			res, err := l.Hold(ctx, req, limitspec.Hold{Op: limitspec.Reserve, ID: id, For: holdFor})
			if err != nil || !res.Allowed {
				return false
			}
			req.Cost = spent
			_, err = l.Hold(ctx, req, limitspec.Hold{Op: then, ID: id})
			return err == nil
		}, func() { l.Close() }
	}
}
