package goimpl

import (
	"slices"
	"sync"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/kit"
)

// A policy's call, in two parts: its plan, what the calls of one policy
// share (worked out once per policy, by BindPolicy or at the policy's
// first call), and the call itself (policyCall), whose buffers are
// pooled, so that a call allocates nothing of its own: each limit's
// kit.Call names its state in a buffer of its own (kit.Call.NameState),
// kept from call to call.

// policyPlan is what every call of a policy needs of it: its limits, the
// identities they count, each limit's table and key infix, and, for a
// bound policy, each limit bound to its table.
type policyPlan struct {
	p      *limitspec.Policy
	limits []limitspec.PolicyLimit
	idents []string
	// first[i] is the first limit that counts limit i's identity (i for
	// the first, and for a constant).
	first []int
	infix []string
	// hlimit is the hash of each limit's name among the holds
	// (holdStore.limitHash).
	hlimit   []uint64
	tables   []policyTable
	noInputs [][]string // each limit's string inputs: none, as many as its algorithm takes
	// err refuses every call: a limit no linked table decides, reported
	// after the checks of the call's input, as the scripts order them.
	err error
	// counts refuses every decision of a policy without holds that holds
	// an in-flight limit (limitcall.CheckCounts), before anything else.
	counts error
}

// policyTable is the table of a policy's limit and, for a bound policy,
// the limit bound to it (nil: the limit is checked at each call).
type policyTable struct {
	t     *table
	bound kit.Bound
}

// maxPlans is how many policies a Limiter keeps the plans of for their
// calls (BindPolicy's are the handles'); a policy beyond them is planned
// at each call.
const maxPlans = 256

// plan returns the plan of p, a policy that CheckRuleOf accepts.
func (l *Limiter) plan(p *limitspec.Policy) *policyPlan {
	if v, ok := l.plans.Load(p); ok {
		return v.(*policyPlan)
	}
	pl, _ := l.newPlan(p, false)
	if l.planned.Load() < maxPlans {
		if _, had := l.plans.LoadOrStore(p, pl); !had {
			l.planned.Add(1)
		}
	}
	return pl
}

// newPlan plans p's calls; with bind, each limit bound to its table (an
// error then refuses the binding, with Check's message).
func (l *Limiter) newPlan(p *limitspec.Policy, bind bool) (*policyPlan, error) {
	pl := &policyPlan{p: p, limits: p.Limits(), idents: p.Identities(), counts: limitcall.CheckCounts(nil, p)}
	for i, lim := range pl.limits {
		pl.first = append(pl.first, i)
		for j := range i {
			if lim.Identity != "" && pl.limits[j].Identity == lim.Identity {
				pl.first[i] = j
				break
			}
		}
		pl.infix = append(pl.infix, ":"+lim.Name)
		pl.hlimit = append(pl.hlimit, l.holds.limitHash(lim.Name))
		var pt policyTable
		t, err := l.table(lim.Limit)
		if err == nil {
			pt.t = t
			pl.noInputs = append(pl.noInputs, make([]string, len(t.alg.Inputs)))
			if bind {
				pt.bound, err = t.Bind(lim.Limit)
			}
		}
		if err != nil {
			pl.err = kit.BadInput("%s.%s: %s", p.Name(), lim.Name, err.Error())
			return pl, pl.err
		}
		pl.tables = append(pl.tables, pt)
	}
	return pl, nil
}

// policyCall is one call of a policy: each limit's call, cost and reply,
// with the locks the call holds. It is pooled: its slices keep their
// arrays from call to call, and each limit's call the buffer it names its
// state in.
type policyCall struct {
	plan    *policyPlan
	calls   []limitCall
	costs   []int64
	replies []kit.Reply
	locks   []shardLock
	// a holding policy's: the store of its holds, and the shards of
	// holds locked (each once, in order).
	store   *holdStore
	hlocked []int
}

// limitCall is one limit of a policy's call: its table, its call and its
// hash tag; for a holding policy, its key's holds (nil: none yet), the
// hash of their key and their shard, and whether the call's id holds on
// it.
type limitCall struct {
	t      *table
	c      kit.Call
	tag    string
	holds  *keyHolds
	hkey   uint64
	hshard int
	held   bool
}

var policyCalls = sync.Pool{New: func() any { return new(policyCall) }}

// newCall returns an empty call of plan, from the pool.
func newCall(plan *policyPlan) *policyCall {
	pc := policyCalls.Get().(*policyCall)
	pc.plan = plan
	return pc
}

// free returns pc to the pool, letting go of what it refers to but the
// buffers of its calls' state names.
func (pc *policyCall) free() {
	for i := range pc.calls {
		lc := &pc.calls[i]
		lc.t, lc.tag, lc.holds, lc.c.Key, lc.c.Inputs = nil, "", nil, "", nil
	}
	pc.plan = nil
	policyCalls.Put(pc)
}

// grow sets every slice of pc to n elements, keeping its array when it
// has room.
func (pc *policyCall) grow(n int) {
	pc.calls = resize(pc.calls, n)
	pc.costs = resize(pc.costs, n)
	pc.replies = resize(pc.replies, n)
}

// resize is s with n elements, its array reused when it has room.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// prepare checks req, a call of pc's policy at now, in the scripts'
// order: the identities, now, the costs (an unknown unit, then each
// cost's domain), then each limit; and prepares each limit's call.
func (pc *policyCall) prepare(req *limitspec.Request, now int64) error {
	plan := pc.plan
	n := len(plan.limits)
	pc.grow(n)
	if err := plan.tagsOf(req.IDs, pc.calls); err != nil {
		return err
	}
	if now < 0 || now > kit.NowMax {
		return kit.BadInput("%s: now_ms must be an integer in [0, %d], got %d", plan.p.Name(), int64(kit.NowMax), now)
	}
	if err := pc.costsOf(req); err != nil {
		return err
	}
	if plan.err != nil {
		return plan.err
	}
	for i := range n {
		if err := pc.prepareLimit(i, now, req.Force); err != nil {
			return err
		}
	}
	return nil
}

