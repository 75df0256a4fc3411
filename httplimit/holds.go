package httplimit

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/limitspec/limitspec"
)

// A rule of a holding policy (limitspec.Policy.WithHolds;
// docs/semantics.md, "Holds") holds its cost while the request is
// served: the middleware reserves the request's cost (Options.Cost, 1 by
// default: an estimate, such as an LLM call's max tokens) before the
// handler runs, and when the handler returns (a panic and a client gone
// included) commits the cost the handler reported (ReportCost), or else
// the cost reserved. A policy with a concurrency limit so limits the
// requests in flight: each holds a slot until its response ends, and a
// process that dies holding one frees it when the hold ends
// (Options.HoldFor). The RateLimit fields are the reserve's, the hold
// counted whole; a concurrency limit's quota is sent with the unit
// qu="concurrent-requests". The limiter must implement
// limitspec.Holder.

// DefaultHoldFor is how long a request holds its cost when
// Options.HoldFor is 0: the longest a handler is expected to run.
const DefaultHoldFor = time.Minute

// settleTimeout bounds the commit after a request, whose own context may
// be done (a client gone).
const settleTimeout = 5 * time.Second

// held is a request's hold: its call, and the cost the handler reports.
type held struct {
	req      limitspec.Request
	id       string
	reported atomic.Int64 // -1: none
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
	defer m.settle(r.Context(), h)
	next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), heldKey{}, h)))
}

// settle commits h: the cost reported, or the cost reserved. Its error is
// dropped: the hold then ends by itself (Options.HoldFor).
func (m *Middleware) settle(ctx context.Context, h *held) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	req := h.req
	if c := h.reported.Load(); c >= 0 {
		req.Cost = c
	}
	m.l.(limitspec.Holder).Hold(ctx, req, limitspec.Hold{Op: limitspec.Commit, ID: h.id})
}
