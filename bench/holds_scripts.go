package main

import (
	"context"
	"strconv"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/kit"
	"github.com/redis/go-redis/v9"
)

// holdFor is how long each reserve of the holds figure holds: far
// longer than the pair it begins takes, so that no hold ends by itself.
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

// holdCall is one script call of a policy's request: Op is "" for the
// policy script's decision (ARGV now_ms, cost, force), else the holds
// script's op (ARGV now_ms, cost, op, id, hold_ms): decide, or a
// limitspec.HoldOp's name.
type holdCall struct {
	Op   string
	Cost int64
}

// The calls of the holds figure's requests.
var (
	policyDecision = []holdCall{{"", 1}}
	heldDecision   = []holdCall{{"decide", 1}}
	reserveCommit  = []holdCall{{limitspec.Reserve.String(), 1}, {limitspec.Commit.String(), 1}}
	acquireRelease = []holdCall{{limitspec.Reserve.String(), 1}, {limitspec.Release.String(), 0}}
)

// head is ARGV before the limits of call c at now_ms ms, for the hold
// id (a decision takes none).
func (c holdCall) head(ms, id string) []any {
	cost := strconv.FormatInt(c.Cost, 10)
	switch c.Op {
	case "":
		return []any{ms, cost, kit.ForceArg(false)}
	case "decide":
		return []any{ms, cost, c.Op, "", "0"}
	}
	holdMs := "0"
	if c.Op == limitspec.Reserve.String() || c.Op == limitspec.Renew.String() {
		holdMs = strconv.FormatInt(limitspec.Hold{For: holdFor}.Ms(), 10)
	}
	return []any{ms, cost, c.Op, id, holdMs}
}

// policyDecider sends calls, in order in one pipeline, for each request
// of policy p by EVALSHA of its library's script (the holds script for a
// holding policy, else the policy script), KEYS and ARGV built as
// redislimit builds them (limitcall.NewPolicyTemplate), now_ms from the
// caller's clock; the calls of a request share a hold id of its own, of
// 36 bytes. Its decision is the first call's: a reserve's admission; a
// later call's error (NOHOLD) fails the pipeline.
func policyDecider(name string, p *limitspec.Policy, calls []holdCall) (*redisDecider, error) {
	t, err := limitcall.NewPolicyTemplate(p)
	if err != nil {
		return nil, err
	}
	s := t.Library.Policy
	if p.Holds() {
		s = t.Library.Holds
	}
	limits := boxedStrings(t.Limits)
	keys := func(id string, _ time.Time) []string {
		tags, err := limitcall.PolicyKeys(p, map[string]string{holdIdentity: id})
		if err != nil {
			panic(err) // the figure's ids are valid identity values
		}
		out := make([]string, len(t.Tails))
		for i, tail := range t.Tails {
			out[i] = "{" + tags[t.Of[i]] + tail
		}
		return out
	}
	return &redisDecider{
		Group: "gcra", Name: name, Ours: true, Command: evalSHA, Calls: len(calls),
		load: loader(s.Source), admitted: firstIsOne, keys: keys,
		queue: func(ctx context.Context, pipe redis.Pipeliner, id string, now time.Time) *redis.Cmd {
			ks, ms, hold := keys(id, now), strconv.FormatInt(now.UnixMilli(), 10), member()
			var first *redis.Cmd
			for _, c := range calls {
				cmd := pipe.EvalSha(ctx, s.SHA1, ks, append(c.head(ms, hold), limits...)...)
				if first == nil {
					first = cmd
				}
			}
			return first
		},
	}, nil
}

// boxedStrings is strs as go-redis arguments.
func boxedStrings(strs []string) []any {
	out := make([]any, len(strs))
	for i, s := range strs {
		out[i] = s
	}
	return out
}
