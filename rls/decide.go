package rls

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/rls/config"
)

// counter is one policy limit of a call: a limit counting a tag, at a
// cost, for the items (descriptors) that count it; two descriptors of
// one counter in a request are one limit of the sum of their costs.
type counter struct {
	name, tag string
	limit     limitspec.Limit
	holds     bool // its limit keeps holds: the call's policy is a holding one
	cost      int64
	items     []int
}

// groupsOf sorts the items that enforce their limit (enforce) or not
// into calls: each call counts distinct counters, of distinct names. An
// item whose limit's name a call already counts under another tag (two
// descriptors of one configured limit, of different values) goes to a
// later call. With independent, each item is a call of its own; with
// perTag, a call counts one tag only (a Redis Cluster decides a policy
// whose keys share a hash tag alone).
func groupsOf(items []item, enforce, independent, perTag bool) [][]counter {
	var groups [][]counter
	for i, it := range items {
		if it.enforce != enforce {
			continue
		}
		if independent {
			groups = append(groups, []counter{counterOf(i, it)})
			continue
		}
		groups = place(groups, i, it, perTag)
	}
	return groups
}

// place puts item i into the first group it fits: with its counter (its
// cost added), or beside counters of other names (and, with perTag, of
// its tag); else a new group.
func place(groups [][]counter, i int, it item, perTag bool) [][]counter {
	for g, cs := range groups {
		fits := !perTag || cs[0].tag == it.tag
		for c := range cs {
			switch {
			case cs[c].name != it.name:
			case cs[c].tag == it.tag:
				cs[c].cost = min(cs[c].cost+it.cost, maxCost)
				cs[c].items = append(cs[c].items, i)
				return groups
			default:
				fits = false
			}
		}
		if fits {
			groups[g] = append(cs, counterOf(i, it))
			return groups
		}
	}
	return append(groups, []counter{counterOf(i, it)})
}

// counterOf is the counter of item i alone.
func counterOf(i int, it item) counter {
	return counter{name: it.name, tag: it.tag, limit: it.limit, holds: it.rl.Holds, cost: it.cost, items: []int{i}}
}

// policies keeps the policy of each shape of call (its counters' names
// and limits), so that a limiter's plans and composed scripts are made
// once per shape; up to maxPolicies, then made per call.
type policies struct {
	m sync.Map // string -> *limitspec.Policy
	n atomic.Int64
}

const maxPolicies = 4096

// of returns the policy deciding counters cs: each limit named as its
// counter, counting the identity v<i> and the unit u<i> (its own cost);
// a holding policy when one of them keeps holds.
func (ps *policies) of(cs []counter) (*limitspec.Policy, error) {
	var key strings.Builder
	holds := false
	for _, c := range cs {
		fmt.Fprintf(&key, "%s=%T%v;", c.name, c.limit, c.limit)
		holds = holds || c.holds
	}
	if holds {
		key.WriteString("holds")
	}
	if p, ok := ps.m.Load(key.String()); ok {
		return p.(*limitspec.Policy), nil
	}
	limits := make([]limitspec.PolicyLimit, len(cs))
	for i, c := range cs {
		n := strconv.Itoa(i)
		limits[i] = limitspec.PolicyLimit{Name: c.name, Limit: c.limit, Identity: "v" + n, Unit: "u" + n}
	}
	p, err := limitspec.NewPolicy("rls", limits...)
	if err != nil {
		return nil, err
	}
	if holds {
		p = p.WithHolds()
	}
	if ps.n.Load() < maxPolicies {
		if _, had := ps.m.LoadOrStore(key.String(), p); !had {
			ps.n.Add(1)
		}
	}
	return p, nil
}

// request is the policy request of counters cs, each limit's amount its
// counter's cost (0 included).
func (s *Service) request(cs []counter) (limitspec.Request, error) {
	p, err := s.policies.Load().of(cs)
	if err != nil {
		return limitspec.Request{}, err
	}
	req := limitspec.Request{Policy: p, IDs: make(map[string]string, len(cs)), Costs: make(map[string]int64, len(cs))}
	for i, c := range cs {
		n := strconv.Itoa(i)
		req.IDs["v"+n], req.Costs["u"+n] = c.tag, c.cost
	}
	return req, nil
}

// call decides counters cs as one policy call: with peek, a peek that
// charges nothing; with force, charged even past the limits.
func (s *Service) call(ctx context.Context, cs []counter, peek, force bool) (limitspec.Result, error) {
	req, err := s.request(cs)
	if err != nil {
		return limitspec.Result{}, err
	}
	if peek {
		req.Costs, req.Peek = nil, true
	}
	req.Force = force
	return s.limiter.Limit(ctx, req)
}

// decide decides p's items: first the enforcing ones, all or nothing
// (a call per group), then the others; once a call denies (or a
// descriptor admits nothing), every later call only peeks, charging
// nothing. With Options.Independent each item is decided on its own; a
// forced request (ForceEntry) charges every call. It returns each
// item's result.
func (s *Service) decide(ctx context.Context, p *plan) ([]limitspec.LimitResult, error) {
	results := make([]limitspec.LimitResult, len(p.items))
	denied := false
	for i, k := range p.kinds {
		denied = denied || k == denyAll && enforces(p.rls[i])
	}
	for _, enforce := range []bool{true, false} {
		for _, g := range groupsOf(p.items, enforce, s.opts.Independent, s.perTag) {
			res, err := s.call(ctx, g, denied && !s.opts.Independent && !p.force, p.force)
			if err != nil {
				return nil, err
			}
			denied = denied || enforce && !res.Allowed
			for c, counted := range g {
				for _, it := range counted.items {
					results[it] = limitOfResult(res, c)
				}
			}
		}
	}
	return results, nil
}

// limitOfResult is limit c's result in res; a result without limits (a
// fallback failing open or closed decided without any) gives each limit
// the request's outcome.
func limitOfResult(res limitspec.Result, c int) limitspec.LimitResult {
	if c < len(res.Limits) {
		return res.Limits[c]
	}
	return limitspec.LimitResult{Allowed: res.Allowed, RetryAfter: res.RetryAfter}
}

// enforces reports whether rl's refusals refuse the request: neither
// shadow_mode nor quota_mode.
func enforces(rl *config.RateLimit) bool { return !rl.ShadowMode && !rl.QuotaMode }
