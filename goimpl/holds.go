package goimpl

import (
	"context"
	"slices"
	"sync"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/kit"
)

// Holds (docs/semantics.md, "Holds") in process memory, as the holds
// script keeps them on Redis: each limit of a holding policy keeps,
// under its name and the value it counts, the holds live on it, and
// every operation counts them around the limit's own decision, the same
// for every algorithm. An operation holds the holds' lock and every
// shard its limits touch, so it is atomic over all the policy's limits.

// holdStore is a Limiter's holds, by limit and key; an entry is dropped
// when an operation leaves no hold live on it, and every sweepEvery
// operations the entries whose holds have all ended are dropped, so that
// memory follows the holds live, not every key that ever held.
type holdStore struct {
	mu  sync.Mutex
	m   map[holdKey]map[string]hold
	ops int // operations since the last sweep
}

// sweepEvery is how many operations pass between two sweeps of the holds
// that ended: each sweep reads every entry once, so that it costs less
// than an operation's share of work.
const sweepEvery = 1024

// holdKey names one limit's holds: the limit's name and the value it
// counts, as the Redis key {tag}:<limit>:hd names them.
type holdKey struct{ tag, limit string }

// hold is an amount held until a time (ms).
type hold struct{ amount, end int64 }

// heldLimit is one limit of a call on holds: its call, and its holds
// live at the call's time.
type heldLimit struct {
	lc   *limitCall
	key  holdKey
	live map[string]hold
}

// Hold runs h on the holds of req.Policy, a holding policy, for req.IDs
// (see limitspec.Holder). Its errors match limitspec.ErrBadInput or
// limitspec.ErrNoHold, or are ctx's.
func (l *Limiter) Hold(ctx context.Context, req limitspec.Request, h limitspec.Hold) (limitspec.Result, error) {
	if err := ctx.Err(); err != nil {
		return limitspec.Result{}, err
	}
	var res limitspec.Result
	err := l.runHolds(&req, h.Op.String(), h.ID, h.Ms(), &res)
	return res, err
}

// runHolds runs op on req's holding policy into *res: a decision (op
// "decide"), or an operation on the hold id.
func (l *Limiter) runHolds(req *limitspec.Request, op, id string, holdMs int64, res *limitspec.Result) error {
	if err := limitcall.CheckRuleOf(req.Limit, req.Policy); err != nil {
		return err
	}
	if err := limitcall.CheckHolding(req.Policy); err != nil {
		return err
	}
	p := req.Policy
	if req.Force || req.ID != "" {
		return kit.BadInput("%s: a holding policy takes no Force nor ID: a commit charges work done, and a hold's id makes its calls idempotent", p.Name())
	}
	now := l.nowMs(req.Now)
	limits, calls, err := l.preparePolicy(*req, now, nil)
	if err != nil {
		return err
	}
	costs, err := limitcall.Costs(p, *req, nil)
	if err != nil {
		return err
	}
	if err := limitcall.CheckHoldOp(p.Name(), op, id, costs, holdMs, requestIdMax, holdMsMax); err != nil {
		return err
	}
	keys, _ := limitcall.PolicyKeys(p, req.IDs) // checked by preparePolicy
	l.holds.mu.Lock()
	defer l.holds.mu.Unlock()
	unlock := lockAll(calls)
	defer unlock()
	held := make([]heldLimit, len(calls))
	for i := range calls {
		k := holdKey{tag: keys[i], limit: limits[i].Name}
		held[i] = heldLimit{lc: &calls[i], key: k, live: l.holds.live(k, now)}
	}
	replies, err := runOp(p.Name(), held, op, id, now, req.Cost, holdMs)
	if err != nil {
		return err
	}
	for _, h := range held {
		l.holds.keep(h.key, h.live)
	}
	l.holds.sweep(now)
	compose(limits, replies, false, res)
	return nil
}

// live is a copy of the holds of k live at now.
func (s *holdStore) live(k holdKey, now int64) map[string]hold {
	out := map[string]hold{}
	for id, h := range s.m[k] {
		if h.end > now {
			out[id] = h
		}
	}
	return out
}

// reset drops the holds of every limit of p for the identity values ids
// (checked by the caller).
func (s *holdStore) reset(p *limitspec.Policy, ids map[string]string) {
	keys, _ := limitcall.PolicyKeys(p, ids)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, pl := range p.Limits() {
		delete(s.m, holdKey{tag: keys[i], limit: pl.Name})
	}
}

// sweep drops, every sweepEvery calls, the entries whose holds have all
// ended at now.
func (s *holdStore) sweep(now int64) {
	if s.ops++; s.ops < sweepEvery {
		return
	}
	s.ops = 0
	for k, holds := range s.m {
		if !anyLive(holds, now) {
			delete(s.m, k)
		}
	}
}

// anyLive reports whether a hold of holds is live at now.
func anyLive(holds map[string]hold, now int64) bool {
	for _, h := range holds {
		if h.end > now {
			return true
		}
	}
	return false
}

// keep stores k's live holds, dropping k when none is left.
func (s *holdStore) keep(k holdKey, live map[string]hold) {
	if len(live) == 0 {
		delete(s.m, k)
		return
	}
	if s.m == nil {
		s.m = map[holdKey]map[string]hold{}
	}
	s.m[k] = live
}

