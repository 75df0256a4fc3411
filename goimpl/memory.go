// Package goimpl decides rate limits in process memory, exactly as the
// Lua scripts of package redislimit decide them on Redis: the same
// algorithms, generated from the same spec, held to the same vectors.
//
//	lim, err := goimpl.New(goimpl.Options{})
//	...
//	defer lim.Close()
//	res, err := lim.Allow(ctx, "alice", limitspec.GCRA{Burst: 20, Rate: 10, Period: time.Second})
//
// One Limiter decides any limit and any policy, per call; tenants on
// different plans share it. Two limits that differ in a parameter their
// state is measured in (a duration, a rate) never share state; two that
// differ only in amounts share it, as a limit changing between calls
// (docs/semantics.md, "Keys"). A policy is decided all or nothing, with
// every shard its limits touch locked at once.
//
// A limit known in advance can be bound once: Bind checks it and returns
// a Bound, which decides keys by it on the same states as the Limiter,
// checking only each request's key, time, cost and inputs (BindPolicy
// does the same for a policy):
//
//	perUser, err := lim.Bind(limitspec.GCRA{Burst: 20, Rate: 10, Period: time.Second})
//	...
//	res, err := perUser.Allow(ctx, "alice") // a limitspec.LimitResult
//
// A process alone, or the fallback of package fallback while Redis is
// unavailable, decides with it; each process then limits on its own.
//
// # Memory and time
//
// Keys are spread over 64 independently locked shards per algorithm. A
// state is found by the request's key and the parameters the state is
// measured in (those its Redis keys name), compared as they are: no key
// name is built. Each table validates the first few distinct limits it
// decides once. A decision on an existing key whose state is a few
// integers (fixed_window, sliding_window, token_bucket, gcra,
// leaky_bucket) allocates only its result's Limits, and nothing when it
// is decided into a Result the caller reuses (LimitInto) with a limit
// held in a limitspec.Limit, nor through a Bound, whose result is a
// LimitResult; a state with entries allocates as its entries grow. A
// Bound's decision also spares the Limiter's per-call work on the limit:
// converting it from the interface, finding its algorithm's table and
// looking up whether it was validated.
//
// A request without a Now is decided at the limiter's clock: Options.Now,
// or else the system's wall clock, read as time.Now reads it but with
// one clock read where time.Now makes two (the wall and the monotonic
// clocks): the Limiter reads both once a second, and the monotonic one
// alone in between. They advance alike (what slews the wall clock slews the
// monotonic one), so the readings are time.Now's but after a step of the
// wall clock (set by hand, by NTP at start-up, a leap second), which is
// followed within a second.
//
// A key's state carries the TTL the script would give it in Redis, on
// the caller's clock (the request's Now, or the limiter's clock), and
// once that has run out it reads as absent; expired keys are reclaimed a
// few at a time, by the calls and by a background sweeper per algorithm,
// so that no decision waits for a sweep and memory follows the keys
// active within about one TTL. The sweeper reckons the caller's time from
// the latest call's and the process's monotonic clock: a caller whose
// times run slower than the wall clock (a test replaying old times)
// should make its limiter with Options.NoSweeper. Close stops the
// sweepers (the Limiter goes on deciding, the calls alone reclaiming);
// they also end by themselves once their limiter has been garbage
// collected. The holds of holding policies (limitspec.Holder; holds.go)
// are kept per limit and key in shards of their own, each key's in order
// of their ends: a call's work does not grow with the holds live on its
// keys, a key's holds are dropped as they end, and its memory is let go
// of once none is left (holdstore.go).
package goimpl

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/kit"
)

// Limiter decides limits and policies in process memory. It implements
// limitspec.Limiter, limitspec.Resetter and limitspec.Checker, and is
// safe for concurrent use. Make one with New.
type Limiter struct {
	clock     func() time.Time // Options.Now; nil: sys
	sys       systemClock
	mu        sync.Mutex // serializes the creation of tables, and Close
	noSweeper bool       // Options.NoSweeper, or closed; under mu
	// tables are the tables made so far, one per algorithm decided, in
	// the order they were made; a new table replaces the slice.
	tables atomic.Pointer[[]*table]
	// requests are the results of charged requests with an id.
	requests requests
	// holds are the holds of holding policies (holdstore.go).
	holds holdStore
	// plans are the plans of the policies decided (plan.go), at most
	// maxPlans of them (planned).
	plans   sync.Map
	planned atomic.Int32
}

// table is the state of one algorithm's limits, its name in results,
// and its place in the order in which a policy locks shards.
type table struct {
	kit.Table
	alg   kit.TableAlgorithm
	name  string
	order int
}

// Options configure a Limiter. The zero value is the default: the
// system's wall clock, and a background sweeper per algorithm decided.
type Options struct {
	// Now is the clock of requests without a Now; nil means the system's
	// wall clock (time.Now's, read as the Limiter reads it: see "Memory
	// and time"). Tests set it.
	Now func() time.Time
	// NoSweeper reclaims expired keys by the times of the calls alone,
	// with no background sweeper: for callers whose times do not follow
	// the wall clock, such as tests that replay old times. False (the
	// default) runs a sweeper per algorithm decided, until Close.
	NoSweeper bool
}

