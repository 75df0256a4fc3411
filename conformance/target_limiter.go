package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/kit"
	"github.com/limitspec/limitspec/policyfile"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// viewLimiter is what a limiter target drives: package goimpl's or
// package redislimit's Limiter.
type viewLimiter interface {
	limitspec.Limiter
	limitspec.Resetter
	View(ctx context.Context, view string, req limitspec.Request) ([][]any, error)
}

// limiterTarget drives a limiter as a service does: each step's limit is
// the typed limit policyfile.NewLimit makes of its algorithm and
// parameters, its policy the one limitspec.NewPolicy makes of its limits,
// each refused where they refuse.
type limiterTarget struct {
	lim viewLimiter
}

func (t *limiterTarget) Decide(r Request) Outcome {
	if r.Policy != nil && r.Policy.Holds {
		return t.hold(r)
	}
	return t.withRequest(r, func(ctx context.Context, req limitspec.Request) Outcome {
		res, err := t.lim.Limit(ctx, req)
		return decision(res, err, r.Policy != nil)
	})
}

// holdOps are the operations of a holding policy's steps.
var holdOps = map[string]limitspec.HoldOp{"reserve": limitspec.Reserve, "commit": limitspec.Commit,
	"release": limitspec.Release, "renew": limitspec.Renew}

// hold runs a holding policy's step: a decision by Limit, any other
// operation by the limiter's Hold (an unknown op as HoldOp 0, which it
// refuses). A decision with a hold id or length, which the Go API cannot
// express, is refused here as the scripts refuse it.
func (t *limiterTarget) hold(r Request) Outcome {
	op := r.HoldOp()
	if op == "decide" && (r.Hold != "" || r.HoldMs != 0) {
		return failure("BADINPUT", r.Policy.Name+": a decision takes no hold id nor length")
	}
	return t.withRequest(r, func(ctx context.Context, req limitspec.Request) Outcome {
		if op == "decide" {
			res, err := t.lim.Limit(ctx, req)
			return decision(res, err, true)
		}
		h, ok := t.lim.(limitspec.Holder)
		if !ok {
			return failure("BADINPUT", fmt.Sprintf("%T keeps no holds", t.lim))
		}
		res, err := h.Hold(ctx, req, limitspec.Hold{Op: holdOps[op], ID: r.Hold, For: time.Duration(r.HoldMs) * time.Millisecond})
		return decision(res, err, true)
	})
}

func (t *limiterTarget) Reset(r Request) Outcome {
	return t.withRequest(r, func(ctx context.Context, req limitspec.Request) Outcome {
		if err := t.lim.Reset(ctx, req); err != nil {
			return limiterError(err)
		}
		return Outcome{}
	})
}

func (t *limiterTarget) View(view string, r Request) Outcome {
	return t.withRequest(r, func(ctx context.Context, req limitspec.Request) Outcome {
		entries, err := t.lim.View(ctx, view, req)
		if err != nil {
			return limiterError(err)
		}
		return entriesOutcome(entryStrings(entries))
	})
}

