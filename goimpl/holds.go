package goimpl

import (
	"context"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/kit"
)

// Holds (docs/semantics.md, "Holds") in process memory, as the holds
// script keeps them on Redis, and as the oracle's HoldingPolicy states
// them: each limit of a holding policy counts its holds (holdstore.go)
// around its own decision, in its own unit, the same for every
// algorithm. A call locks the shards of its limits' holds (in order of
// their index), then every state shard its limits touch (in lockAll's
// order), so that it is atomic over all the policy's limits; every call
// that locks both kinds locks them in that order, and a call of a limit
// or of a policy without holds locks state shards alone, so that no two
// calls wait for each other in a cycle.

// Hold runs h on the holds of req.Policy, a holding policy, for req.IDs
// (see limitspec.Holder). Its errors match limitspec.ErrBadInput or
// limitspec.ErrNoHold, or are ctx's.
func (l *Limiter) Hold(ctx context.Context, req limitspec.Request, h limitspec.Hold) (limitspec.Result, error) {
	var res limitspec.Result
	if err := l.HoldInto(ctx, req, h, &res); err != nil {
		return limitspec.Result{}, err
	}
	return res, nil
}

// HoldInto runs h as Hold does and writes its result to *res, reusing
// the array of res.Limits as LimitInto does; on an error *res is left as
// it was.
func (l *Limiter) HoldInto(ctx context.Context, req limitspec.Request, h limitspec.Hold, res *limitspec.Result) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := limiters.Defaults(&req, limiters.TakesAmount(h.Op)); err != nil {
		return err
	}
	if err := checkHolding(&req); err != nil {
		return err
	}
	return l.runHolds(&req, l.plan(req.Policy), h.Op.String(), h.ID, h.Ms(), res)
}

// checkHolding refuses a call on holds whose request names no holding
// policy.
func checkHolding(req *limitspec.Request) error {
	if err := limitcall.CheckRuleOf(req.Limit, req.Policy); err != nil {
		return err
	}
	return limitcall.CheckHolding(req.Policy)
}

// runHolds runs op on req's holding policy, planned by plan, into *res:
// a decision (op "decide"), or an operation on the hold id, checked in
// the scripts' order (see limitcall.CheckHoldOp). A refused call changes
// nothing; any other first drops, on each of its limits, the holds that
// ended at its time.
func (l *Limiter) runHolds(req *limitspec.Request, plan *policyPlan, op, id string, holdMs int64, res *limitspec.Result) error {
	p := plan.p
	if req.Force || req.ID != "" {
		return kit.BadInput("%s: a holding policy takes no Force nor ID: a commit charges work done, and a hold's id makes its calls idempotent", p.Name())
	}
	now := l.nowMs(req.Now)
	pc := newCall(plan)
	defer pc.free()
	if err := pc.prepare(req, now); err != nil {
		return err
	}
	if op != "decide" { // a decision's op, id and hold_ms are its own
		if err := limitcall.CheckHoldOp(p.Name(), op, id, pc.costs, holdMs, requestIdMax, holdMsMax); err != nil {
			return err
		}
	}
	pc.lockHolds(&l.holds)
	pc.lockAll()
	err := pc.runOp(op, id, now, holdMs, res)
	pc.unlockAll()
	if visit := pc.unlockHolds(now, err == nil); visit >= 0 {
		l.holds.visit(visit, now)
	}
	return err
}

// lockHolds finds each limit's key of holds in s and locks their shards,
// each once, in order of their index; a limit's holds are nil when its
// key has none.
func (pc *policyCall) lockHolds(s *holdStore) {
	pc.store = s
	locked := pc.hlocked[:0]
	for i := range pc.calls {
		lc := &pc.calls[i]
		lc.hkey = s.keyHash(pc.plan.hlimit[i], lc.tag)
		idx := index(lc.hkey)
		lc.hshard = idx
		j := len(locked)
		for j > 0 && idx < locked[j-1] {
			j--
		}
		if j > 0 && locked[j-1] == idx {
			continue // locked for another limit of the call
		}
		locked = append(locked, 0)
		copy(locked[j+1:], locked[j:])
		locked[j] = idx
	}
	for _, idx := range locked {
		s.shards[idx].mu.Lock()
	}
	pc.hlocked = locked
	for i := range pc.calls {
		lc := &pc.calls[i]
		lc.holds = s.shards[lc.hshard].get(pc.holdKey(i), lc.hkey)
	}
}

