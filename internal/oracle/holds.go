package oracle

import "errors"

// Holds are the proposed model of reservations and in-flight slots (the
// design of issue 29, not yet a part of the contract or of any target):
// a hold is an amount an id holds on one key of a limit until a time, and
// the key's live holds (those whose end has not passed) count toward
// admission like charges made now, without being charged:
//
//   - A decision of cost c admits when the algorithm, on the key's state,
//     admits c + H, H the sum of the live holds, and charges c alone. Its
//     result is the algorithm's for c + H; a denial's Remaining and
//     ResetAfterMs are those of the holds alone (what is left once they
//     are counted), as a denial reports the state without the request.
//   - Reserve holds an amount when it is admitted as a decision of that
//     cost would be, and charges nothing.
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

// withHolds is the algorithm's result for cost with the key's live holds
// counted, which charges nothing; a denial's Remaining and ResetAfterMs
// are those of the holds alone.
func (h *holding) withHolds(key string, now, cost int64) Result {
	held := h.held(key, now)
	st := h.m.trusted(key, now)
	r, _ := h.m.d.decide(st, now, min(cost+held, costMax), nil, false)
	if !r.Allowed {
		alone, _ := h.m.d.decide(st, now, held, nil, false)
		r.Remaining, r.ResetAfterMs = 0, alone.ResetAfterMs
		if alone.Allowed {
			r.Remaining = alone.Remaining
		}
	}
	return r
}
