package goimpl

import (
	"context"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/kit"
)

// Bound decides keys by one limit, checked once by Limiter.Bind. A call
// converts no limit, validates none, looks up no table and builds no key
// string, so that a decision on an existing key whose state is a few
// integers allocates nothing. It decides exactly as its Limiter decides a
// request of the same limit: on the same state, with the same results
// and the same refusals of a key, a time, a cost or an input. It is safe
// for concurrent use.
type Bound struct {
	l    *Limiter
	name string
	// given is the limit as Bind was given it, lim a copy of its value,
	// boxed once: the Limit of every result.
	given, lim limitspec.Limit
	bound      kit.Bound
	inputs     []string // the names of the algorithm's string inputs
	noInputs   []string // as many empty ones, for a call that passes none
}

// Bind checks lim once (its Validate, and that its algorithm is linked
// in) and returns a handle deciding keys by it; its errors match
// limitspec.ErrBadInput, with Limit's messages for the same limit. The
// handle keeps a copy of lim's value: a limit given by pointer and
// changed afterwards is not seen.
func (l *Limiter) Bind(lim limitspec.Limit) (*Bound, error) {
	if err := limitcall.CheckBind(lim); err != nil {
		return nil, err
	}
	t, err := l.table(lim)
	if err != nil {
		return nil, err
	}
	b, err := t.Bind(lim)
	if err != nil {
		return nil, err
	}
	return &Bound{l: l, name: t.name, given: lim, lim: b.Value(), bound: b,
		inputs: t.alg.Inputs, noInputs: make([]string, len(t.alg.Inputs))}, nil
}

// Allow decides a request of cost 1 for key at the limiter's clock.
func (b *Bound) Allow(ctx context.Context, key string) (res limitspec.LimitResult, err error) {
	if err = ctx.Err(); err != nil {
		return res, err
	}
	r, err := b.bound.Limit(kit.Args{NowMs: b.l.nowMs(time.Time{}), Cost: 1, Inputs: b.noInputs, Commit: true}, kit.StoredKey(key))
	if err != nil {
		return res, err
	}
	b.result(&res, &r)
	return res, nil
}

// Limit decides req: its Key, Cost, Now (zero: the limiter's clock),
// Force, Inputs and ID, as the limiter's Limit decides them. req.Limit must
// be nil or equal to the bound limit (as Bind was given it, or its
// value), and req.Policy nil; else the error matches
// limitspec.ErrBadInput.
func (b *Bound) Limit(ctx context.Context, req limitspec.Request) (res limitspec.LimitResult, err error) {
	if err = ctx.Err(); err != nil {
		return res, err
	}
	if err = limiters.CheckBound(req.Limit, req.Policy, b.given, b.lim); err != nil {
		return res, err
	}
	if err = limiters.Defaults(&req, true); err != nil {
		return res, err
	}
	if err = limitcall.CheckLimitCosts(req); err != nil {
		return res, err
	}
	if req.ID != "" { // decided as the limiter decides it, by the bound limit
		req.Limit = b.lim
		var full limitspec.Result
		if err = b.l.limitOnce(&req, b.l.nowMs(req.Now), &full); err != nil {
			return res, err
		}
		return full.Limits[0], nil
	}
	in := b.noInputs
	if len(req.Inputs) > 0 {
		in = inputs(b.inputs, req.Inputs)
	}
	args := kit.Args{NowMs: b.l.nowMs(req.Now), Cost: req.Cost, Inputs: in, Commit: true, Force: req.Force}
	r, err := b.bound.Limit(args, kit.StoredKey(req.Key))
	if err != nil {
		return res, err
	}
	b.result(&res, &r)
	return res, nil
}

// result writes the bound limit's result of r to *res, field by field:
// a LimitResult built apart and then copied to the caller costs about a
// fifth of a decision.
func (b *Bound) result(res *limitspec.LimitResult, r *kit.Reply) {
	res.Name, res.Limit = b.name, b.lim
	limitcall.WriteReply(res, r)
}