// holdKey names limit i's holds.
func (pc *policyCall) holdKey(i int) holdKey {
	return holdKey{limit: pc.plan.limits[i].Name, tag: pc.calls[i].tag}
}

// unlockHolds deletes the keys of the call left with nothing and notes
// when the others expire, then unlocks the shards. After a call that
// took effect (walked), every walkEvery calls of a shard walk a batch of
// its keys; it then returns the index of another shard to walk, else -1.
func (pc *policyCall) unlockHolds(now int64, walked bool) int {
	s, visit := pc.store, -1
	for i := range pc.calls {
		lc := &pc.calls[i]
		s.shards[lc.hshard].settle(lc.holds)
	}
	for j := len(pc.hlocked) - 1; j >= 0; j-- {
		idx := pc.hlocked[j]
		sh := &s.shards[idx]
		if walked {
			if sh.calls++; sh.calls%walkEvery == 0 {
				sh.walk(now, walkBatch)
				visit = (idx + 1 + int(sh.calls/walkEvery)%(holdShards-1)) % holdShards
			}
		}
		sh.mu.Unlock()
	}
	pc.store = nil
	return visit
}

// holdAt returns limit i's holds, made empty if its key had none.
func (pc *policyCall) holdAt(i int) *keyHolds {
	lc := &pc.calls[i]
	if lc.holds == nil {
		lc.holds = pc.store.shards[lc.hshard].add(pc.holdKey(i), lc.hkey)
	}
	return lc.holds
}

// sweep drops, on every limit, the holds that ended at now and the
// remembered ends REQUEST_MS past their reach.
func (pc *policyCall) sweep(now int64) {
	for i := range pc.calls {
		pc.calls[i].holds.sweep(now)
	}
}

// runOp runs op, its input checked, with every lock held.
func (pc *policyCall) runOp(op, id string, now, holdMs int64, res *limitspec.Result) error {
	switch op {
	case "decide":
		pc.sweep(now)
		pc.admit(now, "", 0)
	case "reserve":
		if err := pc.reserve(id, now, holdMs); err != nil {
			return err
		}
	default:
		return pc.settle(op, id, now, holdMs, res)
	}
	pc.compose(false, res)
	return nil
}

// reserve holds each limit's cost for id until now + holdMs, when every
// limit admits a decision of its cost with its holds counted; it charges
// nothing. An id that holds its cost on every limit already is a retry:
// nothing changes, and the replies are the state. An id that holds
// otherwise (another amount, or on some limits only) is refused.
func (pc *policyCall) reserve(id string, now, holdMs int64) error {
	replay, some := true, -1
	for i := range pc.calls {
		x, held := pc.calls[i].holds.hold(id, now)
		replay = replay && held && x.amount == pc.costs[i]
		if held && some < 0 {
			some = i
		}
	}
	switch {
	case replay:
		pc.sweep(now)
		pc.settled(now)
		return nil
	case some >= 0:
		return pc.heldOtherwise(id, now, some)
	}
	pc.sweep(now)
	if pc.admit(now, id, now+holdMs) {
		// The state after the reserve, as a decision of cost 0 with the
		// holds counted sees it (settled), tries what admit tried: each
		// limit's cost and the holds before it, on the state the reserve
		// left as it was. Only the reset differs: the new holds count
		// whole until their end.
		for i := range pc.calls {
			pc.replies[i].ResetAfterMs = pc.reset(i, now, 0)
		}
	}
	return nil
}

