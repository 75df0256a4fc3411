package redislimit

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/kit"
)

// A request's call by a plan: its KEYS and ARGV in one []any, as go-redis
// sends them after the verb and the script, which run sets for each way
// of running it:
//
//	verb, script, numkeys, KEYS..., ARGV...
//
// Only what the request changes is built per call: one string holding
// every key's name (a key is a slice of it), now_ms (boxed), cost
// (boxed: go-redis writes an int64 as the scripts read a decimal, and a
// cost below 256 is boxed without an allocation) and the inputs; force
// and every prepared argument are boxed once.

// headArgs is how many arguments come before KEYS, decisionArgs how
// many of a decision's ARGV come first: now_ms, cost and force.
const (
	headArgs     = 3
	decisionArgs = 3
)

// The arguments force, boxed once.
var (
	forced   any = kit.ForceArg(true)
	unforced any = kit.ForceArg(false)
)

// forceArg is the argument force.
func forceArg(force bool) any {
	if force {
		return forced
	}
	return unforced
}

// serverNow is now_ms left to the server's clock, boxed once.
var serverNow any = ""

// maxTags is the most hash tags a call builds without an allocation.
const maxTags = 8

// decide decides req by p (req already checked against p by its caller:
// limitcall.CheckRule, or the bound handle's check) and returns the decision's
// own reply, the binding limit's index and each limit's part, appended to
// limits.
func (l *Limiter) decide(ctx context.Context, p *plan, req limitspec.Request, limits []limitspec.LimitResult) (kit.Reply, int, []limitspec.LimitResult, error) {
	if err := limiters.Defaults(&req, true); err != nil {
		return kit.Reply{}, 0, nil, err
	}
	if p.counts != nil {
		return kit.Reply{}, 0, nil, p.counts
	}
	if p.holds {
		return l.runHolds(ctx, p, req, holdDecide, limits)
	}
	again := resendOf(req.ID)
	if l.o.RequestIDs && req.ID == "" {
		req.ID, again = l.ids.Next(), lostOnce
	}
	reply, err := l.decideOnce(ctx, p, req, again)
	if again == lostOnce && notRun(err) {
		// A slot's migration: its request key, new, is refused until it
		// ends. The call ran nothing: sent again without it, it is a
		// call without an id, which a move delays no more than its keys.
		req.ID = ""
		reply, err = l.decideOnce(ctx, p, req, notRunAgain)
	}
	if err != nil {
		return kit.Reply{}, 0, nil, err
	}
	return p.decision(reply, req.Force, limits)
}

// resendOf is how a call with the request id (or hold id) id is sent
// again: after a lost reply too when it has one.
func resendOf(id string) resend {
	if id == "" {
		return notRunAgain
	}
	return lostAgain
}

// decideOnce sends req's decision by p, sent again as again says.
func (l *Limiter) decideOnce(ctx context.Context, p *plan, req limitspec.Request, again resend) (any, error) {
	args, first, err := l.decideArgs(p, req)
	if err != nil {
		return nil, err
	}
	s, _ := l.script(p)
	return l.run(ctx, s, args, first, again)
}

// script is the script that decides by p, and the ARGV it takes after
// the request's own: a policy's composed script, which takes none, but by
// FCALL (the library's function, which takes the limits); else p.decide
// and its params.
func (l *Limiter) script(p *plan) (*script, []any) {
	if p.composed != nil && !l.o.Functions {
		return p.composed, nil
	}
	return p.decide, p.params
}

// costArg is req's cost as p's script takes it: req.Cost, or for a policy
// whose limits count units req.Costs gives, each limit's cost joined by
// ',' (docs/semantics.md, "Units"), checked.
func (p *plan) costArg(req limitspec.Request) (any, error) {
	if err := limitcall.CheckLimitCosts(req); err != nil {
		return nil, err
	}
	if p.policy == nil || len(req.Costs) == 0 {
		return req.Cost, nil
	}
	var buf [maxTags]int64
	costs, err := limitcall.Costs(p.policy, req, buf[:0])
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for i, c := range costs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(c, 10))
	}
	return b.String(), nil
}