// BoundPolicy decides identities by one policy, whose limits were
// checked once by Limiter.BindPolicy, each bound to its table. It
// decides exactly as its Limiter decides a request of the same policy,
// on the same states (and holds), and is safe for concurrent use. A
// call converts no limit, validates none and looks up no table; on
// existing keys whose states are a few integers it allocates nothing
// but a new Result's Limits (LimitInto and HoldInto reuse them): each
// limit names its state in a buffer its pooled call keeps, and a
// commit of a policy of one limit keeps its reply in place.
//
// A holding policy (limitspec.Policy.WithHolds) is bound too: its
// decisions (Limit, LimitInto) count its holds, and Hold and HoldInto run
// the operations on its holds, exactly as the Limiter's Hold does.
type BoundPolicy struct {
	l    *Limiter
	plan *policyPlan
}

// BindPolicy checks p once (each limit's Validate, and that its algorithm
// is linked in) and returns a handle deciding identities by it; its
// errors match limitspec.ErrBadInput, with Check's messages for the same
// policy.
func (l *Limiter) BindPolicy(p *limitspec.Policy) (*BoundPolicy, error) {
	if err := limitcall.CheckRuleOf(nil, p); err != nil {
		return nil, err
	}
	if err := limitcall.CheckCounts(nil, p); err != nil {
		return nil, err
	}
	plan, err := l.newPlan(p, true)
	if err != nil {
		return nil, err
	}
	return &BoundPolicy{l: l, plan: plan}, nil
}

// Limit decides req by the bound policy: its IDs, Cost, Costs, Now
// (zero: the limiter's clock), Force and ID, as the limiter's Limit
// decides them. req.Policy must be nil or the bound policy, and
// req.Limit nil; else the error matches limitspec.ErrBadInput. Its
// result's Limits are a new slice (LimitInto reuses one).
func (b *BoundPolicy) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	return limitcall.Into(ctx, req, b.LimitInto)
}

// LimitInto decides req as Limit does into *res, reusing the array of
// res.Limits as the limiter's LimitInto does.
func (b *BoundPolicy) LimitInto(ctx context.Context, req limitspec.Request, res *limitspec.Result) error {
	if err := b.check(ctx, &req, true); err != nil {
		return err
	}
	return b.l.decidePolicy(&req, b.plan, res)
}

// Hold runs h on the holds of the bound policy, a holding policy, for
// req.IDs, exactly as the limiter's Hold runs it on a request of that
// policy (see limitspec.Holder): req.Policy must be nil or the bound
// policy, and req.Limit nil. Its errors match limitspec.ErrBadInput
// (the policy holds nothing: it was bound without WithHolds) or
// limitspec.ErrNoHold, or are ctx's. Its result's Limits are a new
// slice (HoldInto reuses one).
func (b *BoundPolicy) Hold(ctx context.Context, req limitspec.Request, h limitspec.Hold) (limitspec.Result, error) {
	var res limitspec.Result
	if err := b.HoldInto(ctx, req, h, &res); err != nil {
		return limitspec.Result{}, err
	}
	return res, nil
}

// HoldInto runs h as Hold does and writes its result to *res, reusing
// the array of res.Limits; on an error *res is left as it was.
func (b *BoundPolicy) HoldInto(ctx context.Context, req limitspec.Request, h limitspec.Hold, res *limitspec.Result) error {
	if err := b.check(ctx, &req, limiters.TakesAmount(h.Op)); err != nil {
		return err
	}
	if err := limitcall.CheckHolding(req.Policy); err != nil {
		return err
	}
	return b.l.runHolds(&req, b.plan, h.Op.String(), h.ID, h.Ms(), res)
}

// check refuses a request that names another rule than the bound policy,
// and sets its Policy to it, and its default amount (limiters.Defaults:
// takes says whether the call takes one).
func (b *BoundPolicy) check(ctx context.Context, req *limitspec.Request, takes bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := limiters.CheckBoundPolicy(req.Limit, req.Policy, b.plan.p); err != nil {
		return err
	}
	req.Policy = b.plan.p
	return limiters.Defaults(req, takes)
}
