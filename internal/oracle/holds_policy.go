package oracle

import (
	"fmt"
	"slices"
)

// The bounds of a hold (docs/semantics.md, "Holds").
const (
	// HoldMsMax is the longest a hold lasts before its holder renews it.
	HoldMsMax = 86400000
	// holdIDMax is the longest hold id, in bytes.
	holdIDMax = 128
)

// The operations of a holding policy (HoldingPolicy.Run).
var holdOps = []string{"decide", "reserve", "commit", "release", "renew", "reset"}

// Run runs one operation of a holding policy, as the holds script takes
// it: op is decide, reserve, commit, release or renew; id the hold's id
// (empty for a decision); cost the decision's cost, the amount reserved
// or the amount spent (0 for release and renew); holdMs the hold's
// length for reserve and renew, else 0. Its input is checked in the
// scripts' order: the identities, now and cost (as Decide), then op, id
// and holdMs, then the cost the op takes.
func (hp *HoldingPolicy) Run(ids map[string]string, op, id string, now, cost, holdMs int64) (PolicyResult, error) {
	if err := hp.p.check(ids, now, cost); err != nil {
		return PolicyResult{}, err
	}
	timed := op == "reserve" || op == "renew"
	switch {
	case !slices.Contains(holdOps, op):
		return PolicyResult{}, bad("%s: op must be decide, reserve, commit, release, renew or reset, got %q", hp.p.name, op)
	case (op == "decide" || op == "reset") && id != "":
		return PolicyResult{}, bad("%s: a %s takes no id, got %q", hp.p.name, op, id)
	case op != "decide" && op != "reset" && (len(id) < 1 || len(id) > holdIDMax):
		return PolicyResult{}, bad("%s: id must be 1 to %d bytes, got %d", hp.p.name, holdIDMax, len(id))
	case timed && (holdMs < 1 || holdMs > HoldMsMax), !timed && holdMs != 0:
		return PolicyResult{}, bad("%s: hold_ms out of range for %s: %d", hp.p.name, op, holdMs)
	case op == "reserve" && cost < 1:
		return PolicyResult{}, bad("%s: a reserve holds at least 1, got cost 0", hp.p.name)
	case (op == "release" || op == "renew") && cost != 0:
		return PolicyResult{}, bad("%s: cost must be 0 for %s, got %d", hp.p.name, op, cost)
	}
	switch op {
	case "reset":
		return PolicyResult{}, hp.Reset(ids)
	case "decide":
		return hp.Decide(ids, now, cost)
	case "reserve":
		return hp.Reserve(ids, id, now, cost, holdMs)
	case "commit":
		return hp.Commit(ids, id, now, cost)
	case "release":
		return hp.Release(ids, id, now)
	}
	return hp.Renew(ids, id, now, holdMs)
}

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
	if err := hp.p.check(ids, now, cost); err != nil {
		return PolicyResult{}, err
	}
	return hp.admit(ids, now, cost, func(h *holding, key string) {
		if cost == 0 {
			return
		}
		if r, err := h.m.call(key, now, cost, nil, false); err != nil || !r.Allowed {
			panic("oracle: holds: a cost admitted with the holds is not admitted alone")
		}
	})
}

// Reserve holds amount (at least 1) for id until now + holdMs (1 to
// HoldMsMax) on every limit, when every limit admits a decision of amount
// with its holds counted; it charges nothing. An id that holds amount on
// every limit already is a retry: nothing changes, and the result is the
// state. An id that holds otherwise is refused.
func (hp *HoldingPolicy) Reserve(ids map[string]string, id string, now, amount, holdMs int64) (PolicyResult, error) {
	if err := hp.p.check(ids, now, amount); err != nil {
		return PolicyResult{}, err
	}
	switch {
	case id == "":
		return PolicyResult{}, bad("empty reservation id")
	case amount < 1 || holdMs < 1 || holdMs > HoldMsMax:
		return PolicyResult{}, bad("a hold of %d for %d ms: both must be at least 1, the time at most %d", amount, holdMs, HoldMsMax)
	}
	replay := true
	for i, h := range hp.holds {
		x, held := h.live(hp.key(i, ids), id, now)
		replay = replay && held && x.amount == amount
	}
	if replay {
		return hp.settled(ids, now), nil
	}
	for i, h := range hp.holds {
		if x, held := h.live(hp.key(i, ids), id, now); held {
			return PolicyResult{}, bad("id %s holds %d on %s, not %d", id, x.amount, hp.p.limits[i].name, amount)
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

// Reset deletes every limit's state and holds for the identity values
// ids (see Policy.Reset).
func (hp *HoldingPolicy) Reset(ids map[string]string) error {
	if err := hp.p.Reset(ids); err != nil {
		return err
	}
	for i, h := range hp.holds {
		delete(h.holds, hp.key(i, ids))
	}
	return nil
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