// New returns a Limiter configured by opts, each zero field standing for
// its default. Every Options is valid, so the error is nil: it is there
// so that New reads as every constructor of the module does, whose
// refusals match limitspec.ErrMisconfigured.
func New(opts Options) (*Limiter, error) {
	return &Limiter{clock: opts.Now, noSweeper: opts.NoSweeper}, nil
}

// Close stops the Limiter's background sweepers and waits for them to
// end; it returns nil, and calling it again does nothing. The Limiter
// goes on deciding after Close, with every state it holds, as one made
// with NoSweeper: the calls alone reclaim expired keys, and no table made
// later runs a sweeper. A Limiter that is dropped without Close has its
// sweepers end once it has been garbage collected.
func (l *Limiter) Close() error {
	l.mu.Lock()
	l.noSweeper = true
	tables := l.made()
	l.mu.Unlock()
	for _, t := range tables {
		t.StopSweeper()
	}
	return nil
}

// Allow decides a request of cost 1 for key by limit.
func (l *Limiter) Allow(ctx context.Context, key string, limit limitspec.Limit) (res limitspec.Result, err error) {
	if err = l.limitInto(ctx, &limitspec.Request{Key: key, Limit: limit, Cost: 1}, &res); err != nil {
		return limitspec.Result{}, err
	}
	return res, nil
}

// Limit decides req (see limitspec.Limiter): by req.Limit for req.Key, or
// by req.Policy for req.IDs. Its errors match limitspec.ErrBadInput, or
// are ctx's. Its result's Limits are a new slice (LimitInto reuses one).
func (l *Limiter) Limit(ctx context.Context, req limitspec.Request) (res limitspec.Result, err error) {
	if err = l.limitInto(ctx, &req, &res); err != nil {
		return limitspec.Result{}, err
	}
	return res, nil
}

// LimitInto decides req as Limit does and writes its result to *res,
// leaving it as it was on an error. The result's Limits reuse the array
// of res.Limits (they are appended to res.Limits[:0]), so that a caller
// that decides into one Result again and again allocates nothing for it:
// a limit's decision on an existing key whose state is a few integers
// then allocates nothing at all, provided req.Limit holds a pointer or a
// limit already converted to limitspec.Limit (a limit struct converted
// at each call is copied to the heap, since the result refers to it).
// Whatever refers to the Limits of a Result that is decided into again
// sees the new decision's.
func (l *Limiter) LimitInto(ctx context.Context, req limitspec.Request, res *limitspec.Result) error {
	return l.limitInto(ctx, &req, res)
}

// limitInto is LimitInto, req passed where it is (Allow, Limit and
// LimitInto would each copy it again).
func (l *Limiter) limitInto(ctx context.Context, req *limitspec.Request, res *limitspec.Result) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := limiters.Defaults(req, true); err != nil {
		return err
	}
	if err := limitcall.CheckRuleOf(req.Limit, req.Policy); err != nil {
		return err
	}
	if req.Policy != nil {
		return l.decidePolicy(req, l.plan(req.Policy), res)
	}
	if limitspec.InFlight(req.Limit) {
		return limitcall.CheckCounts(req.Limit, nil)
	}
	if err := limitcall.CheckLimitCosts(*req); err != nil {
		return err
	}
	now := l.nowMs(req.Now)
	if req.ID != "" {
		return l.limitOnce(req, now, res)
	}
	return l.decide(req, now, res)
}

// decide decides req, a request of a limit, at now into *res.
func (l *Limiter) decide(req *limitspec.Request, now int64, res *limitspec.Result) error {
	t, err := l.table(req.Limit)
	if err != nil {
		return err
	}
	args := kit.Args{NowMs: now, Cost: req.Cost, Inputs: inputs(t.alg.Inputs, req.Inputs), Commit: true, Force: req.Force}
	r, err := t.Limit(args, req.Limit, kit.StoredKey(req.Key))
	if err != nil {
		return err
	}
	writeResult(res, t.name, req.Limit, &r)
	return nil
}

// writeResult writes a limit's decision r to *res, its one LimitResult in
// the array of res.Limits if it has room, else in a new one: field by
// field, where they are (a LimitResult built apart and copied would cost
// about a fifth of a decision).
func writeResult(res *limitspec.Result, name string, lim limitspec.Limit, r *kit.Reply) {
	out := res.Limits[:0]
	if cap(out) == 0 {
		out = make([]limitspec.LimitResult, 1)
	} else {
		out = out[:1]
	}
	lr := &out[0]
	lr.Name, lr.Limit = name, lim
	limitcall.WriteReply(lr, r)
	*res = limitspec.Result{Allowed: lr.Allowed, RetryAfter: lr.RetryAfter, Delay: lr.Delay, Limits: out}
}