// heldOtherwise is the refusal of a reserve of id, which holds on limit
// some, but not its cost on every limit: the first limit, in order, that
// holds another amount or nothing.
func (pc *policyCall) heldOtherwise(id string, now int64, some int) error {
	plan := pc.plan
	for i := range pc.calls {
		x, held := pc.calls[i].holds.hold(id, now)
		switch {
		case held && x.amount != pc.costs[i]:
			return limitcall.HeldOtherwise(plan.p.Name(), id, plan.limits[i].Name, x.amount, pc.costs[i])
		case !held:
			return limitcall.HeldPartly(plan.p.Name(), id, plan.limits[some].Name, plan.limits[i].Name)
		}
	}
	panic("goimpl: heldOtherwise of an id that holds its costs everywhere")
}

// settle runs a commit, release or renew of id into *res: on every limit
// id holds on, a commit or a release ends the hold (a commit then
// charges every limit its cost, forced: work already done), a renew
// moves its end to now + holdMs; the replies are the state after it. A
// commit or release is remembered on each limit it ended a hold on, its
// reply with the first. When id holds on no limit, a commit or release
// that ended its holds within reach with the same costs gets that call's
// reply again, changing nothing; any other call is refused (NOHOLD).
func (pc *policyCall) settle(op, id string, now, holdMs int64, res *limitspec.Result) error {
	any := false
	for i := range pc.calls {
		lc := &pc.calls[i]
		_, lc.held = lc.holds.hold(id, now)
		any = any || lc.held
	}
	if !any {
		if !pc.replay(op, id, now) {
			return limitcall.NoHold(pc.plan.p.Name(), id)
		}
		pc.sweep(now)
		pc.compose(false, res)
		return nil
	}
	pc.sweep(now)
	for i := range pc.calls {
		lc := &pc.calls[i]
		switch {
		case lc.held && op == "renew":
			x, _ := lc.holds.find(id)
			lc.holds.put(id, x.amount, now+holdMs)
		case lc.held:
			lc.holds.unhold(id)
		}
		if op == "commit" && pc.costs[i] > 0 {
			pc.charge(i, now, true)
		}
	}
	pc.settled(now)
	pc.compose(false, res)
	if op != "renew" {
		pc.remember(op, id, now)
	}
	return nil
}

// remember keeps, on every limit id held on, the end a commit or release
// made, with the call's replies on the first.
func (pc *policyCall) remember(op, id string, now int64) {
	kept, h := false, pc.store.idHash(id)
	for i := range pc.calls {
		if lc := &pc.calls[i]; lc.held {
			e := endedHold{id: id, hash: uint32(h), commit: op == "commit", amount: pc.costs[i], until: now + requestMs, kept: !kept}
			if !kept {
				e.reply = keepReplies(pc.replies)
			}
			lc.holds.ended.put(e)
			kept = true
		}
	}
}

// replay sets the replies to those of a commit or release of id that
// ended its holds within reach, when op and the costs repeat it on every
// limit it ended a hold on, and reports whether it did.
func (pc *policyCall) replay(op, id string, now int64) bool {
	if op == "renew" {
		return false
	}
	var kept keptReply
	found, h := false, pc.store.idHash(id)
	for i := range pc.calls {
		e, ok := pc.calls[i].holds.endedAt(id, h, now)
		switch {
		case !ok:
		case e.commit != (op == "commit") || e.amount != pc.costs[i]:
			return false
		case !found && e.kept:
			kept, found = e.reply, true
		}
	}
	return found && kept.copyTo(pc.replies) // none, or another policy's
}

// copyResult writes a copy of r to *res, reusing the array of res.Limits.
func copyResult(res, r *limitspec.Result) {
	limits := append(res.Limits[:0], r.Limits...)
	*res = *r
	res.Limits = limits
}

