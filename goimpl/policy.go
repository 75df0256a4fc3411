package goimpl

import (
	"cmp"
	"slices"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/kit"
)

// The policy's decision in process memory, as the policy script decides
// it on Redis (docs/semantics.md, "Policies"): every limit decides,
// writing nothing, with every shard the limits touch locked; if every
// limit admits (or the call is forced), each applies its decision.

// limitCall is one limit of a policy's call: its table and its call.
type limitCall struct {
	t *table
	c kit.Call
}

// policyTable is the table of a policy's limit and, for a bound policy,
// the limit bound to it (nil: the limit is checked at each call).
type policyTable struct {
	t     *table
	bound kit.Bound
}

// preparePolicy checks a policy's call and prepares each limit's: the
// identities (each a key), the time and the cost, then each limit, by
// its table in tables (a bound policy's), or found now when tables is
// nil. It returns the limits and their calls, or the first refusal.
func (l *Limiter) preparePolicy(req limitspec.Request, now int64, tables []policyTable) ([]limitspec.PolicyLimit, []limitCall, error) {
	p := req.Policy
	limits := p.Limits()
	keys, err := limitcall.PolicyKeys(p, req.IDs)
	if err != nil {
		return nil, nil, err
	}
	if now < 0 || now > kit.NowMax {
		return nil, nil, kit.BadInput("%s: now_ms must be an integer in [0, %d], got %d", p.Name(), int64(kit.NowMax), now)
	}
	if req.Cost < 0 || req.Cost > kit.CostMax {
		return nil, nil, kit.BadInput("%s: cost must be an integer in [0, %d], got %d", p.Name(), int64(kit.CostMax), req.Cost)
	}
	calls := make([]limitCall, len(limits))
	for i, pl := range limits {
		var pt policyTable
		if tables != nil {
			pt = tables[i]
		} else if pt.t, err = l.table(pl.Limit); err != nil {
			return nil, nil, kit.BadInput("%s.%s: %s", p.Name(), pl.Name, err.Error())
		}
		args := kit.Args{NowMs: now, Cost: req.Cost, Force: req.Force, Inputs: make([]string, len(pt.t.alg.Inputs))}
		// Prepared in place: a call passed to a table escapes to the heap.
		calls[i] = limitCall{t: pt.t, c: kit.Call{Args: args}}
		if pt.bound != nil {
			err = pt.bound.Prepare(&calls[i].c, limiters.KeyInfix(pl), keys[i])
		} else {
			err = pt.t.Prepare(&calls[i].c, pl.Limit, limiters.KeyInfix(pl), keys[i])
		}
		if err != nil {
			return nil, nil, kit.BadInput("%s.%s: %s", p.Name(), pl.Name, err.Error())
		}
	}
	return limits, calls, nil
}

// decidePolicy decides a policy's request into *res (see LimitInto), by
// the tables of its limits (nil: found at this call).
func (l *Limiter) decidePolicy(req limitspec.Request, now int64, tables []policyTable, res *limitspec.Result) error {
	limits, calls, err := l.preparePolicy(req, now, tables)
	if err != nil {
		return err
	}
	unlock := lockAll(calls)
	replies := decideAll(calls, req.Force)
	unlock()
	compose(limits, replies, req.Force, res)
	return nil
}

// compose writes the policy's result of its limits' replies to *res
// (docs/semantics.md, "Policies"): the binding limit's, its delay the
// longest when admitted or forced.
func compose(limits []limitspec.PolicyLimit, replies []kit.Reply, force bool, res *limitspec.Result) {
	b := binding(replies)
	decision := replies[b]
	decision.DelayMs = 0 // denied: a denial waits for nothing
	if decision.Allowed || force {
		for _, r := range replies {
			decision.DelayMs = max(decision.DelayMs, r.DelayMs)
		}
	}
	out := res.Limits[:0]
	for i, r := range replies {
		out = append(out, limitcall.LimitResult(limits[i].Name, limits[i].Limit, r))
	}
	*res = limitcall.Result(decision, b, out)
}

// lockAll locks the shard of every call, each once, in the order of the
// tables and shards, so that two calls never wait for each other in a
// cycle; it returns the unlocking.
func lockAll(calls []limitCall) func() {
	type lock struct {
		t     *table
		shard int
	}
	locks := make([]lock, len(calls))
	for i := range calls {
		lc := &calls[i]
		locks[i] = lock{lc.t, lc.t.Shard(&lc.c)}
	}
	slices.SortFunc(locks, func(x, y lock) int {
		return cmp.Or(cmp.Compare(x.t.order, y.t.order), cmp.Compare(x.shard, y.shard))
	})
	locks = slices.CompactFunc(locks, func(x, y lock) bool { return x == y })
	for _, k := range locks {
		k.t.Lock(k.shard)
	}
	return func() {
		for i := len(locks) - 1; i >= 0; i-- {
			locks[i].t.Unlock(locks[i].shard)
		}
	}
}

// decideAll decides every limit, writing nothing, then applies every
// decision when all admit; a limit that would admit a denied request
// reports a peek. With force, every limit writes as its forced call
// does, whatever the others decide: limits never share state, so each
// may decide and write in turn.
func decideAll(calls []limitCall, force bool) []kit.Reply {
	replies := make([]kit.Reply, len(calls))
	for i := range calls {
		c := &calls[i].c
		c.Commit = force
		replies[i] = calls[i].t.Decide(c)
	}
	all := allAdmit(replies)
	for i := range calls {
		lc := &calls[i]
		switch {
		case force: // each limit has written already
		case all:
			lc.c.Commit = true
			lc.t.Decide(&lc.c)
		case replies[i].Allowed:
			lc.c.Commit, lc.c.Cost = false, 0
			replies[i] = lc.t.Decide(&lc.c)
		}
	}
	return replies
}

func allAdmit(replies []kit.Reply) bool {
	for _, r := range replies {
		if !r.Allowed {
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
	for i, r := range res {
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
