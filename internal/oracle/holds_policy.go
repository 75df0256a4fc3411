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
var holdOps = []string{"decide", "reserve", "commit", "release", "renew"}

// Run runs one operation of a holding policy, as the holds script takes
// it: op is decide, reserve, commit, release or renew; id the hold's id
// (empty for a decision); costs[i] limit i's cost: the decision's, the
// amount reserved or the amount spent (0 for release and renew); holdMs
// the hold's length for reserve and renew, else 0. Its input is checked
// in the scripts' order: the identities, now and the costs (as
// Policy.DecideCosts), then op, id and holdMs, then the costs the op
// takes; then the id's holds (a reserve of an id that holds otherwise,
// ErrBadInput; a commit, release or renew of one that holds nothing and
// ended nothing within reach, ErrNoHold). A refused call changes nothing;
// any other first drops the holds that ended at now.
func (hp *HoldingPolicy) Run(ids map[string]string, op, id string, now int64, costs []int64, holdMs int64) (PolicyResult, error) {
	if err := hp.checkRun(ids, op, id, now, costs, holdMs); err != nil {
		return PolicyResult{}, err
	}
	switch op {
	case "decide":
		hp.sweep(ids, now)
		return hp.decide(ids, now, costs), nil
	case "reserve":
		return hp.reserve(ids, id, now, costs, holdMs)
	}
	return hp.settle(ids, op, id, now, costs, holdMs)
}

// checkRun refuses a call's input, in the scripts' order (see Run).
func (hp *HoldingPolicy) checkRun(ids map[string]string, op, id string, now int64, costs []int64, holdMs int64) error {
	if err := hp.p.check(ids, now, costs); err != nil {
		return err
	}
	timed := op == "reserve" || op == "renew"
	switch {
	case !slices.Contains(holdOps, op):
		return bad("%s: op must be decide, reserve, commit, release or renew, got %q", hp.p.name, op)
	case op == "decide" && id != "":
		return bad("%s: a decide takes no id, got %q", hp.p.name, id)
	case op != "decide" && (len(id) < 1 || len(id) > holdIDMax):
		return bad("%s: id must be 1 to %d bytes, got %d", hp.p.name, holdIDMax, len(id))
	case timed && (holdMs < 1 || holdMs > HoldMsMax), !timed && holdMs != 0:
		return bad("%s: hold_ms out of range for %s: %d", hp.p.name, op, holdMs)
	case op == "reserve" && slices.Contains(costs, 0):
		return bad("%s: a reserve holds at least 1, got cost 0", hp.p.name)
	case (op == "release" || op == "renew") && !peek(costs):
		return bad("%s: cost must be 0 for %s", hp.p.name, op)
	}
	return nil
}

// HoldingPolicy is a policy whose limits hold (see holds.go): each limit
// keeps its own holds under the value of the identity it counts, and
// every call runs over all the limits, all or nothing. A reservation
// holds its amount on every limit when every limit admits it, and on
// none otherwise; a commit, release or renew acts on every limit the id
// holds on, and changes nothing when it holds on none. Results are
// composed as Policy.Decide composes them.
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

// Policy is the policy whose limits hold, for its Amounts and Every.
func (hp *HoldingPolicy) Policy() *Policy { return hp.p }

// Decide decides a request of cost on every limit with its holds
// counted: Run's decide.
func (hp *HoldingPolicy) Decide(ids map[string]string, now, cost int64) (PolicyResult, error) {
	return hp.Run(ids, "decide", "", now, hp.p.Every(cost), 0)
}

// decide is admitted when every limit admits its cost with its holds
// counted, each then charging its cost.
func (hp *HoldingPolicy) decide(ids map[string]string, now int64, costs []int64) PolicyResult {
	return hp.admit(ids, now, costs, func(i int, h *holding, key string) {
		if costs[i] == 0 {
			return
		}
		if r, err := h.m.call(key, now, costs[i], nil, false); err != nil || !r.Allowed {
			panic("oracle: holds: a cost admitted with the holds is not admitted alone")
		}
	})
}

// reserve holds costs[i] (at least 1) for id until now + holdMs on every
// limit i, when every limit admits a decision of its cost with its holds
// counted; it charges nothing. An id that holds costs[i] on every limit
// already is a retry: nothing changes, and the result is the state. An id
// that holds otherwise (another amount, or on some limits only) is
// refused.
func (hp *HoldingPolicy) reserve(ids map[string]string, id string, now int64, costs []int64, holdMs int64) (PolicyResult, error) {
	replay, some := true, -1
	for i, h := range hp.holds {
		x, held := h.live(hp.key(i, ids), id, now)
		replay = replay && held && x.amount == costs[i]
		if held && some < 0 {
			some = i
		}
	}
	switch {
	case replay:
		hp.sweep(ids, now)
		return hp.settled(ids, now), nil
	case some >= 0:
		return PolicyResult{}, hp.heldOtherwise(ids, id, now, costs, some)
	}
	hp.sweep(ids, now)
	out := hp.admit(ids, now, costs, func(i int, h *holding, key string) {
		h.put(key, id, hold{amount: costs[i], until: now + holdMs})
	})
	if !out.Allowed {
		return out, nil
	}
	// held: the state after it, the new hold counted whole until its end
	return hp.settled(ids, now), nil
}

