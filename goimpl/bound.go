package goimpl

import (
	"context"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
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
	if err = limitcall.CheckBound(req.Limit, req.Policy, b.given, b.lim); err != nil {
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
// checked once by Limiter.BindPolicy. It decides exactly as its Limiter
// decides a request of the same policy, and is safe for concurrent use.
type BoundPolicy struct {
	l      *Limiter
	p      *limitspec.Policy
	limits []policyTable
}

// BindPolicy checks p once (each limit's Validate, and that its algorithm
// is linked in) and returns a handle deciding identities by it; its
// errors match limitspec.ErrBadInput, with Check's messages for the same
// policy.
func (l *Limiter) BindPolicy(p *limitspec.Policy) (*BoundPolicy, error) {
	if err := limitcall.CheckBindPolicy(p); err != nil {
		return nil, err
	}
	bp := &BoundPolicy{l: l, p: p}
	for _, pl := range p.Limits() {
		t, err := l.table(pl.Limit)
		if err != nil {
			return nil, kit.BadInput("%s.%s: %s", p.Name(), pl.Name, err.Error())
		}
		b, err := t.Bind(pl.Limit)
		if err != nil {
			return nil, kit.BadInput("%s.%s: %s", p.Name(), pl.Name, err.Error())
		}
		bp.limits = append(bp.limits, policyTable{t: t, bound: b})
	}
	return bp, nil
}

// Limit decides req by the bound policy: its IDs, Cost, Now (zero: the
// limiter's clock), Force and ID, as the limiter's Limit decides them.
// req.Policy must be nil or the bound policy, and req.Limit nil; else the
// error matches limitspec.ErrBadInput. Its result's Limits are a new
// slice (LimitInto reuses one).
func (b *BoundPolicy) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	return limitcall.Into(ctx, req, b.LimitInto)
}

// LimitInto decides req as Limit does into *res, reusing the array of
// res.Limits as the limiter's LimitInto does.
func (b *BoundPolicy) LimitInto(ctx context.Context, req limitspec.Request, res *limitspec.Result) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := limitcall.CheckBoundPolicy(req.Limit, req.Policy, b.p); err != nil {
		return err
	}
	req.Policy = b.p
	if req.ID != "" {
		return b.l.limitOnce(&req, b.l.nowMs(req.Now), res)
	}
	return b.l.decidePolicy(req, b.l.nowMs(req.Now), b.limits, res)
}
