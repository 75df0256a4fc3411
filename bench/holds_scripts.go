package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/kit"
	"github.com/redis/go-redis/v9"
)

// holdFor is how long each reserve of the holds figure's pairs holds:
// far longer than the pair it begins takes, so that no hold ends by
// itself.
const holdFor = 30 * time.Second

// holdIdentity is the identity every policy of the holds figure counts.
const holdIdentity = "user"

// The policies of the holds figure, each of one limit counting
// holdIdentity: gcraLimit in a plain policy and in a holding one, and
// Amount slots (a concurrency limit) in a holding one.
var (
	gcraPolicy = mustPolicy("bench_gcra", limitspec.PolicyLimit{Name: "per_user", Limit: gcraLimit, Identity: holdIdentity})
	heldGCRA   = gcraPolicy.WithHolds()
	slotPolicy = mustPolicy("bench_slots", limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: Amount}, Identity: holdIdentity}).WithHolds()
)

// mustPolicy is limitspec.NewPolicy's policy; it panics on an error (at
// start-up: the policies are constants of the figure).
func mustPolicy(name string, limits ...limitspec.PolicyLimit) *limitspec.Policy {
	p, err := limitspec.NewPolicy(name, limits...)
	if err != nil {
		panic(err)
	}
	return p
}

// holdCall is one script call of a policy's request: Op is "" for a
// plain policy's decision (ARGV now_ms, cost, force), else a holding
// policy's op (ARGV now_ms, cost, op, id, hold_ms; a decision's now_ms,
// cost, op): decide, or a limitspec.HoldOp's name. For is a reserve's length (0: holdFor).
type holdCall struct {
	Op   string
	Cost int64
	For  time.Duration
}

// The calls of the holds figure's requests.
var (
	policyDecision = []holdCall{{Op: "", Cost: 1}}
	heldDecision   = []holdCall{{Op: "decide", Cost: 1}}
	reserveCommit  = []holdCall{{Op: limitspec.Reserve.String(), Cost: 1}, {Op: limitspec.Commit.String(), Cost: 1}}
	acquireRelease = []holdCall{{Op: limitspec.Reserve.String(), Cost: 1}, {Op: limitspec.Release.String(), Cost: 0}}
)

// argv is the whole ARGV of call c of a composed script at now_ms ms,
// for the hold id (a decision takes none): the composed script takes
// no limit's parameters.
func (c holdCall) argv(ms, id string) []any {
	cost := strconv.FormatInt(c.Cost, 10)
	switch c.Op {
	case "":
		return []any{ms, cost, kit.ForceArg(false)}
	case "decide":
		return []any{ms, cost, c.Op} // as redislimit sends it: no id nor length
	}
	holdMs := "0"
	if c.Op == limitspec.Reserve.String() || c.Op == limitspec.Renew.String() {
		length := holdFor
		if c.For != 0 {
			length = c.For
		}
		holdMs = strconv.FormatInt(limitspec.Hold{For: length}.Ms(), 10)
	}
	return []any{ms, cost, c.Op, id, holdMs}
}

// composedCall is a policy's call as package redislimit makes it for a
// policy it plans: EVALSHA of the script composed for the policy
// (limitcall.Composed, its limits' parameters written in), KEYS each
// limit's state keys then, for a holding policy, its holds keys
// {tag}:<limit>:hh and {tag}:<limit>:hz (limitcall.PolicyTemplate's
// Tails, the hash tag the identity's value), and ARGV holdCall.argv.
type composedCall struct {
	script kit.Script
	tmpl   *limitcall.PolicyTemplate
	p      *limitspec.Policy
}

// newComposedCall prepares p's calls.
func newComposedCall(p *limitspec.Policy) (*composedCall, error) {
	t, err := limitcall.NewPolicyTemplate(p)
	if err != nil {
		return nil, err
	}
	s, err := limitcall.Composed(p)
	if err != nil {
		return nil, err
	}
	return &composedCall{script: s, tmpl: t, p: p}, nil
}

