package denials_test

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
)

// recording is a primary that keeps the requests it gets.
type recording struct {
	limitspec.Limiter
	mu   sync.Mutex
	reqs []limitspec.Request
}

func (r *recording) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Limiter.Limit(ctx, req)
}

// step is a request of TestCostsUncached and what becomes of it.
type step struct {
	cost    int64
	costs   map[string]int64
	force   bool
	peek    bool // Request.Peek: every amount 0
	allowed bool
	primary bool // the primary decides it (not the cache)
}

// TestCostsUncached: requests with amounts by unit (Costs) go to the
// primary as they are, and their denials are not kept, on a policy of
// 1,000,000 requests and 10,000 tokens a minute. A request of 20,000
// (Cost: every limit counts it) is denied for ever by the tokens and
// kept; one of 20,000 requests and 100 tokens is admitted by the
// primary (the denial of a Cost of 20,000 does not stand for it), and
// clears the key's denial; a forced request of 5 tokens clears it too,
// a forced peek (every amount 0) does not. Each step says whether it is
// admitted, and whether the primary (not the cache) decides it.
func TestCostsUncached(t *testing.T) {
	p, err := limitspec.NewPolicy("llm",
		limitspec.PolicyLimit{Name: "requests", Identity: "user", Limit: limitspec.FixedWindow{Limit: 1_000_000, Window: time.Minute}},
		limitspec.PolicyLimit{Name: "tokens", Identity: "user", Unit: "tokens", Limit: limitspec.FixedWindow{Limit: 10_000, Window: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	tokens := func(n int64) map[string]int64 { return map[string]int64{"tokens": n} }
	// A Cost of 20,000 counts 20,000 tokens, above 10,000: denied for
	// ever, by the primary, then by the cache, or again by the primary
	// once its denial is cleared.
	first, cached, again := step{cost: 20_000, primary: true}, step{cost: 20_000}, step{cost: 20_000, primary: true}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a denial with Costs is not kept", []step{
			{cost: 1, costs: tokens(20_000), primary: true},
			{cost: 1, costs: tokens(20_000), primary: true},
			{cost: 1, costs: tokens(100), allowed: true, primary: true},
		}},
		{"a denial of a Cost does not answer Costs", []step{
			first, cached,
			{cost: 20_000, costs: tokens(100), allowed: true, primary: true}, again,
		}},
		{"a forced request of tokens clears the denial", []step{
			first, cached,
			{cost: 1, costs: tokens(5), force: true, allowed: true, primary: true}, again,
		}},
		{"a forced peek keeps it", []step{
			first, cached,
			{peek: true, costs: tokens(0), force: true, allowed: true, primary: true}, cached,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, p, tc.steps) })
	}
}

// runSteps sends steps, requests of user u by policy p, through a cache
// of a memory primary, and checks what becomes of each.
func runSteps(t *testing.T, p *limitspec.Policy, steps []step) {
	t.Helper()
	primary := &recording{Limiter: newMemory(t)}
	cache := newCache(t, primary)
	for i, s := range steps {
		before := len(primary.reqs)
		req := limitspec.Request{Policy: p, IDs: map[string]string{"user": "u"}, Cost: s.cost, Costs: s.costs, Force: s.force, Peek: s.peek, Now: base}
		res, err := cache.Limit(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		asked := len(primary.reqs) > before
		if res.Allowed != s.allowed || asked != s.primary {
			t.Fatalf("step %d: allowed %v, the primary asked %v; want %v, %v", i, res.Allowed, asked, s.allowed, s.primary)
		}
		if got := primary.reqs[len(primary.reqs)-1]; asked && (got.Cost != s.cost || !maps.Equal(got.Costs, s.costs) || got.Force != s.force) {
			t.Errorf("step %d: the primary got Cost %d, Costs %v, Force %v; want %d, %v, %v", i, got.Cost, got.Costs, got.Force, s.cost, s.costs, s.force)
		}
	}
}