// decideArgs are the KEYS and ARGV of req's decision by p, and its first
// key.
func (l *Limiter) decideArgs(p *plan, req limitspec.Request) ([]any, string, error) {
	var buf [maxTags]string
	tags, err := p.tags(req, buf[:0])
	if err != nil {
		return nil, "", err
	}
	cost, err := p.costArg(req)
	if err != nil {
		return nil, "", err
	}
	_, params := l.script(p)
	args := make([]any, headArgs, headArgs+len(p.tails)+1+decisionArgs+len(p.inputs)+len(params))
	args[2] = p.numKeys
	args, first := p.appendKeys(args, l.o.Prefix, tags)
	if req.ID != "" { // refused by the script when too long
		args[2] = len(p.tails) + 1
		args = append(args, "{"+l.o.Prefix+tags[p.tag(0)]+limitcall.RequestKeyTail(req.ID))
	}
	args = append(args, l.now(req.Now), cost, forceArg(req.Force))
	for _, in := range p.inputs {
		args = append(args, req.Inputs[in])
	}
	return append(args, params...), first, nil
}

// resetArgs are the KEYS and ARGV of req's reset by p: its keys, then
// the parameters; with now, a view's (now_ms first).
func (l *Limiter) resetArgs(p *plan, req limitspec.Request, now bool) ([]any, string, error) {
	var buf [maxTags]string
	tags, err := p.tags(req, buf[:0])
	if err != nil {
		return nil, "", err
	}
	args := make([]any, headArgs, headArgs+len(p.tails)+1+len(p.params))
	args[2] = p.numKeys
	args, first := p.appendKeys(args, l.o.Prefix, tags)
	if now {
		args = append(args, l.now(req.Now))
	}
	return append(args, p.params...), first, nil
}

// now is now_ms as a call's argument: t's, or the clock's, or empty for
// the server's clock.
func (l *Limiter) now(t time.Time) any {
	ms, known := l.nowMs(t)
	if !known {
		return serverNow
	}
	return ms
}

// tags are the hash tags of req's keys, appended to into: the request's
// key for a limit; for a policy its identities' values, then its
// constants (see plan). They are refused as the scripts refuse them, with
// package goimpl's words.
func (p *plan) tags(req limitspec.Request, into []string) ([]string, error) {
	if p.policy == nil {
		switch {
		case req.Key == "":
			return nil, kit.BadInput("%s: %s", p.alg, limitcall.KeyEmpty)
		case req.Key[0] == '}':
			return nil, kit.BadInput("%s: %s", p.alg, limitcall.KeyBrace)
		}
		return append(into, kit.StoredKey(req.Key)), nil
	}
	for name := range req.IDs {
		if !slices.Contains(p.identities, name) {
			return nil, p.refuseIDs(req.IDs)
		}
	}
	for _, id := range p.identities {
		v := req.IDs[id]
		if v == "" || v[0] == '}' {
			return nil, p.refuseIDs(req.IDs)
		}
		into = append(into, kit.StoredKey(v))
	}
	return append(into, p.constants...), nil
}

// refuseIDs is the refusal of the identity values ids, which tags found
// wanting: limitcall.PolicyKeys's, so that every limiter says the same.
func (p *plan) refuseIDs(ids map[string]string) error {
	if _, err := limitcall.PolicyKeys(p.policy, ids); err != nil {
		return err
	}
	return kit.BadInput("%s: identities %v refused", p.policy.Name(), ids) // not reached: PolicyKeys refuses what tags does
}