// runOp runs op on the limits' holds (copies, which the caller stores
// after) and returns each limit's reply, or a refusal with nothing
// changed.
func runOp(policy string, held []heldLimit, op, id string, now, cost, holdMs int64) ([]kit.Reply, error) {
	switch op {
	case "decide":
		return admit(held, now, cost, nil), nil
	case "reserve":
		replay, err := reserved(policy, held, id, cost)
		if err != nil || replay {
			return settled(held, now), err
		}
		return admit(held, now, cost, func(h *heldLimit) { h.live[id] = hold{amount: cost, end: now + holdMs} }), nil
	}
	for _, h := range held {
		if _, ok := h.live[id]; !ok {
			return nil, limitcall.NoHold(policy, id)
		}
	}
	for _, h := range held {
		switch op {
		case "renew":
			h.live[id] = hold{amount: h.live[id].amount, end: now + holdMs}
		case "commit":
			delete(h.live, id)
			if cost > 0 {
				h.charge(now, cost, true)
			}
		default: // release
			delete(h.live, id)
		}
	}
	return settled(held, now), nil
}

// reserved reports whether id holds cost on every limit already (a
// retried reserve), or refuses an id that holds another amount.
func reserved(policy string, held []heldLimit, id string, cost int64) (bool, error) {
	replay := true
	for _, h := range held {
		x, ok := h.live[id]
		replay = replay && ok && x.amount == cost
	}
	if replay {
		return true, nil
	}
	for _, h := range held {
		if x, ok := h.live[id]; ok {
			return false, kit.BadInput("%s: id %s holds %d on %s, not %d", policy, limitcall.Clip(id), x.amount, h.key.limit, cost)
		}
	}
	return false, nil
}

// admit decides cost on every limit with its holds counted; when every
// limit admits, it applies the call: a hold (reserve, which then
// reports the state after it), or else the charge of cost. When one
// denies, nothing changes, and a limit that would admit reports a peek.
func admit(held []heldLimit, now, cost int64, reserve func(*heldLimit)) []kit.Reply {
	replies := make([]kit.Reply, len(held))
	all := true
	for i := range held {
		replies[i] = held[i].decide(now, cost)
		all = all && replies[i].Allowed
	}
	switch {
	case all && reserve != nil:
		for i := range held {
			reserve(&held[i])
		}
		return settled(held, now)
	case all:
		for i := range held {
			held[i].charge(now, cost, false)
		}
	default:
		for i := range held {
			if replies[i].Allowed {
				replies[i] = held[i].decide(now, 0)
			}
		}
	}
	return replies
}

// settled is every limit's state as a decision of cost 0 sees it.
func settled(held []heldLimit, now int64) []kit.Reply {
	replies := make([]kit.Reply, len(held))
	for i := range held {
		replies[i] = held[i].decide(now, 0)
	}
	return replies
}

// try is the limit's decision of cost at at, writing nothing.
func (h *heldLimit) try(at, cost int64) kit.Reply {
	c := h.lc.c
	c.NowMs, c.Cost, c.Commit, c.Force = at, cost, false, false
	return h.lc.t.Decide(&c)
}

// charge applies the limit's decision of cost at now (forced: charged
// even past the limit).
func (h *heldLimit) charge(now, cost int64, force bool) {
	c := &h.lc.c
	c.NowMs, c.Cost, c.Commit, c.Force = now, cost, true, force
	h.lc.t.Decide(c)
}

// held is the sum of the holds live at t, and the end of the last.
func (h *heldLimit) held(t int64) (sum, last int64) {
	last = t
	for _, x := range h.live {
		if x.end > t {
			sum, last = sum+x.amount, max(last, x.end)
		}
	}
	return sum, last
}

// decide is the limit's decision of cost with its holds counted, which
// writes nothing: admitted when the algorithm admits cost plus the
// holds; a denial's remaining is what is left beside the holds alone,
// its wait counts each hold whole until its end (wait); the reset
// reaches the last hold's end.
func (h *heldLimit) decide(now, cost int64) kit.Reply {
	sum, last := h.held(now)
	r := h.try(now, min(cost+sum, kit.CostMax))
	charged := cost
	if !r.Allowed {
		r.Remaining = 0
		if alone := h.try(now, sum); alone.Allowed {
			r.Remaining = alone.Remaining
		}
		r.RetryAfterMs, charged = h.wait(now, cost), 0
	}
	r.ResetAfterMs = max(h.try(now, charged).ResetAfterMs, last-now)
	return r
}

// wait is the wait until the limit admits cost with the holds live then
// counted: tried at now and at each hold's end, at each the algorithm's
// own wait if it comes before the next end; -1 if never.
func (h *heldLimit) wait(now, cost int64) int64 {
	ends := []int64{now}
	for _, x := range h.live {
		ends = append(ends, x.end)
	}
	slices.Sort(ends)
	ends = slices.Compact(ends)
	for i, at := range ends {
		sum, _ := h.held(at)
		r := h.try(at, min(cost+sum, kit.CostMax))
		switch {
		case r.Allowed:
			return at - now
		case r.RetryAfterMs >= 0 && (i == len(ends)-1 || at+r.RetryAfterMs < ends[i+1]):
			return at + r.RetryAfterMs - now
		}
	}
	return -1
}
