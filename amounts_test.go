package limitspec_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/denials"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/lease"
	"github.com/limitspec/limitspec/redislimit"
)

// TestDefaultAmounts: a request that leaves its Cost 0 is charged 1
// (docs/semantics.md, "Amounts in Go"), by every limiter of the module, as
// x/time/rate's Allow charges 1; a Peek asks for nothing, and one that
// gives an amount is refused; a limit a request's Costs do not name
// counts 1; a release takes no amount. (Before, a Cost left 0 was a
// peek: three requests on a limit of 1 were all admitted.)
func TestDefaultAmounts(t *testing.T) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t).Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	newLocal := func(t *testing.T) *goimpl.Limiter {
		l, err := goimpl.New(goimpl.Options{NoSweeper: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	newRedis := func(t *testing.T) *redislimit.Limiter {
		l, err := redislimit.New(ctx, rdb, redislimit.Options{Prefix: strings.ReplaceAll(t.Name(), "/", ".") + ":"})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	limiters := []struct {
		name string
		make func(t *testing.T) (limitspec.Limiter, error)
	}{
		{"goimpl", func(t *testing.T) (limitspec.Limiter, error) { return newLocal(t), nil }},
		{"redislimit", func(t *testing.T) (limitspec.Limiter, error) { return newRedis(t), nil }},
		{"fallback", func(t *testing.T) (limitspec.Limiter, error) {
			return fallback.New(newRedis(t), newLocal(t), fallback.Options{Timeout: 10 * time.Second})
		}},
		{"denials", func(t *testing.T) (limitspec.Limiter, error) { return denials.New(newLocal(t), denials.Options{}) }},
		{"lease", func(t *testing.T) (limitspec.Limiter, error) { return lease.New(newLocal(t), lease.Options{Size: 1}) }},
	}
	one := limitspec.FixedWindow{Limit: 1, Window: time.Minute}
	gateway, err := limitspec.NewPolicy("gateway",
		limitspec.PolicyLimit{Name: "requests", Identity: "user", Limit: limitspec.FixedWindow{Limit: 2, Window: time.Minute}},
		limitspec.PolicyLimit{Name: "tokens", Identity: "user", Unit: "tokens", Limit: limitspec.FixedWindow{Limit: 100, Window: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(1_700_000_000_000)
	user := map[string]string{"user": "ann"}
	for _, lt := range limiters {
		t.Run(lt.name, func(t *testing.T) {
			lim, err := lt.make(t)
			if err != nil {
				t.Fatal(err)
			}
			for i, tc := range []struct {
				name      string
				req       limitspec.Request
				allowed   bool
				remaining []int64 // each limit's, after it
				refused   string  // in the error, when refused
			}{
				{name: "a peek of a fresh key", req: limitspec.Request{Key: "k", Limit: one, Peek: true}, allowed: true, remaining: []int64{1}},
				{name: "no cost: 1", req: limitspec.Request{Key: "k", Limit: one}, allowed: true, remaining: []int64{0}},
				{name: "no cost again: 1, denied", req: limitspec.Request{Key: "k", Limit: one}, remaining: []int64{0}},
				{name: "a peek of a cost", req: limitspec.Request{Key: "k", Limit: one, Peek: true, Cost: 2}, refused: "a peek asks for nothing: cost must be 0, got 2"},
				{name: "tokens alone: requests count 1", req: limitspec.Request{Policy: gateway, IDs: user, Costs: map[string]int64{"tokens": 30}},
					allowed: true, remaining: []int64{1, 70}},
				{name: "a policy's peek", req: limitspec.Request{Policy: gateway, IDs: user, Peek: true}, allowed: true, remaining: []int64{1, 70}},
				{name: "tokens 0 named: requests count 1", req: limitspec.Request{Policy: gateway, IDs: user, Costs: map[string]int64{"tokens": 0}},
					allowed: true, remaining: []int64{0, 70}},
				{name: "a peek of tokens", req: limitspec.Request{Policy: gateway, IDs: user, Peek: true, Costs: map[string]int64{"tokens": 5}},
					refused: `a peek asks for nothing: costs["tokens"] must be 0, got 5`},
			} {
				tc.req.Now = now.Add(time.Duration(i) * time.Millisecond)
				res, err := lim.Limit(ctx, tc.req)
				if tc.refused != "" {
					if !errors.Is(err, limitspec.ErrBadInput) || !strings.Contains(err.Error(), tc.refused) {
						t.Errorf("%s: %v; want ErrBadInput saying %q", tc.name, err, tc.refused)
					}
					continue
				}
				if err != nil || res.Allowed != tc.allowed || len(res.Limits) != len(tc.remaining) {
					t.Fatalf("%s: %+v, %v; want allowed %v", tc.name, res, err, tc.allowed)
				}
				for j, want := range tc.remaining {
					if got := res.Limits[j].Remaining; got != want {
						t.Errorf("%s: limit %d remaining %d, want %d", tc.name, j, got, want)
					}
				}
			}
			if h, ok := lim.(limitspec.Holder); ok {
				holdDefaults(t, h, now.Add(time.Second))
			}
		})
	}
}

// holdDefaults: a reserve and a commit with no Cost take 1, a release
// takes none (it is not refused for want of a cost of 0).
func holdDefaults(t *testing.T, h limitspec.Holder, now time.Time) {
	ctx := context.Background()
	slots, err := limitspec.NewPolicy("slots", limitspec.PolicyLimit{Name: "slots", Identity: "user", Limit: limitspec.Concurrency{Limit: 2}})
	if err != nil {
		t.Fatal(err)
	}
	req := limitspec.Request{Policy: slots.WithHolds(), IDs: map[string]string{"user": "bo"}, Now: now}
	for _, step := range []struct {
		op        limitspec.HoldOp
		id        string
		remaining int64
	}{
		{limitspec.Reserve, "a", 1},
		{limitspec.Reserve, "b", 0},
		{limitspec.Release, "a", 1},
		{limitspec.Commit, "b", 2}, // a concurrency limit: a commit frees the slot, and charges nothing it keeps
	} {
		hold := limitspec.Hold{Op: step.op, ID: step.id}
		if step.op == limitspec.Reserve {
			hold.For = time.Minute
		}
		res, err := h.Hold(ctx, req, hold)
		if err != nil || !res.Allowed || res.Limits[0].Remaining != step.remaining {
			t.Fatalf("%v %s with no Cost: %+v, %v; want allowed, %d slots left", step.op, step.id, res, err, step.remaining)
		}
	}
}
