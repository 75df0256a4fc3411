package goimpl

import (
	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/kit"
)

// The policy's decision in process memory, as the policy script decides
// it on Redis (docs/semantics.md, "Policies"): every limit decides its
// own cost ("Units"), writing nothing, with every shard the limits touch
// locked; if every limit admits (or the call is forced), each applies its
// decision. A policy of one limit is its algorithm's call: it decides and
// applies at once.

// decidePolicy decides req, a request of plan's policy, into *res (see
// LimitInto): a holding policy's decision counts its holds.
func (l *Limiter) decidePolicy(req *limitspec.Request, plan *policyPlan, res *limitspec.Result) error {
	if plan.p.Holds() {
		return l.runHolds(req, plan, "decide", "", 0, res)
	}
	if plan.counts != nil {
		return plan.counts
	}
	now := l.nowMs(req.Now)
	pc := newCall(plan)
	defer pc.free()
	if err := pc.prepare(req, now); err != nil {
		return err
	}
	if req.ID != "" {
		return l.policyOnce(req, pc, now, res)
	}
	pc.decide(req.Force, res)
	return nil
}

// decide decides pc's prepared call (forced or not) into *res. A single
// limit decides and writes at once, as its algorithm alone does, with
// its one shard locked.
func (pc *policyCall) decide(force bool, res *limitspec.Result) {
	if len(pc.calls) == 1 {
		lc := &pc.calls[0]
		lc.c.Commit = true
		shard := lc.t.Shard(&lc.c)
		lc.t.Lock(shard)
		pc.replies[0] = lc.t.Decide(&lc.c)
		lc.t.Unlock(shard)
	} else {
		pc.lockAll()
		pc.decideAll(force)
		pc.unlockAll()
	}
	pc.compose(force, res)
}

// decideAll decides every limit, writing nothing, then applies every
// decision when all admit; a limit that would admit a denied request
// reports a peek. With force, every limit writes as its forced call
// does, whatever the others decide: limits never share state, so each
// may decide and write in turn.
func (pc *policyCall) decideAll(force bool) {
	calls, replies := pc.calls, pc.replies
	for i := range calls {
		c := &calls[i].c
		c.Commit = force
		replies[i] = calls[i].t.Decide(c)
	}
	if force {
		return // each limit has written already
	}
	all := allAdmit(replies)
	for i := range calls {
		lc := &calls[i]
		switch {
		case all:
			lc.c.Commit = true
			lc.t.Decide(&lc.c)
		case replies[i].Allowed:
			lc.c.Commit, lc.c.Cost = false, 0
			replies[i] = lc.t.Decide(&lc.c)
		}
	}
}

// compose writes the policy's result of its limits' replies to *res
// (docs/semantics.md, "Policies"): the binding limit's, its delay the
// longest when admitted or forced, and each limit's own, its unit named.
// The Limits reuse the array of res.Limits when it has room.
func (pc *policyCall) compose(force bool, res *limitspec.Result) {
	replies, limits := pc.replies, pc.plan.limits
	b := 0
	if len(replies) > 1 {
		b = binding(replies)
	}
	out := resize(res.Limits, len(replies))
	var delay int64
	for i := range replies {
		lr, pl := &out[i], &limits[i]
		lr.Name, lr.Unit, lr.Limit = pl.Name, pl.Unit, pl.Limit
		limitcall.WriteReply(lr, &replies[i])
		delay = max(delay, replies[i].DelayMs)
	}
	if !replies[b].Allowed && !force {
		delay = 0 // denied: a denial waits for nothing
	}
	// limitcall.Result of the binding limit's reply, whose part holds its
	// fields as a result's (field by field: no reply nor result copied)
	*res = limitspec.Result{Allowed: out[b].Allowed, RetryAfter: out[b].RetryAfter, Delay: limitcall.Millis(delay), Limits: out, Binding: b}
}

func allAdmit(replies []kit.Reply) bool {
	for i := range replies {
		if !replies[i].Allowed {
			return false
		}
	}
	return true
}

// binding is the index of the binding limit: when denied, the longest
// wait (-1, never, the longest); when admitted, the least remaining
// relative to its limit; ties to the first.
func binding(res []kit.Reply) int {
	all := allAdmit(res)
	b := -1
	for i := range res {
		r := &res[i]
		switch {
		case all:
			if b < 0 || ratioLess(r.Remaining, r.Limit, res[b].Remaining, res[b].Limit) {
				b = i
			}
		case !r.Allowed && (b < 0 || longer(r.RetryAfterMs, res[b].RetryAfterMs)):
			b = i
		}
	}
	return b
}

// ratioLess reports whether a/b < c/d exactly, for a, c >= 0 and
// b, d >= 1.
func ratioLess(a, b, c, d int64) bool {
	for {
		qa, qc := a/b, c/d
		if qa != qc {
			return qa < qc
		}
		a, c = a-qa*b, c-qc*d
		if a == 0 || c == 0 {
			return a == 0 && c != 0
		}
		a, b, c, d = d, c, b, a // a/b < c/d when d/c < b/a
	}
}

// longer reports whether the wait a is longer than b, where -1 is never.
func longer(a, b int64) bool { return a != b && (a == -1 || (b != -1 && a > b)) }
