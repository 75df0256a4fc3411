package redislimit

import (
	"fmt"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/kit"
)

// call is a request's script call, prepared: the library and scripts it
// runs, its KEYS and its ARGV after now_ms, cost and force, and how to
// read its reply.
type call struct {
	lib           string
	decide, reset kit.Script
	keys          []string
	argv          []any // after now_ms, cost and force
	resetArgv     []any
	// names and limits are each limit's, for Result.Limits; policy says
	// whether the reply is a policy's (its result, the binding index,
	// then each limit's).
	names  []string
	limits []limitspec.Limit
	policy bool
}

// prepare checks req and prepares its call.
func (l *Limiter) prepare(req limitspec.Request) (*call, error) {
	if err := kit.CheckRule(req); err != nil {
		return nil, err
	}
	if req.Policy != nil {
		return l.preparePolicy(req)
	}
	s, args, err := scriptsOf(req.Limit)
	if err != nil {
		return nil, err
	}
	alg := req.Limit.Algorithm().Name
	switch {
	case req.Key == "":
		return nil, kit.BadInput("%s: %s", alg, kit.KeyEmpty)
	case req.Key[0] == '}':
		return nil, kit.BadInput("%s: %s", alg, kit.KeyBrace)
	}
	params := kit.Decimal(args)
	c := &call{lib: s.Library, decide: s.Decide, reset: s.Reset,
		keys:  s.KeyNames(l.o.prefix+kit.StoredKey(req.Key), "", params),
		names: []string{req.Limit.Algorithm().String()}, limits: []limitspec.Limit{req.Limit}}
	for _, in := range s.Inputs {
		c.argv = append(c.argv, req.Inputs[in])
	}
	for _, p := range params {
		c.argv = append(c.argv, p)
		c.resetArgv = append(c.resetArgv, p)
	}
	return c, nil
}

// scriptsOf returns the scripts of lim's algorithm and lim's parameters
// as they take them, lim checked.
func scriptsOf(lim limitspec.Limit) (*kit.Scripts, []int64, error) {
	s, ok := kit.LookupScripts(lim.Algorithm())
	if !ok {
		return nil, nil, kit.BadInput("%s: no scripts of this algorithm are linked in (%T is not a limit of a generated package)", lim.Algorithm(), lim)
	}
	args, err := s.Args(lim)
	return s, args, err
}

// preparePolicy prepares a policy's call (kit.NewPolicyCall): the policy
// script of its library, every limit's keys, and ARGV for each limit its
// algorithm, key infix, number of parameters and parameters. On a Cluster or a Ring it refuses a policy whose keys may
// lie in several slots.
func (l *Limiter) preparePolicy(req limitspec.Request) (*call, error) {
	p := req.Policy
	if err := l.checkSlots(p); err != nil {
		return nil, err
	}
	pc, err := kit.NewPolicyCall(p, req.IDs, l.o.prefix)
	if err != nil {
		return nil, err
	}
	c := &call{lib: pc.Library.Name, decide: pc.Library.Policy, reset: pc.Library.PolicyReset,
		keys: pc.Keys, argv: make([]any, 0, len(pc.Limits)), policy: true}
	for _, v := range pc.Limits {
		c.argv = append(c.argv, v)
	}
	c.resetArgv = c.argv
	for _, pl := range p.Limits() {
		c.names, c.limits = append(c.names, pl.Name), append(c.limits, pl.Limit)
	}
	return c, nil
}

// checkSlots refuses, on a Cluster or a Ring, a policy whose keys may lie
// in several slots.
func (l *Limiter) checkSlots(p *limitspec.Policy) error {
	if l.spread && !p.OneSlot() {
		return kit.BadInput("policy %s counts several identities or a constant (%v), whose keys a Redis Cluster or Ring may place on different nodes: "+
			"no script can decide it atomically there; split it into one policy per identity, or count every limit by one identity "+
			"(docs/semantics.md, \"Policies\")", p.Name(), p.Identities())
	}
	return nil
}

// result decodes a decision's reply: an algorithm's 7 integers, or a
// policy's (its result, the binding index, then each limit's 7).
func (c *call) result(reply any) (limitspec.Result, error) {
	n := len(kit.ReplyFields)
	ints, ok := integers(reply)
	want := n
	if c.policy {
		want = n + 1 + n*len(c.limits)
	}
	if !ok || len(ints) != want {
		return limitspec.Result{}, c.badReply(reply, want)
	}
	decision, ok := fromReply(ints[:n])
	binding, limits := 0, []kit.Reply{decision}
	if c.policy {
		binding, limits = int(ints[n])-1, make([]kit.Reply, len(c.limits))
		for i := range limits {
			from := n + 1 + n*i
			var valid bool
			limits[i], valid = fromReply(ints[from : from+n])
			ok = ok && valid
		}
	}
	if !ok || binding < 0 || binding >= len(limits) {
		return limitspec.Result{}, c.badReply(reply, want)
	}
	out := make([]limitspec.LimitResult, len(limits))
	for i, r := range limits {
		out[i] = kit.LimitResult(c.names[i], c.limits[i], r)
	}
	return kit.Result(decision, binding, out), nil
}

func (c *call) badReply(reply any, want int) error {
	return fmt.Errorf("redislimit: %s: unexpected reply %v: want %d integers (does the server run another version of the scripts?)", c.decide.Name, reply, want)
}

// fromReply is the Reply of a decision's 7 integers, or false when
// allowed is neither 0 nor 1.
func fromReply(r []int64) (kit.Reply, bool) {
	return kit.Reply{Allowed: r[0] == 1, Limit: r[1], Remaining: r[2], RetryAfterMs: r[3], ResetAfterMs: r[4], DelayMs: r[5], Tier: r[6]},
		r[0] == 0 || r[0] == 1
}

// integers is reply as integers, if it is an array of them.
func integers(reply any) ([]int64, bool) {
	arr, ok := reply.([]any)
	if !ok {
		return nil, false
	}
	out := make([]int64, len(arr))
	for i, v := range arr {
		if out[i], ok = v.(int64); !ok {
			return nil, false
		}
	}
	return out, true
}