// costsOf writes each limit's cost of req into pc.costs, checked as
// limitcall.Costs checks them: req.Cost on every limit when req gives no
// amount by unit.
func (pc *policyCall) costsOf(req *limitspec.Request) error {
	if len(req.Costs) > 0 {
		costs, err := limitcall.Costs(pc.plan.p, *req, pc.costs[:0])
		pc.costs = costs
		return err
	}
	if req.Cost < 0 || req.Cost > kit.CostMax {
		return kit.BadInput("%s: cost must be an integer in [0, %d], got %d", pc.plan.p.Name(), int64(kit.CostMax), req.Cost)
	}
	for i := range pc.costs {
		pc.costs[i] = req.Cost
	}
	return nil
}

// prepareLimit prepares limit i's call at now, in place: a call passed
// to a table escapes to the heap, and pc's array is kept, with the
// buffer in which each call names its state (the table's Prepare sets
// the call's key, hash and parameters).
func (pc *policyCall) prepareLimit(i int, now int64, force bool) error {
	plan := pc.plan
	pt := &plan.tables[i]
	lc := &pc.calls[i]
	lc.t = pt.t
	c := &lc.c // field by field: a kit.Args built apart would be copied
	c.NowMs, c.Cost, c.Inputs, c.Commit, c.Force = now, pc.costs[i], plan.noInputs[i], false, force
	var err error
	if pt.bound != nil {
		err = pt.bound.Prepare(c, plan.infix[i], lc.tag)
	} else {
		err = pt.t.Prepare(c, plan.limits[i].Limit, plan.infix[i], lc.tag)
	}
	if err != nil {
		return kit.BadInput("%s.%s: %s", plan.p.Name(), plan.limits[i].Name, err.Error())
	}
	return nil
}

// tagsOf writes each limit's hash tag for the identity values ids into
// its call: its identity's value (as the limiters store it) or its
// constant. An unknown or missing identity, or a value the scripts
// refuse as a key, is refused, as limitcall.PolicyKeys refuses them.
// Each identity is looked up once; ids is walked only to name an unknown
// one.
func (plan *policyPlan) tagsOf(ids map[string]string, calls []limitCall) error {
	found := 0
	for i := range plan.limits {
		if pl := &plan.limits[i]; pl.Constant == "" && plan.first[i] == i {
			v, ok := ids[pl.Identity]
			if ok {
				found++
			}
			calls[i].tag = v
		}
	}
	if found != len(ids) {
		for id := range ids {
			if !slices.Contains(plan.idents, id) {
				return kit.BadInput("%s: unknown identity %q (identities: %v)", plan.p.Name(), id, plan.idents)
			}
		}
	}
	for i := range plan.limits {
		pl, lc := &plan.limits[i], &calls[i]
		switch {
		case pl.Constant != "":
			lc.tag = pl.Constant
		case plan.first[i] < i:
			lc.tag = calls[plan.first[i]].tag // checked and stored
		default:
			if err := plan.checkTag(pl, ids, lc.tag); err != nil {
				return err
			}
			lc.tag = kit.StoredKey(lc.tag)
		}
	}
	return nil
}

// checkTag refuses the value v of pl's identity when it is missing, or
// no key.
func (plan *policyPlan) checkTag(pl *limitspec.PolicyLimit, ids map[string]string, v string) error {
	name := plan.p.Name()
	switch {
	case v != "" && v[0] == '}':
		return kit.BadInput("%s: identity %s must not begin with '}' (its hash tag would be empty)", name, pl.Identity)
	case v != "":
		return nil
	}
	if _, ok := ids[pl.Identity]; !ok {
		return kit.BadInput("%s: missing identity %s", name, pl.Identity)
	}
	return kit.BadInput("%s: identity %s must not be empty", name, pl.Identity)
}

// shardLock is a table's shard, as a call locks it.
type shardLock struct {
	t     *table
	shard int
}

// lockAll locks the shard of every limit's call, each once, in the order
// of the tables and shards, so that two calls never wait for each other
// in a cycle.
func (pc *policyCall) lockAll() {
	locks := pc.locks[:0]
	if len(pc.calls) == 1 {
		lc := &pc.calls[0]
		pc.locks = append(locks, shardLock{lc.t, lc.t.Shard(&lc.c)})
		lc.t.Lock(pc.locks[0].shard)
		return
	}
	for i := range pc.calls {
		lc := &pc.calls[i]
		k := shardLock{lc.t, lc.t.Shard(&lc.c)}
		j := len(locks)
		for j > 0 && lockBefore(k, locks[j-1]) {
			j--
		}
		if j > 0 && locks[j-1] == k {
			continue // locked for another limit of the call
		}
		locks = append(locks, k)
		copy(locks[j+1:], locks[j:])
		locks[j] = k
	}
	for _, k := range locks {
		k.t.Lock(k.shard)
	}
	pc.locks = locks
}

// lockBefore reports whether x is locked before y.
func lockBefore(x, y shardLock) bool {
	return x.t.order < y.t.order || x.t.order == y.t.order && x.shard < y.shard
}

// unlockAll unlocks what lockAll locked.
func (pc *policyCall) unlockAll() {
	for i := len(pc.locks) - 1; i >= 0; i-- {
		k := &pc.locks[i]
		k.t.Unlock(k.shard)
		k.t = nil
	}
	pc.locks = pc.locks[:0]
}