// withRequest runs call on r's request with a deadline: what call
// returns, or the refusal of r's cost, limit or policy.
func (t *limiterTarget) withRequest(r Request, call func(ctx context.Context, req limitspec.Request) Outcome) Outcome {
	req, refused := t.request(r)
	if refused != nil {
		return *refused
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return call(ctx, req)
}

// decision is the outcome of a Limit call.
func decision(res limitspec.Result, err error, policy bool) Outcome {
	if err != nil {
		return limiterError(err)
	}
	return resultOutcome(res, policy)
}

// limitDecision is the outcome of a bound handle's Limit call, which
// decides one limit.
func limitDecision(lr limitspec.LimitResult, err error) Outcome {
	if err != nil {
		return limiterError(err)
	}
	return limitOutcome(lr)
}

// decidesTypedLimits marks the target as one of a Go limiter, which
// decides only the algorithms whose typed limits are linked in.
func (t *limiterTarget) decidesTypedLimits() {}

// request is the limitspec.Request of a step, or the refusal of its
// cost, limit or policy.
func (t *limiterTarget) request(r Request) (limitspec.Request, *Outcome) {
	c, refused := intCost(r)
	if refused != nil && r.Cost != "" {
		return limitspec.Request{}, refused
	}
	req := limitspec.Request{Key: r.Key, IDs: r.IDs, Cost: c, Now: time.UnixMilli(r.NowMs), Force: r.Force, Inputs: r.Inputs, ID: r.ID}
	var err error
	if r.Policy != nil {
		if req.Costs, refused = intCosts(r.Costs); refused != nil {
			return req, refused
		}
		req.Peek = limiters.AsksNothing(req) // a Cost left 0 is 1 in Go
		req.Policy, refused = TypedPolicy(r.Policy)
		return req, refused
	}
	req.Peek = limiters.AsksNothing(req) // a Cost left 0 is 1 in Go
	ints, refused := intParams(r.Algorithm, r.Params)
	if refused != nil {
		return req, refused
	}
	if req.Limit, err = policyfile.NewLimit(r.Algorithm, ints); err != nil {
		o := limiterError(err)
		return req, &o
	}
	return req, nil
}

// TypedPolicy is the limitspec.Policy of a vector's policy, or the
// refusal of a limit or of the policy.
func TypedPolicy(p *Policy) (*limitspec.Policy, *Outcome) {
	limits := make([]limitspec.PolicyLimit, len(p.Limits))
	for i, l := range p.Limits {
		ints, refused := intParams(l.Algorithm, l.Params)
		if refused != nil {
			return nil, refused
		}
		lim, err := policyfile.NewLimit(l.Algorithm, ints)
		if err != nil {
			o := limiterError(err)
			return nil, &o
		}
		limits[i] = limitspec.PolicyLimit{Name: l.Name, Limit: lim, Identity: l.Identity, Constant: l.Constant, Unit: l.Unit}
	}
	pol, err := limitspec.NewPolicy(p.Name, limits...)
	if err != nil {
		o := limiterError(err)
		return nil, &o
	}
	if p.Holds {
		pol = pol.WithHolds()
	}
	return pol, nil
}

// resultOutcome is a decision's Outcome: the binding limit's fields, the
// decision's wait and delay, and for a policy every limit's.
func resultOutcome(res limitspec.Result, policy bool) Outcome {
	if len(res.Limits) == 0 {
		return failure("BADREPLY", "a decision with no limit behind it")
	}
	o := limitOutcome(res.Limits[res.Binding])
	o.Allowed, o.RetryAfterMs, o.DelayMs = res.Allowed, retryMs(res.Allowed, res.RetryAfter), millis(res.Delay)
	if policy {
		o.Index = int64(res.Binding + 1)
		for _, l := range res.Limits {
			o.Limits = append(o.Limits, limitOutcome(l))
		}
	}
	return o
}

func limitOutcome(l limitspec.LimitResult) Outcome {
	return Outcome{Reply: kit.Reply{Allowed: l.Allowed, Limit: l.Quota, Remaining: l.Remaining, RetryAfterMs: retryMs(l.Allowed, l.RetryAfter),
		ResetAfterMs: millis(l.ResetAfter), DelayMs: millis(l.Delay), Tier: int64(l.Tier)}}
}

// retryMs is a wait as the scripts reply it: -1 when allowed or never.
func retryMs(allowed bool, d time.Duration) int64 {
	if allowed || d == limitspec.Never {
		return -1
	}
	return millis(d)
}

func millis(d time.Duration) int64 { return int64(d / time.Millisecond) }

// limiterError classifies a limiter's error: BADINPUT, or the code of
// the Redis error behind a bad state (BADSTATE, WRONGTYPE); anything else
// is LIMITER, which no vector expects.
func limiterError(err error) Outcome {
	var rerr redis.Error
	switch {
	case errors.Is(err, limitspec.ErrBadInput):
		return failure("BADINPUT", err.Error())
	case errors.Is(err, limitspec.ErrNoHold):
		return failure("NOHOLD", err.Error())
	case errors.Is(err, limitspec.ErrBadState) && errors.As(err, &rerr):
		return errorOutcome(redislimit.ErrorReply(rerr.Error()))
	}
	return failure("LIMITER", err.Error())
}

// GoimplTarget runs package goimpl's Limiter, without a sweeper: vectors
// replay times of their own, not the wall clock's.
type GoimplTarget struct{ limiterTarget }

// NewGoimplTarget returns the goimpl target.
func NewGoimplTarget() *GoimplTarget { return &GoimplTarget{} }

func (t *GoimplTarget) Name() string { return "goimpl" }

func (t *GoimplTarget) Begin(*Vector) error {
	lim, err := goimpl.New(goimpl.Options{NoSweeper: true})
	t.lim = lim
	return err
}

func (t *GoimplTarget) Close() error { return nil }

// GoimplBoundTarget runs package goimpl's Limiter through its bound handles, as
// a service that binds its limits once calls it: each step's limit bound
// by Limiter.Bind (once per limit), its policy by Limiter.BindPolicy
// (once per policy), the request decided by the handle; resets and views,
// which the handles do not offer, go to the Limiter, on the same state.
type GoimplBoundTarget struct {
	GoimplTarget
	mem      *goimpl.Limiter
	limits   map[limitspec.Limit]*goimpl.Bound
	policies map[*Policy]*goimpl.BoundPolicy
}

// NewGoimplBoundTarget returns the goimpl-bound target.
func NewGoimplBoundTarget() *GoimplBoundTarget { return &GoimplBoundTarget{} }

func (t *GoimplBoundTarget) Name() string { return "goimpl-bound" }

func (t *GoimplBoundTarget) Begin(*Vector) error {
	lim, err := goimpl.New(goimpl.Options{NoSweeper: true})
	t.lim, t.mem = lim, lim
	t.limits, t.policies = map[limitspec.Limit]*goimpl.Bound{}, map[*Policy]*goimpl.BoundPolicy{}
	return err
}

// Decide decides r by the handle of its limit or policy, bound at its
// first use; a limit or policy Bind refuses is the step's refusal.
func (t *GoimplBoundTarget) Decide(r Request) Outcome {
	if r.Policy != nil && r.Policy.Holds { // not bound: see limitspec.Policy.WithHolds
		return t.hold(r)
	}
	return t.withRequest(r, func(ctx context.Context, req limitspec.Request) Outcome {
		if req.Policy != nil {
			b, err := bindOnce(t.policies, r.Policy, func() (*goimpl.BoundPolicy, error) { return t.mem.BindPolicy(req.Policy) })
			if err != nil {
				return limiterError(err)
			}
			req.Policy = nil
			res, err := b.Limit(ctx, req)
			return decision(res, err, true)
		}
		b, err := bindOnce(t.limits, req.Limit, func() (*goimpl.Bound, error) { return t.mem.Bind(req.Limit) })
		if err != nil {
			return limiterError(err)
		}
		req.Limit = nil
		return limitDecision(b.Limit(ctx, req))
	})
}

// bindOnce returns handles[k], bound by bind at its first use.
func bindOnce[K comparable, H any](handles map[K]H, k K, bind func() (H, error)) (H, error) {
	if h, ok := handles[k]; ok {
		return h, nil
	}
	h, err := bind()
	if err == nil {
		handles[k] = h
	}
	return h, err
}

// ClientTarget drives package redislimit's Limiter, the Go client a
// service uses, on the Redis (or Cluster) of a RedisTarget: the client's
// typed limits, ARGV, key names, reply decoding and error classes are held
// to every vector, as the scripts are. It reuses the RedisTarget's key
// space (through redislimit.Options.Prefix) and its keyspace checks.
type ClientTarget struct {
	*RedisTarget
	limiterTarget
}

// NewClientTarget drives redislimit on rt's server; with rt.UseFunctions
// called first, the client calls the Functions libraries too.
func NewClientTarget(rt *RedisTarget) *ClientTarget { return &ClientTarget{RedisTarget: rt} }

// Name is the RedisTarget's with "-client": redis-client, or
// cluster-client-functions for a Cluster through the Functions library.
func (t *ClientTarget) Name() string {
	base, functions := strings.CutSuffix(t.RedisTarget.Name(), "-functions")
	if functions {
		return base + "-client-functions"
	}
	return base + "-client"
}

func (t *ClientTarget) Begin(v *Vector) error {
	if err := t.RedisTarget.Begin(v); err != nil {
		return err
	}
	opts := redislimit.Options{Prefix: t.prefix, Functions: t.functions}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lim, err := redislimit.New(ctx, t.rdb, opts)
	t.lim = lim
	return err
}

func (t *ClientTarget) Decide(r Request) Outcome { return t.limiterTarget.Decide(r) }

func (t *ClientTarget) Reset(r Request) Outcome { return t.limiterTarget.Reset(r) }

func (t *ClientTarget) View(view string, r Request) Outcome { return t.limiterTarget.View(view, r) }

// RedisBoundTarget drives package redislimit's handles bound to one limit or
// one policy (Limiter.Bind and BindPolicy), on a RedisTarget's server as
// ClientTarget does: each step is decided by the handle of its limit
// (its algorithm and parameters) or its policy, bound at the first step
// that names it in the vector and kept for the steps after; resets and
// views, which a handle does not run, go through the Limiter.
type RedisBoundTarget struct {
	*ClientTarget
	limits   map[string]*redislimit.Bound
	policies map[string]*redislimit.BoundPolicy
}

// NewRedisBoundTarget drives redislimit's bound handles on rt's server; with
// rt.UseFunctions called first, they call the Functions libraries too.
func NewRedisBoundTarget(rt *RedisTarget) *RedisBoundTarget {
	return &RedisBoundTarget{ClientTarget: NewClientTarget(rt)}
}

// Name is the ClientTarget's with "-client" made "-bound": redis-bound,
// or cluster-bound-functions.
func (t *RedisBoundTarget) Name() string {
	return strings.Replace(t.ClientTarget.Name(), "-client", "-bound", 1)
}

func (t *RedisBoundTarget) Begin(v *Vector) error {
	t.limits, t.policies = map[string]*redislimit.Bound{}, map[string]*redislimit.BoundPolicy{}
	return t.ClientTarget.Begin(v)
}

func (t *RedisBoundTarget) Decide(r Request) Outcome {
	if r.Policy != nil && r.Policy.Holds { // not bound: see limitspec.Policy.WithHolds
		return t.hold(r)
	}
	lim := t.lim.(*redislimit.Limiter)
	return t.withRequest(r, func(ctx context.Context, req limitspec.Request) Outcome {
		if req.Policy != nil {
			b, err := bound(t.policies, fmt.Sprintf("%+v", *r.Policy), func() (*redislimit.BoundPolicy, error) { return lim.BindPolicy(req.Policy) })
			if err != nil {
				return limiterError(err)
			}
			req.Policy = nil // this step's is another, equal to the bound one
			res, err := b.Limit(ctx, req)
			return decision(res, err, true)
		}
		b, err := bound(t.limits, fmt.Sprint(r.Algorithm, r.Params), func() (*redislimit.Bound, error) { return lim.Bind(req.Limit) })
		if err != nil {
			return limiterError(err)
		}
		req.Limit = nil
		return limitDecision(b.Limit(ctx, req))
	})
}

// bound is the handle of name in handles, bound by bind when there is
// none.
func bound[H any](handles map[string]*H, name string, bind func() (*H, error)) (*H, error) {
	if h := handles[name]; h != nil {
		return h, nil
	}
	h, err := bind()
	if err == nil {
		handles[name] = h
	}
	return h, err
}
