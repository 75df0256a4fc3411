package lease_test

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/lease"
)

// recorder is a primary that records the requests it gets.
type recorder struct {
	limitspec.Limiter
	mu   sync.Mutex
	reqs []limitspec.Request
}

func (r *recorder) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Limiter.Limit(ctx, req)
}

// TestCostsDirect: a request with amounts by unit (Costs) reaches the
// primary as it is, Costs included, and takes no lease: two requests of
// 1 request and 400 tokens are counted there as 2 requests and 800
// tokens. A request without Costs then takes a lease of 5 on every
// limit: 7 requests and 805 tokens. The same for a holding policy.
func TestCostsDirect(t *testing.T) {
	p, err := limitspec.NewPolicy("llm",
		limitspec.PolicyLimit{Name: "requests", Identity: "user", Limit: limitspec.FixedWindow{Limit: 100, Window: time.Minute}},
		limitspec.PolicyLimit{Name: "tokens", Identity: "user", Unit: "tokens", Limit: limitspec.FixedWindow{Limit: 10_000, Window: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		policy *limitspec.Policy
	}{
		{"policy", p},
		{"holding policy", p.WithHolds()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, err := goimpl.New(goimpl.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			rec := &recorder{Limiter: store}
			l := newLease(t, rec, lease.Options{Size: 5, For: time.Minute})
			defer l.Close()
			req := limitspec.Request{Policy: tc.policy, IDs: map[string]string{"user": "alice"}, Cost: 1,
				Costs: map[string]int64{"tokens": 400}, Now: at(0)}
			for range 2 {
				if res, err := l.Limit(t.Context(), req); err != nil || !res.Allowed {
					t.Fatalf("%+v, %v; want admitted", res, err)
				}
			}
			if st := l.Stats(); st.Direct != 2 || st.Leases != 0 {
				t.Errorf("stats %+v; want 2 direct, no lease", st)
			}
			for i, got := range rec.reqs {
				if got.Cost != 1 || !maps.Equal(got.Costs, req.Costs) || got.Force {
					t.Errorf("the primary's request %d: Cost %d, Costs %v, Force %v; want 1, %v, false", i, got.Cost, got.Costs, got.Force, req.Costs)
				}
			}
			if got, want := used(t, store, req), []int64{2, 800}; !slices.Equal(got, want) {
				t.Errorf("the primary counts %v; want %v", got, want)
			}
			plain := req
			plain.Costs = nil
			if res, err := l.Limit(t.Context(), plain); err != nil || !res.Allowed {
				t.Fatalf("a request without Costs: %+v, %v; want admitted", res, err)
			}
			if got, want := used(t, store, req), []int64{7, 805}; l.Stats().Leases != 1 || !slices.Equal(got, want) {
				t.Errorf("after a request without Costs: %+v, the primary counts %v; want a lease, %v", l.Stats(), got, want)
			}
		})
	}
}

// used is what lim counts of each limit of req's policy (Quota less
// Remaining), by a peek.
func used(t *testing.T, lim limitspec.Limiter, req limitspec.Request) []int64 {
	t.Helper()
	req.Cost, req.Costs, req.Peek = 0, nil, true
	res, err := lim.Limit(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, lr := range res.Limits {
		out = append(out, lr.Quota-lr.Remaining)
	}
	return out
}
