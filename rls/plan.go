package rls

import (
	"fmt"
	"hash/fnv"
	"math"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/rls/config"
)

// kind is what a descriptor's status says before any decision.
type kind int

const (
	notLimited kind = iota // no limit applies, or another replaces it
	unlimited              // its limit is unlimited
	denyAll                // its limit admits nothing (requests_per_unit 0)
	decided                // its limit decides it (an item)
)

// item is one descriptor a limit decides: the counter it counts
// (limit and tag), its cost, and whether it enforces its limit (not
// shadow_mode nor quota_mode).
type item struct {
	desc    int // the descriptor's index in the request
	rl      *config.RateLimit
	limit   limitspec.Limit
	name    string // the policy limit's name: the counter's, with tag
	tag     string
	cost    int64
	enforce bool
}

// plan is a request's decisions to make: each descriptor's kind, and
// the items of those a limit decides, in descriptor order.
type plan struct {
	kinds []kind
	rls   []*config.RateLimit // each descriptor's limit, nil when none
	tags  []string            // and the counter it counts
	items []item
	hold  *limitspec.Hold // the hold the request operates on, if any
	force bool            // a forced charge (ForceEntry)
}

// badRequest is a request the service refuses (gRPC InvalidArgument).
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func badRequestf(format string, args ...any) error {
	return &badRequest{fmt.Sprintf(format, args...)}
}

// planOf works out req's decisions under cfg: each descriptor's limit
// (its override, or the one cfg matches), its cost, and the limits that
// others replace (the reference's replaces, by name).
func planOf(cfg *config.Config, req *pb.RateLimitRequest, holdFor time.Duration) (*plan, error) {
	if req.GetDomain() == "" {
		return nil, badRequestf("rate limit domain must not be empty")
	}
	if len(req.GetDescriptors()) == 0 {
		return nil, badRequestf("rate limit descriptor list must not be empty")
	}
	n := len(req.Descriptors)
	p := &plan{kinds: make([]kind, n), rls: make([]*config.RateLimit, n), tags: make([]string, n)}
	ours, err := ourEntries(req.Descriptors)
	if err != nil {
		return nil, err
	}
	if p.hold, err = holdOf(ours, holdFor); err != nil {
		return nil, err
	}
	if p.force, err = forceOf(ours); err != nil {
		return nil, err
	}
	replaced := map[string]bool{}
	for i, d := range req.Descriptors {
		if d.GetIsNegativeHits() {
			return nil, badRequestf("descriptor %d: is_negative_hits is not supported: a limit gives back what a hold reserved by releasing it (see the README's Envoy section)", i)
		}
		rl, tag, err := limitOf(cfg, req.Domain, d)
		if err != nil {
			return nil, fmt.Errorf("descriptor %d: %w", i, err)
		}
		p.rls[i], p.tags[i] = rl, tag
		if rl != nil {
			for _, r := range rl.Replaces {
				replaced[r] = true
			}
		}
	}
	for i, d := range req.Descriptors {
		rl := p.rls[i]
		switch {
		case rl == nil || rl.Name != "" && replaced[rl.Name]:
			p.kinds[i], p.rls[i] = notLimited, nil
		case rl.Unlimited:
			p.kinds[i] = unlimited
		case rl.DenyAll:
			p.kinds[i] = denyAll
		default:
			cost, err := costOf(req, d)
			if err != nil {
				return nil, fmt.Errorf("descriptor %d: %w", i, err)
			}
			p.kinds[i] = decided
			p.items = append(p.items, item{desc: i, rl: rl, limit: rl.Limit, name: nameOf(rl),
				tag: p.tags[i], cost: cost, enforce: enforces(rl)})
		}
	}
	return p, nil
}

// limitOf is descriptor d's limit and the counter it counts: its
// override (a fixed window of the unit and requests it gives, counting
// the domain and entries), or the one cfg matches.
func limitOf(cfg *config.Config, domain string, d *ratelimitv3.RateLimitDescriptor) (*config.RateLimit, string, error) {
	entries := make([]config.Entry, 0, len(d.GetEntries()))
	for _, e := range d.GetEntries() {
		if !isOurEntry(e.GetKey()) {
			entries = append(entries, config.Entry{Key: e.GetKey(), Value: e.GetValue()})
		}
	}
	if o := d.GetLimit(); o != nil {
		rl, err := config.Override(config.Unit(o.GetUnit()), o.GetRequestsPerUnit())
		if err != nil {
			return nil, "", badRequestf("%v", err)
		}
		return rl, config.Tag(domain, entries), nil
	}
	m := cfg.Match(domain, entries)
	return m.Limit, m.Tag, nil
}

// costOf is descriptor d's cost: its hits_addend when set (0 included),
// else the request's, 0 counting as 1 (the reference's rule).
func costOf(req *pb.RateLimitRequest, d *ratelimitv3.RateLimitDescriptor) (int64, error) {
	cost := uint64(max(1, req.GetHitsAddend()))
	if h := d.GetHitsAddend(); h != nil {
		cost = h.GetValue()
	}
	if cost > maxCost {
		return 0, badRequestf("hits_addend %d is above %d", cost, uint64(maxCost))
	}
	return int64(cost), nil
}

// maxCost is the largest cost a limiter takes (2^53 - 1: exact in Lua).
const maxCost = 1<<53 - 1

// nameOf names rl's counters among a policy's limits: "r" and the hex of
// a 64-bit hash of its path (FullKey), which a reload keeps; an override
// is "override", whatever its unit and requests.
func nameOf(rl *config.RateLimit) string {
	if rl.FullKey == config.OverrideKey {
		return "override"
	}
	h := fnv.New64a()
	h.Write([]byte(rl.FullKey))
	return fmt.Sprintf("r%016x", h.Sum64())
}

// remaining is n as a uint32, clamped.
func remaining(n int64) uint32 {
	return uint32(min(max(n, 0), math.MaxUint32))
}