// admit decides each limit's cost with its holds counted and, when every
// limit admits, applies the call: a hold of each limit's cost for id
// until end (a reserve), or, with no id, the charge of each limit's cost
// (a decision). When one denies, nothing changes, and a limit that would
// admit reports a decision of cost 0 instead. It reports whether every
// limit admitted.
func (pc *policyCall) admit(now int64, id string, end int64) bool {
	if id == "" && len(pc.calls) == 1 && pc.calls[0].holds.sum() == 0 {
		// a single limit with no hold decides as its algorithm alone: an
		// admission is charged at once, a denial decided again below
		if pc.replies[0] = pc.charge(0, now, false); pc.replies[0].Allowed {
			return true
		}
	}
	all := true
	for i := range pc.calls {
		pc.replies[i] = pc.withHolds(i, now, pc.costs[i])
		all = all && pc.replies[i].Allowed
	}
	for i := range pc.calls {
		switch {
		case all && id != "":
			// id names its new hold alone: the end a commit or release
			// made of an earlier one is forgotten
			kh := pc.holdAt(i)
			kh.ended.forget(id, pc.store.idHash(id))
			kh.put(id, pc.costs[i], end)
		case all && pc.costs[i] > 0:
			pc.charge(i, now, false)
		case !all && pc.replies[i].Allowed:
			pc.replies[i] = pc.withHolds(i, now, 0)
		}
	}
	return all
}

// settled sets every limit's reply to its state, as a decision of cost 0
// with its holds counted sees it.
func (pc *policyCall) settled(now int64) {
	for i := range pc.calls {
		pc.replies[i] = pc.withHolds(i, now, 0)
	}
}

// try is limit i's decision of cost at at, writing nothing.
func (pc *policyCall) try(i int, at, cost int64) kit.Reply {
	lc := &pc.calls[i]
	c := &lc.c
	c.NowMs, c.Cost, c.Commit, c.Force = at, cost, false, false
	return lc.t.Decide(c)
}

// charge applies limit i's decision of its cost at now (forced: charged
// even past the limit), and returns the algorithm's reply.
func (pc *policyCall) charge(i int, now int64, force bool) kit.Reply {
	lc := &pc.calls[i]
	c := &lc.c
	c.NowMs, c.Cost, c.Commit, c.Force = now, pc.costs[i], true, force
	return lc.t.Decide(c)
}

// withHolds is limit i's decision of cost with its holds counted, which
// writes nothing: admitted when the algorithm admits cost plus the
// holds; a denial's remaining is what is left beside the holds alone,
// its wait counts each hold whole until its end (wait); the reset
// reaches the last hold's end. The holds kept are those live at now: the
// call has swept them.
func (pc *policyCall) withHolds(i int, now, cost int64) kit.Reply {
	kh := pc.calls[i].holds
	sum := kh.sum()
	r := pc.try(i, now, min(cost+sum, kit.CostMax))
	if sum == 0 && r.Allowed {
		return r // its reset is its own
	}
	charged := cost
	if !r.Allowed {
		r.Remaining = 0
		if alone := pc.try(i, now, sum); alone.Allowed {
			r.Remaining = alone.Remaining
		}
		r.RetryAfterMs, charged = pc.wait(i, now, cost, r.Limit), 0
	}
	r.ResetAfterMs = pc.reset(i, now, charged)
	return r
}

// reset is the reset of limit i's decision with its holds counted, of
// which charged is charged: the algorithm's after charged, or the last
// hold's end if later.
func (pc *policyCall) reset(i int, now, charged int64) int64 {
	return max(pc.try(i, now, charged).ResetAfterMs, pc.calls[i].holds.last(now)-now)
}

// wait is the wait until limit i admits cost with the holds live then
// counted: tried at now and at each hold's end, at each the algorithm's
// own wait if it comes before the next end; -1 if never. The ends at
// which cost and the holds live then exceed quota (the most the limit
// ever admits, which no algorithm admits more than) are passed without a
// try: the algorithm would deny, and never admit from there.
func (pc *policyCall) wait(i int, now, cost, quota int64) int64 {
	var w holdWalk
	if kh := pc.calls[i].holds; kh != nil {
		w = walk(&kh.live)
	}
	at := now
	for {
		next, more := w.next()
		if cost+w.held <= quota {
			r := pc.try(i, at, min(cost+w.held, kit.CostMax))
			switch {
			case r.Allowed:
				return at - now
			case r.RetryAfterMs >= 0 && (!more || at+r.RetryAfterMs < next):
				return at + r.RetryAfterMs - now
			}
		}
		if !more {
			return -1
		}
		at = w.advance(quota - cost)
	}
}
