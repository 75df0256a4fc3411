package oracle

import "fmt"

// HoldingPolicy is a policy whose limits hold (see holds.go): each limit
// keeps its own holds under the value of the identity it counts, and
// every call runs over all the limits, all or nothing. A reservation
// holds its amount on every limit when every limit admits it, and on
// none otherwise; a commit, release or renew needs the id's live hold on
// every limit, and changes nothing without it. Results are composed as
// Policy.Decide composes them.
type HoldingPolicy struct {
	p     *Policy
	holds []*holding // by limit
}

// NewHoldingPolicy returns the model of the policy with holds (see
// NewPolicy).
func NewHoldingPolicy(name string, limits []PolicyLimit) (*HoldingPolicy, error) {
	p, err := NewPolicy(name, limits)
	if err != nil {
		return nil, err
	}
	hp := &HoldingPolicy{p: p}
	for _, l := range p.limits {
		hp.holds = append(hp.holds, newHolding(l.m))
	}
	return hp, nil
}

// Decide decides a request of cost with every limit's holds counted:
// admitted when every limit admits, each then charging cost.
func (hp *HoldingPolicy) Decide(ids map[string]string, now, cost int64) (PolicyResult, error) {
	return hp.admit(ids, now, cost, func(h *holding, key string) {
		if cost == 0 {
			return
		}
		if r, err := h.m.call(key, now, cost, nil, false); err != nil || !r.Allowed {
			panic("oracle: holds: a cost admitted with the holds is not admitted alone")
		}
	})
}

// Reserve holds amount (at least 1) for id until now + holdMs (at least
// 1) on every limit, when every limit admits a decision of amount with
// its holds counted; it charges nothing. An id that already holds on a
// limit is refused.
func (hp *HoldingPolicy) Reserve(ids map[string]string, id string, now, amount, holdMs int64) (PolicyResult, error) {
	if err := hp.p.check(ids, now, amount); err != nil {
		return PolicyResult{}, err
	}
	switch {
	case id == "":
		return PolicyResult{}, bad("empty reservation id")
	case amount < 1 || holdMs < 1:
		return PolicyResult{}, bad("a hold of %d for %d ms: both must be at least 1", amount, holdMs)
	}
	for i, h := range hp.holds {
		if _, held := h.live(hp.key(i, ids), id, now); held {
			return PolicyResult{}, bad("id %s already holds on %s", id, hp.p.limits[i].name)
		}
	}
	out, err := hp.admit(ids, now, amount, func(h *holding, key string) {
		if h.holds[key] == nil {
			h.holds[key] = map[string]hold{}
		}
		h.holds[key][id] = hold{amount: amount, until: now + holdMs}
	})
	if err != nil || !out.Allowed {
		return out, err
	}
	// held: the state after it, the new hold counted whole until its end
	return hp.settled(ids, now), nil
}

// Commit ends id's live holds and charges spent on every limit, forced;
// each limit's result is the state after it, as a decision of cost 0
// with its other holds counted sees it.
func (hp *HoldingPolicy) Commit(ids map[string]string, id string, now, spent int64) (PolicyResult, error) {
	return hp.settle(ids, id, now, spent, func(h *holding, key string) {
		delete(h.holds[key], id)
		if spent > 0 {
			if _, err := h.m.call(key, now, spent, nil, true); err != nil {
				panic("oracle: a forced charge the policy accepted was refused: " + err.Error())
			}
		}
	})
}

// Release ends id's live holds on every limit, charging nothing.
func (hp *HoldingPolicy) Release(ids map[string]string, id string, now int64) (PolicyResult, error) {
	return hp.settle(ids, id, now, 0, func(h *holding, key string) { delete(h.holds[key], id) })
}

// Renew moves the end of id's live holds on every limit to now + holdMs
// (at least 1).
func (hp *HoldingPolicy) Renew(ids map[string]string, id string, now, holdMs int64) (PolicyResult, error) {
	if holdMs < 1 {
		return PolicyResult{}, bad("a hold for %d ms: at least 1", holdMs)
	}
	return hp.settle(ids, id, now, 0, func(h *holding, key string) {
		h.holds[key][id] = hold{amount: h.holds[key][id].amount, until: now + holdMs}
	})
}

// key is limit i's key for the identity values ids.
func (hp *HoldingPolicy) key(i int, ids map[string]string) string { return hp.p.limits[i].key(ids) }

// admit decides cost on every limit with its holds counted and, when
// every limit admits, applies the call to each; when one denies, nothing
// changes, and a limit that would have admitted reports a decision of
// cost 0 instead.
func (hp *HoldingPolicy) admit(ids map[string]string, now, cost int64, apply func(*holding, string)) (PolicyResult, error) {
	out, allowed, err := hp.p.decideEach(ids, now, cost, func(i int, l policyLimit) Result {
		return hp.holds[i].withHolds(l.key(ids), now, cost)
	})
	if err != nil {
		return out, err
	}
	for i, h := range hp.holds {
		switch key := hp.key(i, ids); {
		case allowed:
			apply(h, key)
		case out.Limits[i].Allowed:
			out.Limits[i] = h.withHolds(key, now, 0)
		}
	}
	return hp.p.compose(out, allowed), nil
}

// settle checks a call on id's holds (cost as a decision's), applies it
// to every limit when each holds id live (else ErrNoHold, nothing
// changed), and reports each limit's state after it, as a decision of
// cost 0 with its holds counted sees it.
func (hp *HoldingPolicy) settle(ids map[string]string, id string, now, cost int64, apply func(*holding, string)) (PolicyResult, error) {
	if err := hp.p.check(ids, now, cost); err != nil {
		return PolicyResult{}, err
	}
	for i, h := range hp.holds {
		if _, held := h.live(hp.key(i, ids), id, now); !held {
			return PolicyResult{}, fmt.Errorf("%w: %s on %s", ErrNoHold, id, hp.p.limits[i].name)
		}
	}
	for i, h := range hp.holds {
		apply(h, hp.key(i, ids))
	}
	return hp.settled(ids, now), nil
}

// settled is the state of every limit as a decision of cost 0 with its
// holds counted sees it.
func (hp *HoldingPolicy) settled(ids map[string]string, now int64) PolicyResult {
	out, allowed, _ := hp.p.decideEach(ids, now, 0, func(i int, l policyLimit) Result {
		return hp.holds[i].withHolds(l.key(ids), now, 0)
	})
	return hp.p.compose(out, allowed)
}
