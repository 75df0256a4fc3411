package rls

import (
	"context"
	"strconv"
	"time"

	"github.com/limitspec/limitspec"
)

// holdOps are the operations by their entry's value.
var holdOps = map[string]limitspec.HoldOp{
	"reserve": limitspec.Reserve, "commit": limitspec.Commit,
	"release": limitspec.Release, "renew": limitspec.Renew,
}

// holdOf is the hold the request's entries of ours (seen) name, nil for
// none, holding for holdFor unless they say otherwise.
func holdOf(seen map[string]string, holdFor time.Duration) (*limitspec.Hold, error) {
	named := false
	for _, k := range []string{HoldEntry, HoldIDEntry, HoldMsEntry} {
		_, given := seen[k]
		named = named || given
	}
	if !named {
		return nil, nil
	}
	op, ok := holdOps[seen[HoldEntry]]
	if !ok {
		return nil, badRequestf("%s must be reserve, commit, release or renew, got %q", HoldEntry, seen[HoldEntry])
	}
	h := &limitspec.Hold{Op: op, ID: seen[HoldIDEntry]}
	timed := op == limitspec.Reserve || op == limitspec.Renew
	ms, given := seen[HoldMsEntry]
	switch {
	case h.ID == "":
		return nil, badRequestf("%s %s needs a %s entry naming the hold", HoldEntry, seen[HoldEntry], HoldIDEntry)
	case given && !timed:
		return nil, badRequestf("%s goes with a reserve or a renew, not a %s", HoldMsEntry, seen[HoldEntry])
	case timed:
		h.For = holdFor
	}
	if given {
		n, err := strconv.ParseInt(ms, 10, 64)
		if err != nil || n < 1 || n > 86_400_000 {
			return nil, badRequestf("%s must be a whole number of ms in [1, 86400000], got %q", HoldMsEntry, ms)
		}
		h.For = time.Duration(n) * time.Millisecond
	}
	return h, nil
}

// hold runs p's hold operation: every descriptor a limit decides must
// count a limit that keeps holds (holds: true), enforce it, and fit one
// call, so that the operation is all or nothing.
func (s *Service) hold(ctx context.Context, p *plan) ([]limitspec.LimitResult, error) {
	holder, ok := s.limiter.(limitspec.Holder)
	if !ok {
		return nil, badRequestf("this service's limiter keeps no holds (%T)", s.limiter)
	}
	for _, it := range p.items {
		if !it.rl.Holds || !it.enforce {
			return nil, badRequestf("a hold's descriptors must each count a limit with holds: true and neither shadow_mode nor quota_mode; %s does not", it.rl.FullKey)
		}
	}
	groups := groupsOf(p.items, true, false, s.perTag)
	if len(groups) != 1 {
		return nil, badRequestf("a hold's descriptors must be decided in one call: two of them count one limit with different values, or (on a Redis Cluster) count different values")
	}
	req, err := s.request(groups[0])
	if err != nil {
		return nil, err
	}
	if p.hold.Op == limitspec.Release || p.hold.Op == limitspec.Renew {
		req.Costs = nil // they take no amount
	}
	res, err := holder.Hold(ctx, req, *p.hold)
	if err != nil {
		return nil, err
	}
	results := make([]limitspec.LimitResult, len(p.items))
	for c, counted := range groups[0] {
		for _, it := range counted.items {
			results[it] = limitOfResult(res, c)
		}
	}
	return results, nil
}