// Reset deletes the state of req.Key under req.Limit, or of every limit
// of req.Policy for req.IDs, so that the next request is decided as on a
// fresh key. A holding policy's holds stay (docs/semantics.md, "Holds"):
// work in flight keeps its hold until it commits, releases or ends.
func (l *Limiter) Reset(ctx context.Context, req limitspec.Request) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := limitcall.CheckRuleOf(req.Limit, req.Policy); err != nil {
		return err
	}
	if req.Policy != nil {
		req.Cost, req.Costs = 0, nil // a reset takes no cost
		pc := newCall(l.plan(req.Policy))
		defer pc.free()
		if err := pc.prepare(&req, 0); err != nil {
			return err
		}
		for i := range pc.calls {
			pc.calls[i].t.Reset(&pc.calls[i].c)
		}
		return nil
	}
	t, c, err := l.prepare(req.Limit, "", kit.StoredKey(req.Key))
	if err != nil {
		return err
	}
	t.Reset(c)
	return nil
}

// prepare checks a call of lim for key (in a policy, with its limit's key
// infix) and names its state, the time and the cost left at 0.
func (l *Limiter) prepare(lim limitspec.Limit, infix, key string) (*table, *kit.Call, error) {
	t, err := l.table(lim)
	if err != nil {
		return nil, nil, err
	}
	c := &kit.Call{Args: kit.Args{Inputs: make([]string, len(t.alg.Inputs))}}
	if err := t.Prepare(c, lim, infix, key); err != nil {
		return nil, nil, err
	}
	return t, c, nil
}

// View runs a read-only view of req.Key's state under req.Limit, by name
// (meta_window's "entries": who used the limit), at req.Now or the
// limiter's clock, and returns its entries, each its fields in order
// (int64s, and a string where the entry holds one). It writes nothing.
func (l *Limiter) View(ctx context.Context, view string, req limitspec.Request) ([][]any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limiters.IsNil(req.Limit) || req.Policy != nil {
		return nil, kit.BadInput("a view needs a Limit (and no Policy)")
	}
	t, err := l.table(req.Limit)
	if err != nil {
		return nil, err
	}
	c := kit.Call{Args: kit.Args{NowMs: l.nowMs(req.Now), Inputs: make([]string, len(t.alg.Inputs))}}
	if err := t.Prepare(&c, req.Limit, "", kit.StoredKey(req.Key)); err != nil {
		return nil, err
	}
	recs, err := t.View(view, &c)
	out := make([][]any, len(recs))
	for i, r := range recs {
		out[i] = r
	}
	return out, err
}

// Check reports whether the limiter can decide req's limit or policy: it
// can any valid one (see limitspec.Checker).
func (l *Limiter) Check(req limitspec.Request) error {
	if err := limitcall.CheckRuleOf(req.Limit, req.Policy); err != nil {
		return err
	}
	if err := limitcall.CheckCounts(req.Limit, req.Policy); err != nil {
		return err
	}
	if req.Policy != nil {
		p := req.Policy
		for _, pl := range p.Limits() {
			if _, _, err := l.prepare(pl.Limit, limiters.KeyInfix(pl), "k"); err != nil {
				return kit.BadInput("%s.%s: %s", p.Name(), pl.Name, err.Error())
			}
		}
		return nil
	}
	_, _, err := l.prepare(req.Limit, "", "k")
	return err
}

// table returns the table of lim's algorithm, made at its first use. It
// looks among the tables one by one: there are few (one per algorithm),
// and comparing two IDs of one algorithm compares the same strings.
func (l *Limiter) table(lim limitspec.Limit) (*table, error) {
	id := lim.Algorithm()
	if t := find(l.made(), id); t != nil {
		return t, nil
	}
	alg, ok := kit.LookupTable(id)
	if !ok {
		return nil, kit.BadInput("%s: no decision of this algorithm is linked in (%T is not a limit of a generated package)", id, lim)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.made()
	if t := find(old, id); t != nil {
		return t, nil
	}
	t := &table{Table: alg.New(), alg: alg, name: id.String(), order: len(old)}
	if l.noSweeper {
		t.StopSweeper()
	}
	next := append(old[:len(old):len(old)], t)
	l.tables.Store(&next)
	return t, nil
}

// made returns the tables made so far.
func (l *Limiter) made() []*table {
	if ts := l.tables.Load(); ts != nil {
		return *ts
	}
	return nil
}

// find returns the table of the algorithm id among tables, nil if none
// is.
func find(tables []*table, id limitspec.Algorithm) *table {
	for _, t := range tables {
		if t.alg.ID == id {
			return t
		}
	}
	return nil
}

// nowMs is t in ms since the epoch, or the limiter's clock's for the
// zero Time.
func (l *Limiter) nowMs(t time.Time) int64 {
	switch {
	case !t.IsZero():
		return t.UnixMilli()
	case l.clock != nil:
		return l.clock().UnixMilli()
	}
	return l.sys.nowMs()
}

// inputs orders the named inputs as names lists them; missing ones are
// empty.
func inputs(names []string, byName map[string]string) []string {
	if len(names) == 0 {
		return nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = byName[n]
	}
	return out
}
