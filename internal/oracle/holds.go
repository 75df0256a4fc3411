package oracle

import (
	"errors"
	"slices"
)

// Holds are the model of reservations and in-flight slots
// (docs/semantics.md, "Holds"): a hold is an amount an id holds on one
// key of a limit until a time, and
// the key's live holds (those whose end has not passed) count toward
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
//     it, and refuses an id that holds nothing (ErrNoHold), changing
//     nothing, so that a step retried after it took effect does nothing.
//   - A hold past its end counts for nothing and charges nothing: a holder
//     that vanished frees what it held when its hold ends.
//
// HoldingPolicy runs them over a policy's limits, all or nothing; a
// single limit is a policy of one.

// holding is one limit's model with its holds.
type holding struct {
	m     *model
	holds map[string]map[string]hold // by key, then by id
}

type hold struct{ amount, until int64 }

// ErrNoHold is the refusal of a commit, release or renew of an id that
// holds nothing live.
var ErrNoHold = errors.New("no live hold")

// newHolding is m with holds of its own.
func newHolding(m *model) *holding { return &holding{m: m, holds: map[string]map[string]hold{}} }

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