// heldOtherwise is the refusal of a reserve of id, which holds on limit
// some, but not costs on every limit.
func (hp *HoldingPolicy) heldOtherwise(ids map[string]string, id string, now int64, costs []int64, some int) error {
	for i, h := range hp.holds {
		x, held := h.live(hp.key(i, ids), id, now)
		switch {
		case held && x.amount != costs[i]:
			return bad("id %s holds %d on %s, not %d", id, x.amount, hp.p.limits[i].name, costs[i])
		case !held:
			return bad("id %s holds on %s but nothing on %s", id, hp.p.limits[some].name, hp.p.limits[i].name)
		}
	}
	panic("oracle: heldOtherwise of an id that holds costs everywhere")
}

// settle runs a commit, release or renew of id (see Run): on every
// limit id holds on, a commit and a release end the hold (a commit then
// charges costs[i] on every limit, forced: work already done), a renew
// moves its end to now + holdMs. Each reports the state after it, as a
// decision of cost 0 with the holds counted sees it. When id holds on
// no limit, a commit or release that ended its holds within reach with
// the same costs gets that call's reply again, changing nothing; any
// other call is refused with ErrNoHold.
func (hp *HoldingPolicy) settle(ids map[string]string, op, id string, now int64, costs []int64, holdMs int64) (PolicyResult, error) {
	holds := make([]bool, len(hp.holds))
	any := false
	for i, h := range hp.holds {
		_, holds[i] = h.live(hp.key(i, ids), id, now)
		any = any || holds[i]
	}
	if !any {
		if r, ok := hp.replay(ids, op, id, now, costs); ok {
			hp.sweep(ids, now)
			return r, nil
		}
		return PolicyResult{}, fmt.Errorf("%w: %s on %s", ErrNoHold, id, hp.p.name)
	}
	hp.sweep(ids, now)
	for i, h := range hp.holds {
		key := hp.key(i, ids)
		switch {
		case holds[i] && op == "renew":
			h.put(key, id, hold{amount: h.holds[key][id].amount, until: now + holdMs})
		case holds[i]:
			delete(h.holds[key], id)
		}
		if op == "commit" && costs[i] > 0 {
			if _, err := h.m.call(key, now, costs[i], nil, true); err != nil {
				panic("oracle: a forced charge the policy accepted was refused: " + err.Error())
			}
		}
	}
	out := hp.settled(ids, now)
	if op != "renew" {
		replied := false
		for i, h := range hp.holds {
			if holds[i] {
				e := ended{op: op, amount: costs[i], until: now + RequestMs}
				if !replied {
					e.reply, e.replied, replied = out.clone(), true, true
				}
				h.end(hp.key(i, ids), id, e)
			}
		}
	}
	return out, nil
}

// replay is the reply of a commit or release of id that ended its holds
// within reach, when op and costs repeat it on every limit it ended on.
func (hp *HoldingPolicy) replay(ids map[string]string, op, id string, now int64, costs []int64) (PolicyResult, bool) {
	if op == "renew" {
		return PolicyResult{}, false
	}
	var first *ended
	for i, h := range hp.holds {
		e, ok := h.endedAt(hp.key(i, ids), id, now)
		if !ok {
			continue
		}
		if e.op != op || e.amount != costs[i] {
			return PolicyResult{}, false
		}
		if first == nil && e.replied {
			first = &e
		}
	}
	if first == nil { // no limit keeps a reply: the one that did forgot it
		return PolicyResult{}, false
	}
	return first.reply.clone(), true
}

// clone is r with a copy of its limits' results.
func (r PolicyResult) clone() PolicyResult {
	r.Limits = slices.Clone(r.Limits)
	return r
}

// Reset deletes every limit's state for the identity values ids, as
// Policy.Reset does; their holds stay, each until it ends (work in
// flight keeps its hold).
func (hp *HoldingPolicy) Reset(ids map[string]string) error {
	return hp.p.Reset(ids)
}

// key is limit i's key for the identity values ids.
func (hp *HoldingPolicy) key(i int, ids map[string]string) string { return hp.p.limits[i].key(ids) }

// sweep drops, on every limit, the holds of its key that ended at now.
func (hp *HoldingPolicy) sweep(ids map[string]string, now int64) {
	for i, h := range hp.holds {
		h.sweep(hp.key(i, ids), now)
	}
}

// admit decides costs on every limit with its holds counted and, when
// every limit admits, applies the call to each; when one denies, nothing
// changes, and a limit that would have admitted reports a decision of
// cost 0 instead.
func (hp *HoldingPolicy) admit(ids map[string]string, now int64, costs []int64, apply func(int, *holding, string)) PolicyResult {
	out, allowed, _ := hp.p.decideEach(ids, now, costs, func(i int, l policyLimit) Result {
		return hp.holds[i].withHolds(l.key(ids), now, costs[i])
	})
	for i, h := range hp.holds {
		switch key := hp.key(i, ids); {
		case allowed:
			apply(i, h, key)
		case out.Limits[i].Allowed:
			out.Limits[i] = h.withHolds(key, now, 0)
		}
	}
	return hp.p.compose(out, allowed)
}

// settled is the state of every limit as a decision of cost 0 with its
// holds counted sees it.
func (hp *HoldingPolicy) settled(ids map[string]string, now int64) PolicyResult {
	out, allowed, _ := hp.p.decideEach(ids, now, hp.p.Every(0), func(i int, l policyLimit) Result {
		return hp.holds[i].withHolds(l.key(ids), now, 0)
	})
	return hp.p.compose(out, allowed)
}