// appendKeys appends the call's keys to args, each "{", the prefix, its
// hash tag and its tail, all in one string, and returns the first.
func (p *plan) appendKeys(args []any, prefix string, tags []string) ([]any, string) {
	size := p.tailBytes + len(p.tails)*(1+len(prefix))
	for i := range p.tails {
		size += len(tags[p.tag(i)])
	}
	var b strings.Builder
	b.Grow(size)
	for i, tail := range p.tails {
		b.WriteByte('{')
		b.WriteString(prefix)
		b.WriteString(tags[p.tag(i)])
		b.WriteString(tail)
	}
	all, at, first := b.String(), 0, ""
	for i, tail := range p.tails {
		n := 1 + len(prefix) + len(tags[p.tag(i)]) + len(tail)
		key := all[at : at+n]
		if i == 0 {
			first = key
		}
		args = append(args, key)
		at += n
	}
	return args, first
}

// tag is the index of key i's hash tag among the call's.
func (p *plan) tag(i int) int {
	if p.of == nil {
		return 0
	}
	return p.of[i]
}

// decision decodes a decision's reply: an algorithm's 7 integers, or a
// policy's (the binding index, then each limit's 7), whose own reply it
// composes: the binding limit's, its delay the longest of all when every
// limit admitted or the call was forced (docs/semantics.md, "Policies").
// It returns the decision's own reply, the binding limit's index, and
// each limit's part appended to limits, which it writes only once the
// whole reply is found sound.
func (p *plan) decision(reply any, force bool, limits []limitspec.LimitResult) (kit.Reply, int, []limitspec.LimitResult, error) {
	n := len(kit.ReplyFields)
	arr, binding, ok := p.sound(reply)
	if !ok {
		return kit.Reply{}, 0, nil, p.badReply(reply)
	}
	if p.policy == nil {
		decision := fromReply(arr[:n])
		return decision, 0, append(limits, limitcall.LimitResult(p.names[0], p.limits[0], decision)), nil
	}
	decision := fromReply(arr[1+n*binding : 1+n*(binding+1)])
	all, delay := true, int64(0)
	for i := range p.limits {
		r := fromReply(arr[1+n*i : 1+n*(i+1)])
		all, delay = all && r.Allowed, max(delay, r.DelayMs)
		lr := limitcall.LimitResult(p.names[i], p.limits[i], r)
		lr.Unit = p.units[i]
		limits = append(limits, lr)
	}
	decision.DelayMs = 0
	if all || force {
		decision.DelayMs = delay
	}
	return decision, binding, limits, nil
}

// sound reports whether reply is a decision's by p: as many integers as
// it holds, each allowed 0 or 1, and a policy's binding index one of its
// limits'. It returns the reply's integers and the binding limit's index
// (0 for a limit).
func (p *plan) sound(reply any) ([]any, int, bool) {
	n := len(kit.ReplyFields)
	arr, _ := reply.([]any)
	if len(arr) != p.replyLen() {
		return nil, 0, false
	}
	for _, x := range arr {
		if _, ok := x.(int64); !ok {
			return nil, 0, false
		}
	}
	if p.policy == nil {
		return arr, 0, allowedField(arr[0])
	}
	binding := arr[0].(int64)
	ok := binding >= 1 && binding <= int64(len(p.limits))
	for i := range p.limits {
		ok = ok && allowedField(arr[1+n*i])
	}
	return arr, int(binding) - 1, ok
}

// replyLen is how many integers a decision's reply holds.
func (p *plan) replyLen() int {
	n := len(kit.ReplyFields)
	if p.policy == nil {
		return n
	}
	return 1 + n*len(p.limits)
}

// allowedField reports whether x, a reply's allowed, is 0 or 1.
func allowedField(x any) bool {
	v := x.(int64)
	return v == 0 || v == 1
}

func (p *plan) badReply(reply any) error {
	return fmt.Errorf("redislimit: %s: unexpected reply %v: want %d integers (does the server run another version of the scripts?)", p.decide.name, reply, p.replyLen())
}

// fromReply is the Reply of a decision's 7 integers, found sound.
func fromReply(r []any) kit.Reply {
	return kit.Reply{Allowed: r[0].(int64) == 1, Limit: r[1].(int64), Remaining: r[2].(int64), RetryAfterMs: r[3].(int64),
		ResetAfterMs: r[4].(int64), DelayMs: r[5].(int64), Tier: r[6].(int64)}
}