// keys are the KEYS of a call for the identity value id.
func (cc *composedCall) keys(id string) []string {
	tags, err := limitcall.PolicyKeys(cc.p, map[string]string{holdIdentity: id})
	if err != nil {
		panic(err) // the figure's ids are valid identity values
	}
	out := make([]string, len(cc.tmpl.Tails))
	for i, tail := range cc.tmpl.Tails {
		out[i] = "{" + tags[cc.tmpl.Of[i]] + tail
	}
	return out
}

// queue adds call c at now_ms ms of the hold id hold to pipe, on the
// KEYS keys.
func (cc *composedCall) queue(ctx context.Context, pipe redis.Pipeliner, keys []string, ms, hold string, c holdCall) *redis.Cmd {
	return pipe.EvalSha(ctx, cc.script.SHA1, keys, c.argv(ms, hold)...)
}

// composedDecider sends calls, in order in one pipeline, for each
// request of policy p (composedCall), now_ms from the caller's clock;
// the calls of a request share a hold id of its own, of 36 bytes. Its
// decision is the first call's, admitted when every limit admits
// (policyAdmits): a reserve's admission. A later call refused (an error
// reply: NOHOLD) fails the pipeline, and so the figure.
func composedDecider(name string, p *limitspec.Policy, calls []holdCall) (*redisDecider, error) {
	cc, err := newComposedCall(p)
	if err != nil {
		return nil, err
	}
	return cc.decider(name, calls), nil
}

// decider is composedDecider's, of cc's policy.
func (cc *composedCall) decider(name string, calls []holdCall) *redisDecider {
	return &redisDecider{
		Group: groupGCRA, Name: name, Ours: true, Command: evalSHA, Calls: len(calls),
		load: loader(cc.script.Source), admitted: policyAdmits,
		keys: func(id string, _ time.Time) []string { return cc.keys(id) },
		queue: func(ctx context.Context, pipe redis.Pipeliner, id string, now time.Time) *redis.Cmd {
			ks, ms, hold := cc.keys(id), strconv.FormatInt(now.UnixMilli(), 10), member()
			var first *redis.Cmd
			for _, c := range calls {
				cmd := cc.queue(ctx, pipe, ks, ms, hold, c)
				if first == nil {
					first = cmd
				}
			}
			return first
		},
	}
}

// policyAdmits reads a policy's reply (docs/scripts.md, "Policies"),
// 1 + 7n integers: the binding limit's 1-based index, then each of the
// n limits' allowed, limit, remaining, retry_after_ms, reset_after_ms,
// delay_ms and tier. The request is admitted when every limit's allowed
// is 1. A reply of another shape, a binding index that names no limit,
// or an allowed neither 0 nor 1 is an error.
func policyAdmits(reply any) (bool, error) {
	ints, err := policyReply(reply)
	if err != nil {
		return false, err
	}
	all := true
	for i := 1; i < len(ints); i += len(kit.ReplyFields) {
		all = all && ints[i] == 1
	}
	return all, nil
}

// policyReply is a policy's reply's integers (see policyAdmits), its
// shape, binding index and allowed fields checked.
func policyReply(reply any) ([]int64, error) {
	r, _ := reply.([]any)
	f := len(kit.ReplyFields)
	n := (len(r) - 1) / f
	if n < 1 || len(r) != 1+f*n {
		return nil, fmt.Errorf("unexpected reply %v: want 1 + %d×n integers", reply, f)
	}
	ints := make([]int64, len(r))
	for i, x := range r {
		v, ok := x.(int64)
		if !ok {
			return nil, fmt.Errorf("unexpected reply %v: want integers", reply)
		}
		ints[i] = v
	}
	if ints[0] < 1 || ints[0] > int64(n) {
		return nil, fmt.Errorf("unexpected reply %v: binding index %d of %d limits", reply, ints[0], n)
	}
	for i := 1; i < len(ints); i += f {
		if ints[i] != 0 && ints[i] != 1 {
			return nil, fmt.Errorf("unexpected reply %v: allowed %d", reply, ints[i])
		}
	}
	return ints, nil
}
