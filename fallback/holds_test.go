package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/internal/faultproxy"
	"github.com/limitspec/limitspec/internal/redistest"
)

// The fallback keeps holds, by its two limiters.
var _ limitspec.Holder = (*fallback.Limiter)(nil)

// TestFaultHoldsDown works the bound of docs/semantics.md ("Holds behind
// the fallback") for a pool of 10 slots shared by two processes
// (Processes: 2): 3 slots are reserved on Redis, then Redis refuses
// connections. The local limiter starts from Redis's last word, 3 slots
// held (until the end of Redis's last hold), and holds its share of the
// 7 left, 3 slots (each reserve costs 2 of its 10); the 4th is denied.
// A commit of a hold Redis keeps fails with Redis's error (it is kept,
// and sent again once Redis is back: TestFaultSettlesOwed); a commit of
// a local one is decided locally. Redis back, the breaker closed again,
// its 3 holds are still there, and none of the local ones: 7 free.
func TestFaultHoldsDown(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	proxy := faultproxy.Start(t, srv.Addr())
	lim := onRedis(t, proxy.Addr(), fallback.Options{Processes: 2, Timeout: time.Second, OpenFor: 50 * time.Millisecond})
	p, err := limitspec.NewPolicy("pool", limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: 10}, Identity: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	req := limitspec.Request{Policy: p.WithHolds(), IDs: map[string]string{"tenant": "acme"}, Cost: 1}
	hold := func(op limitspec.HoldOp, id string) (limitspec.Result, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		r := req
		h := limitspec.Hold{Op: op, ID: id, For: time.Minute}
		if op != limitspec.Reserve {
			h.For = 0
		}
		return lim.Hold(ctx, r, h)
	}
	for i := range 3 {
		if res, err := hold(limitspec.Reserve, fmt.Sprint("redis", i)); err != nil || !res.Allowed || res.Side != limitspec.Primary {
			t.Fatalf("reserve %d on Redis: %+v, %v", i, res, err)
		}
	}
	proxy.Refuse(true)
	openBreaker(t, lim, req)
	admitted := 0
	for i := range 6 {
		res, err := hold(limitspec.Reserve, fmt.Sprint("local", i))
		if err != nil || res.Side != limitspec.Fallback {
			t.Fatalf("reserve %d without Redis: %+v, %v", i, res, err)
		}
		if res.Allowed {
			admitted++
		}
	}
	if admitted != 3 {
		t.Errorf("%d local reserves admitted; want 3, the process's share of the 7 Redis left", admitted)
	}
	if _, err := hold(limitspec.Commit, "redis0"); !errors.Is(err, limitspec.ErrUnavailable) {
		t.Errorf("a commit of Redis's hold without Redis: %v; want ErrUnavailable", err)
	}
	if res, err := hold(limitspec.Commit, "local0"); err != nil || res.Side != limitspec.Fallback {
		t.Errorf("a commit of a local hold: %+v, %v; want decided locally", res, err)
	}
	proxy.Refuse(false)
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := lim.Limit(t.Context(), limitspec.Request{Policy: req.Policy, IDs: req.IDs, Peek: true})
		if err == nil && res.Side == limitspec.Primary {
			if got := res.Limits[0].Remaining; got != 7 {
				t.Errorf("Redis back: %d slots free; want 7 (its 3 holds kept, none of the local ones)", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Redis back, the breaker never let a call through: %+v, %v", res, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// holdingSwitch is a holding primary that fails while down is set.
type holdingSwitch struct {
	*goimpl.Limiter
	down atomic.Bool
}

func (s *holdingSwitch) Hold(ctx context.Context, req limitspec.Request, h limitspec.Hold) (limitspec.Result, error) {
	if s.down.Load() {
		return limitspec.Result{}, errors.Join(limitspec.ErrUnavailable, errOff)
	}
	return s.Limiter.Hold(ctx, req, h)
}

// TestLocalHoldEndsAfterOutage: 4 slots; while the primary fails, 4
// jobs reserve a slot each, locally. The primary back, each job commits:
// the primary holds none of them (NOHOLD), so the commit runs on the
// local limiter, which ends the job's hold. A commit of an id held
// nowhere still answers ErrNoHold. The primary failing again, the local
// limiter has its 4 slots free: a 5th job's reserve is admitted.
func TestLocalHoldEndsAfterOutage(t *testing.T) {
	primary := &holdingSwitch{Limiter: memoryLimiter(t)}
	lim, err := fallback.New(primary, memoryLimiter(t), fallback.Options{Failures: 1, OpenFor: time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	p, err := limitspec.NewPolicy("jobs", limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: 4}, Identity: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	req := limitspec.Request{Policy: p.WithHolds(), IDs: map[string]string{"tenant": "acme"}, Cost: 1}
	hold := func(op limitspec.HoldOp, id string) (limitspec.Result, error) {
		h := limitspec.Hold{Op: op, ID: id}
		if op == limitspec.Reserve {
			h.For = time.Hour
		}
		return lim.Hold(t.Context(), req, h)
	}
	primary.down.Store(true)
	openBreaker(t, lim, req)
	for i := range 4 {
		if res, err := hold(limitspec.Reserve, fmt.Sprint("job", i)); err != nil || !res.Allowed || res.Side != limitspec.Fallback {
			t.Fatalf("job%d's reserve while the primary fails: %+v, %v; want admitted locally", i, res, err)
		}
	}
	primary.down.Store(false)
	time.Sleep(5 * time.Millisecond) // past OpenFor: the next call probes the primary
	for i := range 4 {
		if res, err := hold(limitspec.Commit, fmt.Sprint("job", i)); err != nil || res.Side != limitspec.Fallback {
			t.Errorf("job%d's commit, the primary back: %+v, %v; want it ended locally", i, res, err)
		}
	}
	if _, err := hold(limitspec.Commit, "never"); !errors.Is(err, limitspec.ErrNoHold) {
		t.Errorf("a commit of an id held nowhere: %v; want ErrNoHold", err)
	}
	primary.down.Store(true)
	openBreaker(t, lim, req)
	if res, err := hold(limitspec.Reserve, "job4"); err != nil || !res.Allowed {
		t.Errorf("job4's reserve, the primary failing again: %+v, %v; want admitted (the local slots were ended)", res, err)
	}
}

// memoryLimiter is an in-process limiter, closed with the test.
func memoryLimiter(t *testing.T) *goimpl.Limiter {
	t.Helper()
	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lim.Close() })
	return lim
}

// TestFaultHoldsStartFromRedis: an LLM gateway's policy of 3 slots and
// 1,000 tokens an hour, one process. On Redis, job a spends 400 tokens
// and job b holds a slot and 100 tokens; then Redis refuses connections.
// The local limiter starts from Redis's last word (1 slot held, 500
// tokens used or held), not from a full limit: jobs c and d take the 2
// slots left, e is denied for want of a slot; c commits 300 tokens, and
// f, asking 200, is denied by the tokens (500 + 300 + d's 100 + 200 >
// 1,000). Started full, the local limiter would have admitted e and f:
// an hour's tokens twice over the outage. Redis back, it is told the 300
// tokens c spent: it counts 400 + 300 spent and b's 100 held, 200 left;
// and when d, held locally, commits 50 tokens (Redis holds nothing for
// it: the local limiter ends it), Redis is told those too: 150 left.
func TestFaultHoldsStartFromRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	proxy := faultproxy.Start(t, srv.Addr())
	lim := onRedis(t, proxy.Addr(), fallback.Options{Timeout: time.Second, OpenFor: 50 * time.Millisecond})
	p, err := limitspec.NewPolicy("llm",
		limitspec.PolicyLimit{Name: "slots", Unit: "slots", Limit: limitspec.Concurrency{Limit: 3}, Identity: "tenant"},
		limitspec.PolicyLimit{Name: "tokens", Unit: "tokens", Limit: limitspec.FixedWindow{Limit: 1000, Window: time.Hour}, Identity: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	hold := func(op limitspec.HoldOp, id string, tokens int64) (limitspec.Result, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		req := limitspec.Request{Policy: p.WithHolds(), IDs: map[string]string{"tenant": "acme"},
			Costs: map[string]int64{"slots": 1, "tokens": tokens}}
		h := limitspec.Hold{Op: op, ID: id}
		if op == limitspec.Reserve {
			h.For = time.Minute
		}
		return lim.Hold(ctx, req, h)
	}
	for _, s := range []struct {
		op     limitspec.HoldOp
		id     string
		tokens int64
	}{{limitspec.Reserve, "a", 400}, {limitspec.Commit, "a", 400}, {limitspec.Reserve, "b", 100}} {
		if res, err := hold(s.op, s.id, s.tokens); err != nil || !res.Allowed || res.Side != limitspec.Primary {
			t.Fatalf("%v %s on Redis: %+v, %v", s.op, s.id, res, err)
		}
	}
	proxy.Refuse(true)
	openBreaker(t, lim, limitspec.Request{Policy: p.WithHolds(), IDs: map[string]string{"tenant": "acme"}})
	for _, s := range []struct {
		op      limitspec.HoldOp
		id      string
		tokens  int64
		allowed bool
		binding string // when denied
	}{
		{limitspec.Reserve, "c", 100, true, ""},
		{limitspec.Reserve, "d", 100, true, ""},
		{limitspec.Reserve, "e", 100, false, "slots"},
		{limitspec.Commit, "c", 300, true, ""},
		{limitspec.Reserve, "f", 200, false, "tokens"},
	} {
		res, err := hold(s.op, s.id, s.tokens)
		if err != nil || res.Allowed != s.allowed || res.Side != limitspec.Fallback ||
			!s.allowed && res.Limits[res.Binding].Name != s.binding {
			t.Fatalf("%v %s of %d tokens without Redis: %+v, %v; want allowed %v (bound by %q), decided locally",
				s.op, s.id, s.tokens, res, err, s.allowed, s.binding)
		}
	}
	proxy.Refuse(false)
	peek := limitspec.Request{Policy: p.WithHolds(), IDs: map[string]string{"tenant": "acme"}, Peek: true}
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := lim.Limit(t.Context(), peek)
		if err == nil && res.Side == limitspec.Primary {
			if got := res.Limits[1].Remaining; got != 200 {
				t.Errorf("Redis back: %d tokens left; want 200 (400 and c's 300 spent, b's 100 held)", got)
			}
			if res, err := hold(limitspec.Commit, "d", 50); err != nil || res.Side != limitspec.Fallback {
				t.Fatalf("d's commit, Redis back: %+v, %v; want it ended locally", res, err)
			}
			if res, err := lim.Limit(t.Context(), peek); err != nil || res.Side != limitspec.Primary || res.Limits[1].Remaining != 150 {
				t.Errorf("after d's commit: %+v, %v; want Redis's word, 150 tokens left", res, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Redis back, the breaker never let a call through: %+v, %v", res, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// openBreaker sends reserves of req's policy, which fail, until lim's
// breaker opens: while it is closed, a reserve that fails is denied, not
// decided locally (holds.go).
func openBreaker(t *testing.T, lim *fallback.Limiter, req limitspec.Request) {
	t.Helper()
	r := limitspec.Request{Policy: req.Policy, IDs: req.IDs, Cost: 1}
	for i := 0; lim.Stats().State == fallback.Closed; i++ {
		if i == 100 {
			t.Fatalf("the breaker never opened: %+v", lim.Stats())
		}
		res, err := lim.Hold(t.Context(), r, limitspec.Hold{Op: limitspec.Reserve, ID: "opening", For: time.Second})
		if err != nil || res.Allowed || res.Side != limitspec.FailClosed {
			t.Fatalf("a reserve that fails while the breaker is closed: %+v, %v; want denied (fail-closed)", res, err)
		}
	}
}
