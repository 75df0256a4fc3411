package httplimit

import (
	"context"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limiters"
)

// A rule of a holding policy (limitspec.Policy.WithHolds;
// docs/semantics.md, "Holds") holds its cost while the request is
// served: the middleware reserves the request's cost (Options.Cost, 1 by
// default, and Options.Costs by unit: an estimate, such as an LLM call's
// max tokens) before the handler runs, and when the handler returns (a
// panic and a client gone included) commits the costs the handler
// reported (ReportCost, ReportUnitCost), or else those reserved. A policy with a concurrency limit so limits the
// requests in flight: each holds a slot until its response ends, and a
// process that dies holding one frees it when the hold ends
// (Options.HoldFor). The RateLimit fields are the reserve's, the hold
// counted whole; a concurrency limit's quota is sent with the unit
// qu="concurrent-requests". The limiter must implement
// limitspec.Holder.

// DefaultHoldFor is how long a request holds its cost when
// Options.HoldFor is 0: the longest a handler is expected to run.
const DefaultHoldFor = time.Minute

// DefaultInFlightRetryAfter is the Retry-After of a request denied for
// want of a slot when Options.InFlightRetryAfter is 0: a second, the
// least Retry-After can say.
const DefaultInFlightRetryAfter = time.Second

// settleTimeout bounds the commit after a request, whose own context may
// be done (a client gone).
const settleTimeout = 5 * time.Second

// held is a request's hold: its call, and the costs the handler reports.
type held struct {
	req      limitspec.Request
	id       string
	reported atomic.Int64 // -1: none
	mu       sync.Mutex
	units    map[string]int64 // reported by unit
	// outer is the hold of a middleware that wraps this one, if any;
	// unserved says that a middleware inside denied or refused the
	// request, so that it was not served: its hold is released, not
	// committed.
	outer    *held
	unserved atomic.Bool
}

// notServed marks the holds of the middlewares that wrap r's handler,
// each of them, as not served: a middleware inside denied or refused r.
func notServed(r *http.Request) {
	for h, _ := r.Context().Value(heldKey{}).(*held); h != nil; h = h.outer {
		h.unserved.Store(true)
	}
}

type heldKey struct{}

// ReportCost tells the middleware what r's request actually cost (≥ 0),
// to commit when the handler returns in place of the cost reserved: the
// tokens an LLM call used, the bytes sent. It does nothing for a request
// that holds nothing (a rule that is not a holding policy's); the last
// report counts.
func ReportCost(r *http.Request, cost int64) {
	if h, ok := r.Context().Value(heldKey{}).(*held); ok && cost >= 0 {
		h.reported.Store(cost)
	}
}

// ReportUnitCost tells the middleware what r's request actually cost in
// unit (≥ 0), to commit when the handler returns in place of the amount
// of that unit reserved (Options.Costs, or Cost for a limit whose unit
// Costs did not give): an LLM call's tokens, once the model has
// answered. Like ReportCost, it does nothing for a request that holds
// nothing; the last report of a unit counts. A unit no limit of the
// policy counts makes the commit fail, as it would the reserve: the
// hold then ends by itself (Options.HoldFor).
func ReportUnitCost(r *http.Request, unit string, cost int64) {
	h, ok := r.Context().Value(heldKey{}).(*held)
	if !ok || cost < 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.units == nil {
		h.units = map[string]int64{}
	}
	h.units[unit] = cost
}

// holds reports whether rule's requests hold their cost.
func holds(rule Rule) bool { return rule.Policy != nil && rule.Policy.Holds() }

// reserve reserves req's cost for the request, by the limiter's Hold.
func (m *Middleware) reserve(ctx context.Context, req limitspec.Request) (limitspec.Result, *held, error) {
	holder, ok := m.l.(limitspec.Holder)
	if !ok {
		return limitspec.Result{}, nil, limitspec.ErrMisconfigured
	}
	h := &held{req: req, id: m.holdIDs.Next()}
	h.reported.Store(-1)
	res, err := holder.Hold(ctx, req, limitspec.Hold{Op: limitspec.Reserve, ID: h.id, For: m.holdFor})
	return res, h, err
}

// serveHeld serves r by next with h's hold, then commits it.
func (m *Middleware) serveHeld(w http.ResponseWriter, r *http.Request, next http.Handler, h *held) {
	h.outer, _ = r.Context().Value(heldKey{}).(*held)
	defer m.settle(r.Context(), h)
	next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), heldKey{}, h)))
}

// settle commits h: the costs reported, or those reserved; or releases
// it when a middleware inside did not serve the request. Its error is
// dropped: the hold then ends by itself (Options.HoldFor).
func (m *Middleware) settle(ctx context.Context, h *held) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	req := h.req
	if h.unserved.Load() {
		req.Cost, req.Costs = 0, nil
		m.l.(limitspec.Holder).Hold(ctx, req, limitspec.Hold{Op: limitspec.Release, ID: h.id})
		return
	}
	if c := h.reported.Load(); c >= 0 {
		req.Cost = c
	}
	h.mu.Lock()
	if len(h.units) > 0 {
		req.Costs = maps.Clone(req.Costs)
		if req.Costs == nil {
			req.Costs = map[string]int64{}
		}
		maps.Copy(req.Costs, h.units)
	}
	h.mu.Unlock()
	req.Peek = limiters.AsksNothing(req) // a commit of nothing spent
	m.l.(limitspec.Holder).Hold(ctx, req, limitspec.Hold{Op: limitspec.Commit, ID: h.id})
}
