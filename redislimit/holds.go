package redislimit

import (
	"context"
	"strconv"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/kit"
)

// A holding policy (limitspec.Policy.WithHolds; docs/semantics.md,
// "Holds") is called by the holds script: every limit's keys, each then
// its holds key, and ARGV now_ms, cost, op, id, hold_ms, then the limits.
// Its decisions (Limit) run op decide; Hold runs the others.

// holdDecide is a holding policy's decision, as Hold's operations are
// passed.
var holdDecide = limitspec.Hold{}

// Hold runs h on the holds of req.Policy, a holding policy, for req.IDs
// (see limitspec.Holder): one call of the holds script, all or nothing
// over the policy's limits. Its errors are Limit's, and one matching
// limitspec.ErrNoHold for a commit, release or renew that finds nothing
// held. An operation on a hold is idempotent by its id, so one whose
// reply was lost is sent again (as a decision with a request id is): a
// commit retried after it took effect finds nothing held and charges
// nothing, its error matching ErrNoHold.
func (l *Limiter) Hold(ctx context.Context, req limitspec.Request, h limitspec.Hold) (limitspec.Result, error) {
	if err := limitcall.CheckHolding(req.Policy); err != nil {
		return limitspec.Result{}, err
	}
	if err := limiters.Defaults(&req, limiters.TakesAmount(h.Op)); err != nil {
		return limitspec.Result{}, err
	}
	p, err := l.plan(req)
	if err != nil {
		return limitspec.Result{}, err
	}
	decision, binding, limits, err := l.runHolds(ctx, p, req, h, make([]limitspec.LimitResult, 0, len(p.limits)))
	if err != nil {
		return limitspec.Result{}, err
	}
	return limitcall.Result(decision, binding, limits), nil
}

// runHolds runs h (holdDecide: a decision) on req's holding policy.
func (l *Limiter) runHolds(ctx context.Context, p *plan, req limitspec.Request, h limitspec.Hold, limits []limitspec.LimitResult) (kit.Reply, int, []limitspec.LimitResult, error) {
	if req.Force || req.ID != "" {
		return kit.Reply{}, 0, nil, kit.BadInput("%s: a holding policy takes no Force nor ID: a commit charges work done, and a hold's id makes its calls idempotent", req.Policy.Name())
	}
	op, ms := "decide", int64(0)
	if h != holdDecide {
		op, ms = h.Op.String(), h.Ms()
	}
	reply, err := l.callHolds(ctx, p, req, op, h.ID, ms)
	if err != nil {
		return kit.Reply{}, 0, nil, err
	}
	return p.decision(reply, false, limits)
}

// callHolds calls the holds script with op on req's holding policy; an
// operation on a hold (an id given) may be sent again after a lost reply.
func (l *Limiter) callHolds(ctx context.Context, p *plan, req limitspec.Request, op, id string, ms int64) (any, error) {
	var buf [maxTags]string
	tags, err := p.tags(req, buf[:0])
	if err != nil {
		return nil, err
	}
	cost, err := p.costArg(req)
	if err != nil {
		return nil, err
	}
	s, params := l.script(p)
	args := make([]any, headArgs, headArgs+len(p.tails)+5+len(params))
	args[2] = p.numKeys
	args, first := p.appendKeys(args, l.o.Prefix, tags)
	args = append(args, l.now(req.Now), cost, op)
	if id != "" || len(params) > 0 {
		// A script composed for the policy (no params) takes a decision's
		// ARGV without the id and length: each argument costs Redis more
		// than a line of the script.
		args = append(args, id, strconv.FormatInt(ms, 10))
	}
	args = append(args, params...)
	return l.run(ctx, s, args, first, resendOf(id))
}
