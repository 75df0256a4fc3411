package oracle

import (
	"errors"
	"slices"
)

// Holds are the model of reservations and in-flight slots
// (docs/semantics.md, "Holds"): a hold is an amount an id holds on one
// key of a limit until a time, and the key's live holds count toward
// admission like charges made now, without being charged:
//
//   - A decision of cost c admits when the algorithm, on the key's state,
//     admits c + H, H the sum of the live holds, and charges c alone. Its
//     waits count each hold whole until its end (withHolds).
//   - Reserve holds an amount when it is admitted as a decision of that
//     cost would be, and charges nothing. A reserve of an id that holds
//     the same amount already (a retry) changes nothing and reports the
//     state; of an id that holds another amount, it is refused.
//   - Commit ends a live hold and charges what was spent, forced (work
//     already done; docs/semantics.md, "Force"): more than was held is
//     charged too. Release ends it and charges nothing; Renew moves its
//     end. Each returns the state after it, as a decision of cost 0 sees
//     it. A commit or release is remembered for RequestMs with its reply,
//     so that one sent again after it took effect gets that reply again
//     and changes nothing; an id that holds nothing and ended nothing
//     within reach is refused (ErrNoHold), nothing changed.
//   - A hold past its end counts for nothing and charges nothing: a holder
//     that vanished frees what it held when its hold ends. Every call that
//     is not refused drops the holds that ended at its time (sweep), so
//     that a later call whose clock is behind does not count them again.
//
// HoldingPolicy runs them over a policy's limits, all or nothing; a
// single limit is a policy of one.

// holding is one limit's model with its holds.
type holding struct {
	m     *model
	holds map[string]map[string]hold  // by key, then by id: the live holds
	ended map[string]map[string]ended // by key, then by id: ends remembered
}

type hold struct{ amount, until int64 }

// ended is a hold a commit or release ended, remembered until until
// (RequestMs after it) with the call's reply.
type ended struct {
	op     string
	amount int64 // what the call charged on the limit: 0 for a release
	until  int64
	// reply is the call's reply, kept on the first limit (in the
	// policy's order) the call ended a hold on (replied set); the other
	// limits remember the end alone.
	reply   PolicyResult
	replied bool
}

// ErrNoHold is the refusal of a commit, release or renew of an id that
// holds nothing live.
var ErrNoHold = errors.New("no live hold")

// newHolding is m with holds of its own.
func newHolding(m *model) *holding {
	return &holding{m: m, holds: map[string]map[string]hold{}, ended: map[string]map[string]ended{}}
}

// sweep drops key's holds that ended at now, and the ends it remembers
// that are RequestMs past their reach.
func (h *holding) sweep(key string, now int64) {
	for id, x := range h.holds[key] {
		if x.until <= now {
			delete(h.holds[key], id)
		}
	}
	for id, e := range h.ended[key] {
		if e.until <= now-RequestMs {
			delete(h.ended[key], id)
		}
	}
}

// held is the sum of key's holds live at now.
func (h *holding) held(key string, now int64) int64 {
	var sum int64
	for _, x := range h.holds[key] {
		if x.until > now {
			sum += x.amount
		}
	}
	return sum
}

// live is id's hold on key at now, if it has one.
func (h *holding) live(key, id string, now int64) (hold, bool) {
	x, ok := h.holds[key][id]
	return x, ok && x.until > now
}

// endedAt is the end of id's hold on key that a commit or release made,
// if it is within reach at now.
func (h *holding) endedAt(key, id string, now int64) (ended, bool) {
	e, ok := h.ended[key][id]
	return e, ok && e.until > now
}

// put sets id's hold on key. A new hold of an id whose earlier hold a
// commit or release ended forgets that end: the id now names the new
// hold, and a commit or release after it ended answers ErrNoHold.
func (h *holding) put(key, id string, x hold) {
	delete(h.ended[key], id)
	if h.holds[key] == nil {
		h.holds[key] = map[string]hold{}
	}
	h.holds[key][id] = x
}

// end ends id's hold on key, remembering e.
func (h *holding) end(key, id string, e ended) {
	delete(h.holds[key], id)
	if h.ended[key] == nil {
		h.ended[key] = map[string]ended{}
	}
	h.ended[key][id] = e
}

// withHolds is the result of a decision of cost with the key's live
// holds counted, which charges nothing. A hold does not decay as a
// charge does: it counts, whole, until it ends (none is assumed to be
// settled sooner). So:
//
//   - Allowed and Remaining are the algorithm's for cost + H at now (a
//     denial's Remaining: what is left beside the holds alone, 0 if they
//     do not fit).
//   - RetryAfterMs is the wait until the algorithm admits cost + H(τ) at
//     τ, H(τ) the holds live at τ: tried at now and at each hold's end,
//     at each the algorithm's own wait for that sum, if it comes before
//     the next end; -1 when it never does.
//   - ResetAfterMs is the later of the algorithm's reset after cost (or,
//     denied, of its state) and the end of the last live hold.
func (h *holding) withHolds(key string, now, cost int64) Result {
	held := h.held(key, now)
	st := h.m.trusted(key, now)
	r, _ := h.m.d.decide(st, now, min(cost+held, costMax), nil, false)
	charged := cost
	if !r.Allowed {
		alone, _ := h.m.d.decide(st, now, held, nil, false)
		r.Remaining = 0
		if alone.Allowed {
			r.Remaining = alone.Remaining
		}
		r.RetryAfterMs, charged = h.retryAfter(key, now, cost), 0
	}
	own, _ := h.m.d.decide(st, now, charged, nil, false)
	r.ResetAfterMs = max(own.ResetAfterMs, h.lastEnd(key, now)-now)
	return r
}

// retryAfter is the wait until a decision of cost is admitted with the
// holds of key live then counted (see withHolds), -1 if never.
func (h *holding) retryAfter(key string, now, cost int64) int64 {
	ends := []int64{now}
	for _, x := range h.holds[key] {
		if x.until > now {
			ends = append(ends, x.until)
		}
	}
	slices.Sort(ends)
	ends = slices.Compact(ends)
	for i, at := range ends {
		// the state as a call at that time reads it: one whose clock is
		// too far ahead reads as absent until then
		r, _ := h.m.d.decide(h.m.trusted(key, at), at, min(cost+h.held(key, at), costMax), nil, false)
		switch {
		case r.Allowed:
			return at - now
		case r.RetryAfterMs >= 0 && (i == len(ends)-1 || at+r.RetryAfterMs < ends[i+1]):
			return at + r.RetryAfterMs - now
		}
	}
	return -1
}

// lastEnd is the end of key's last hold live at now; now when none is.
func (h *holding) lastEnd(key string, now int64) int64 {
	end := now
	for _, x := range h.holds[key] {
		end = max(end, x.until)
	}
	return end
}
