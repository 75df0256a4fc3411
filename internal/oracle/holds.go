package oracle

import (
	"errors"
	"fmt"
)

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
//     it. Each refuses an id that holds nothing (ErrNoHold), changing
//     nothing, so that a step retried after it took effect does nothing.
//   - A hold past its end counts for nothing and charges nothing: a holder
//     that vanished frees what it held when its hold ends.
//
// Holding decides one limit's calls with holds, on the state of a Model
// of the Store, which decisions without holds share.
type Holding struct {
	m     *model
	holds map[string]map[string]hold // by key, then by id
}

type hold struct{ amount, until int64 }

// ErrNoHold is the refusal of a commit, release or renew of an id that
// holds nothing live on the key.
var ErrNoHold = errors.New("no live hold")

// Holding returns the named limit under params with holds, on the
// store's state (see Limit); the holds are the Holding's own.
func (s *Store) Holding(name string, params map[string]int64) (*Holding, error) {
	lim, err := s.Limit(name, params)
	if err != nil {
		return nil, err
	}
	m, ok := lim.(*model)
	if e, isEntry := lim.(entryModel); isEntry {
		m, ok = e.model, true
	}
	if !ok {
		return nil, fmt.Errorf("oracle: %s has no model to hold on", name)
	}
	return &Holding{m: m, holds: map[string]map[string]hold{}}, nil
}

// held is the sum of key's holds live at now.
func (h *Holding) held(key string, now int64) int64 {
	var sum int64
	for _, x := range h.holds[key] {
		if x.until > now {
			sum += x.amount
		}
	}
	return sum
}

// live is id's hold on key at now, if it has one.
func (h *Holding) live(key, id string, now int64) (hold, bool) {
	x, ok := h.holds[key][id]
	return x, ok && x.until > now
}

// Decide decides a request of cost with the key's holds counted, and
// charges cost when it is admitted.
func (h *Holding) Decide(key string, now, cost int64, inputs map[string]string) (Result, error) {
	if err := h.m.check(key, now, cost, inputs); err != nil {
		return Result{}, err
	}
	r := h.withHolds(key, now, cost, inputs)
	if r.Allowed && cost > 0 {
		if charged, err := h.m.call(key, now, cost, inputs, false); err != nil || !charged.Allowed {
			panic("oracle: holds: a cost admitted with the holds is not admitted alone")
		}
	}
	return r, nil
}

// withHolds is the algorithm's result for cost with the key's live holds
// counted, which charges nothing; a denial's Remaining and ResetAfterMs
// are those of the holds alone.
func (h *Holding) withHolds(key string, now, cost int64, inputs map[string]string) Result {
	held := h.held(key, now)
	st := h.m.trusted(key, now)
	r, _ := h.m.d.decide(st, now, min(cost+held, costMax), inputs, false)
	if !r.Allowed {
		alone, _ := h.m.d.decide(st, now, held, inputs, false)
		r.Remaining, r.ResetAfterMs = 0, alone.ResetAfterMs
		if alone.Allowed {
			r.Remaining = alone.Remaining
		}
	}
	return r
}

// Reserve holds amount (at least 1) for id on key from now until now +
// holdMs (at least 1) when a decision of amount would be admitted, and
// returns that decision; it charges nothing. An id that already holds on
// the key is refused.
func (h *Holding) Reserve(key, id string, now, amount, holdMs int64) (Result, error) {
	if err := h.m.check(key, now, amount, nil); err != nil {
		return Result{}, err
	}
	switch _, held := h.live(key, id, now); {
	case id == "":
		return Result{}, bad("empty reservation id")
	case amount < 1 || holdMs < 1:
		return Result{}, bad("a hold of %d for %d ms: both must be at least 1", amount, holdMs)
	case held:
		return Result{}, bad("id %s already holds on %s", id, key)
	}
	r := h.withHolds(key, now, amount, nil)
	if r.Allowed {
		if h.holds[key] == nil {
			h.holds[key] = map[string]hold{}
		}
		h.holds[key][id] = hold{amount: amount, until: now + holdMs}
	}
	return r, nil
}

// Commit ends id's live hold on key and charges spent (0 or more),
// forced; its result is the state after it, as a decision of cost 0 with
// the other holds counted sees it (denied when the charge left the limit
// over-used).
func (h *Holding) Commit(key, id string, now, spent int64) (Result, error) {
	if _, err := h.liveHold(key, id, now, spent); err != nil {
		return Result{}, err
	}
	delete(h.holds[key], id)
	if spent > 0 {
		if _, err := h.m.call(key, now, spent, nil, true); err != nil {
			return Result{}, err
		}
	}
	return h.withHolds(key, now, 0, nil), nil
}

// Release ends id's live hold on key, charging nothing, and returns a
// decision of cost 0 with the other holds counted.
func (h *Holding) Release(key, id string, now int64) (Result, error) {
	if _, err := h.liveHold(key, id, now, 0); err != nil {
		return Result{}, err
	}
	delete(h.holds[key], id)
	return h.withHolds(key, now, 0, nil), nil
}

// Renew moves the end of id's live hold on key to now + holdMs (at least
// 1), and returns a decision of cost 0.
func (h *Holding) Renew(key, id string, now, holdMs int64) (Result, error) {
	x, err := h.liveHold(key, id, now, 0)
	if err != nil {
		return Result{}, err
	}
	if holdMs < 1 {
		return Result{}, bad("a hold for %d ms: at least 1", holdMs)
	}
	h.holds[key][id] = hold{amount: x.amount, until: now + holdMs}
	return h.withHolds(key, now, 0, nil), nil
}

// liveHold checks a call on id's hold on key (its key, now and cost as a
// decision's) and returns the hold, or ErrNoHold when it has none live.
func (h *Holding) liveHold(key, id string, now, cost int64) (hold, error) {
	if err := h.m.check(key, now, cost, nil); err != nil {
		return hold{}, err
	}
	x, ok := h.live(key, id, now)
	if !ok {
		return hold{}, fmt.Errorf("%w: %s on %s", ErrNoHold, id, key)
	}
	return x, nil
}
