package oracle

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// holdStep is one call of a worked example of holds: op is decide,
// reserve, commit, release or renew; n is the cost, the amount or what
// was spent; the result must be allowed or not with remaining left, or
// the error wantErr (ErrNoHold, ErrBadInput).
type holdStep struct {
	op        string
	now       int64
	id        string
	n, holdMs int64
	allowed   bool
	remaining int64
	wantErr   error
	// waits, when set, are the retry_after_ms and reset_after_ms the
	// result must give.
	waits *[2]int64
	// costs, when set, are each limit's cost in n's place.
	costs []int64
}

func (s holdStep) run(h *HoldingPolicy, ids map[string]string) (PolicyResult, error) {
	costs := s.costs
	if costs == nil {
		costs = h.Policy().Every(s.n)
	}
	return h.Run(ids, s.op, s.id, s.now, costs, s.holdMs)
}

// runHolds runs steps on h for the identity values ids.
func runHolds(t *testing.T, h *HoldingPolicy, ids map[string]string, steps []holdStep) {
	t.Helper()
	for i, s := range steps {
		r, err := s.run(h, ids)
		switch {
		case s.wantErr != nil:
			if !errors.Is(err, s.wantErr) {
				t.Fatalf("step %d (%s at %d): %+v, %v; want %v", i, s.op, s.now, r.Result, err, s.wantErr)
			}
		case err != nil || r.Allowed != s.allowed || r.Remaining != s.remaining:
			t.Fatalf("step %d (%s at %d): %+v, %v; want allowed %v, %d remaining", i, s.op, s.now, r.Result, err, s.allowed, s.remaining)
		case s.waits != nil && [2]int64{r.RetryAfterMs, r.ResetAfterMs} != *s.waits:
			t.Fatalf("step %d (%s at %d): %+v; want retry_after_ms and reset_after_ms %v", i, s.op, s.now, r.Result, *s.waits)
		}
	}
}

// oneLimit is a policy of the single limit of algorithm under params,
// counting the identity user.
func oneLimit(t *testing.T, algorithm string, params map[string]int64) *HoldingPolicy {
	t.Helper()
	h, err := NewHoldingPolicy("p", []PolicyLimit{{Name: "l", Algorithm: algorithm, Identity: "user", Params: params}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestHoldsWorkedExamples: the holds of the proposed design on a fixed
// window of 10 per 1000 ms, the expected values worked out by hand from
// it (a live hold counts as a charge made now; commit charges what was
// spent, forced; an ended hold counts for nothing).
func TestHoldsWorkedExamples(t *testing.T) {
	tests := []struct {
		name  string
		steps []holdStep
	}{
		{"reserve, decide beside it, commit less", []holdStep{
			{op: "reserve", now: 0, id: "r1", n: 6, holdMs: 500, allowed: true, remaining: 4},
			{op: "decide", now: 1, n: 5, allowed: false, remaining: 4}, // 5 + 6 > 10; 4 left beside the hold
			{op: "decide", now: 2, n: 4, allowed: true, remaining: 0},
			{op: "commit", now: 3, id: "r1", n: 2, allowed: true, remaining: 4}, // 4 + 2 charged
			{op: "decide", now: 4, n: 1, allowed: true, remaining: 3},
			{op: "commit", now: 5, id: "r1", n: 2, allowed: true, remaining: 4}, // a retry: the first reply, nothing charged
			{op: "commit", now: 5, id: "r1", n: 3, wantErr: ErrNoHold},          // not a retry: nothing is held
			{op: "release", now: 5, id: "r1", wantErr: ErrNoHold},               // nor is a release
			{op: "decide", now: 6, n: 3, allowed: true, remaining: 0},
			{op: "decide", now: 7, n: 1, allowed: false, remaining: 0},
		}},
		{"a release sent again gets its reply, until REQUEST_MS has passed", []holdStep{
			{op: "reserve", now: 0, id: "r", n: 3, holdMs: 100000, allowed: true, remaining: 7},
			{op: "release", now: 10, id: "r", allowed: true, remaining: 10},
			{op: "decide", now: 20, n: 4, allowed: true, remaining: 6},
			{op: "release", now: 30, id: "r", allowed: true, remaining: 10}, // the first reply
			{op: "release", now: 10 + RequestMs - 1, id: "r", allowed: true, remaining: 10},
			{op: "release", now: 10 + RequestMs, id: "r", wantErr: ErrNoHold},
			{op: "reserve", now: 10 + RequestMs, id: "r", n: 2, holdMs: 100, allowed: true, remaining: 8}, // a new hold
		}},
		{"a hold ends by itself", []holdStep{
			{op: "reserve", now: 0, id: "r", n: 6, holdMs: 100, allowed: true, remaining: 4},
			{op: "decide", now: 99, n: 5, allowed: false, remaining: 4},
			{op: "decide", now: 100, n: 5, allowed: true, remaining: 5}, // ended at 100, charged nothing
			{op: "release", now: 101, id: "r", wantErr: ErrNoHold},
		}},
		{"renew, then release", []holdStep{
			{op: "reserve", now: 0, id: "a", n: 7, holdMs: 100, allowed: true, remaining: 3},
			{op: "renew", now: 50, id: "a", holdMs: 100, allowed: true, remaining: 3}, // now until 150
			{op: "decide", now: 120, n: 4, allowed: false, remaining: 3},
			{op: "release", now: 130, id: "a", allowed: true, remaining: 10},
			{op: "decide", now: 140, n: 10, allowed: true, remaining: 0},
		}},
		{"spending more than was held", []holdStep{
			{op: "reserve", now: 0, id: "x", n: 3, holdMs: 1000, allowed: true, remaining: 7},
			{op: "commit", now: 1, id: "x", n: 15, allowed: false, remaining: 0}, // 15 charged: over the limit
			{op: "decide", now: 2, n: 1, allowed: false, remaining: 0},
			{op: "decide", now: 1000, n: 10, allowed: true, remaining: 0}, // the next window
		}},
		{"refusals change nothing", []holdStep{
			{op: "release", now: 0, id: "never", wantErr: ErrNoHold},
			{op: "reserve", now: 0, id: "big", n: 11, holdMs: 100, allowed: false, remaining: 10}, // denied: holds nothing
			{op: "release", now: 1, id: "big", wantErr: ErrNoHold},
			{op: "reserve", now: 2, id: "h", n: 5, holdMs: 100, allowed: true, remaining: 5},
			{op: "reserve", now: 3, id: "h", n: 1, holdMs: 100, wantErr: ErrBadInput}, // h already holds
			{op: "commit", now: 4, id: "h", n: -1, wantErr: ErrBadInput},              // the hold stays
			{op: "release", now: 5, id: "h", allowed: true, remaining: 10},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := oneLimit(t, "fixed_window", map[string]int64{"limit": 10, "window_ms": 1000})
			runHolds(t, h, map[string]string{"user": "k"}, tt.steps)
		})
	}
}

// TestHoldWaits: a hold counts whole until its end, longer here than
// the window: the waits of a fixed window of 10 per 1000 ms beside a
// hold of 6 until 5000 are the hold's end, or the window's when it comes
// later.
func TestHoldWaits(t *testing.T) {
	h := oneLimit(t, "fixed_window", map[string]int64{"limit": 10, "window_ms": 1000})
	waits := func(retry, reset int64) *[2]int64 { return &[2]int64{retry, reset} }
	runHolds(t, h, map[string]string{"user": "k"}, []holdStep{
		{op: "reserve", now: 0, id: "h", n: 6, holdMs: 5000, allowed: true, remaining: 4, waits: waits(-1, 5000)},
		{op: "decide", now: 1, n: 5, allowed: false, remaining: 4, waits: waits(4999, 4999)},    // 5 fits once the hold ends
		{op: "decide", now: 2, n: 4, allowed: true, remaining: 0, waits: waits(-1, 4998)},       // the window ends at 1000, the hold at 5000
		{op: "decide", now: 1000, n: 5, allowed: false, remaining: 4, waits: waits(4000, 4000)}, // a new window: 5 + 6 still > 10 until 5000
		{op: "decide", now: 1001, n: 11, allowed: false, remaining: 4, waits: waits(-1, 3999)},  // more than the limit: never
	})
}

// TestHoldsOnGCRA: holds count on a gcra of a burst of 3, one per s, as
// charges made now: beside a hold of 2, one request fits and a second
// does not; once released, 2 more fit.
func TestHoldsOnGCRA(t *testing.T) {
	h := oneLimit(t, "gcra", map[string]int64{"burst": 3, "rate": 1, "period_ms": 1000})
	runHolds(t, h, map[string]string{"user": "k"}, []holdStep{
		{op: "reserve", now: 0, id: "a", n: 2, holdMs: 5000, allowed: true, remaining: 1},
		{op: "decide", now: 0, n: 1, allowed: true, remaining: 0},
		{op: "decide", now: 0, n: 1, allowed: false, remaining: 0},
		{op: "release", now: 0, id: "a", allowed: true, remaining: 2},
		{op: "decide", now: 0, n: 2, allowed: true, remaining: 0},
		{op: "decide", now: 0, n: 1, allowed: false, remaining: 0},
	})
}

// TestHoldsOnAPolicy: a policy of 10 per s per user and 12 per s in all
// holds all or nothing. Bob's reservation of 8 fits both; Ann's of 5
// fits her own limit but not the global one beside Bob's hold, so it
// holds nothing; Bob's commit of 3 leaves 9 globally, and Ann's 5 fit.
func TestHoldsOnAPolicy(t *testing.T) {
	per := map[string]int64{"limit": 10, "window_ms": 1000}
	all := map[string]int64{"limit": 12, "window_ms": 1000}
	h, err := NewHoldingPolicy("p", []PolicyLimit{
		{Name: "user", Algorithm: "fixed_window", Identity: "user", Params: per},
		{Name: "global", Algorithm: "fixed_window", Constant: "all", Params: all},
	})
	if err != nil {
		t.Fatal(err)
	}
	bob, ann := map[string]string{"user": "bob"}, map[string]string{"user": "ann"}
	runHolds(t, h, bob, []holdStep{
		{op: "reserve", now: 0, id: "b", n: 8, holdMs: 500, allowed: true, remaining: 2}, // binding: user, 2/10 below 4/12
	})
	runHolds(t, h, ann, []holdStep{
		{op: "reserve", now: 1, id: "a", n: 5, holdMs: 500, allowed: false, remaining: 4}, // global: 5 + 8 > 12
		{op: "commit", now: 2, id: "a", n: 5, wantErr: ErrNoHold},                         // held on neither limit
	})
	runHolds(t, h, bob, []holdStep{
		{op: "commit", now: 3, id: "b", n: 3, allowed: true, remaining: 7}, // user 10 - 3; global 12 - 3 = 9
	})
	runHolds(t, h, ann, []holdStep{
		{op: "reserve", now: 4, id: "a", n: 5, holdMs: 500, allowed: true, remaining: 4}, // global 12 - 3 - 5 binds
	})
}

// TestHoldsNeverOverAdmit drives random decisions, reservations, commits
// of at most what was held, releases and renewals on a fixed window of
// 10 per 1000 ms, and counts, apart from the model, what each window was
// charged and what is held: at every step the window's charges and the
// live holds stay within the limit (and each kind of step happens at
// least 100 times, so that the trace cannot pass by doing nothing).
func TestHoldsNeverOverAdmit(t *testing.T) {
	const limit, window = 10, 1000
	rng := rand.New(rand.NewPCG(29, 1))
	h := oneLimit(t, "fixed_window", map[string]int64{"limit": limit, "window_ms": window})
	ids := map[string]string{"user": "k"}
	charged := map[int64]int64{} // by window start
	held := map[string]hold{}    // by id, as the steps made them
	live := func(now int64) (sum int64) {
		for _, x := range held {
			if x.until > now {
				sum += x.amount
			}
		}
		return sum
	}
	now, did := int64(0), map[string]int{}
	for step := range 20000 {
		now += rng.Int64N(40)
		id := fmt.Sprint("r", rng.IntN(6))
		x, isHeld := held[id]
		isHeld = isHeld && x.until > now
		switch op := rng.IntN(5); {
		case op == 0:
			cost := 1 + rng.Int64N(4)
			if r, err := h.Decide(ids, now, cost); err == nil && r.Allowed {
				charged[now-now%window] += cost
				did["admitted"]++
			}
		case op == 1 && !isHeld:
			amount, holdMs := 1+rng.Int64N(5), 1+rng.Int64N(300)
			if r, err := h.Run(ids, "reserve", id, now, []int64{amount}, holdMs); err == nil && r.Allowed {
				held[id] = hold{amount: amount, until: now + holdMs}
				did["held"]++
			} else if err == nil {
				did["refused a hold"]++
			}
		case op == 2 && isHeld:
			spent := rng.Int64N(x.amount + 1)
			if _, err := h.Run(ids, "commit", id, now, []int64{spent}, 0); err != nil {
				t.Fatalf("step %d: commit of a live hold: %v", step, err)
			}
			delete(held, id)
			charged[now-now%window] += spent
			did["committed"]++
		case op == 3 && isHeld:
			if _, err := h.Run(ids, "release", id, now, []int64{0}, 0); err != nil {
				t.Fatalf("step %d: release of a live hold: %v", step, err)
			}
			delete(held, id)
		case op == 4 && isHeld:
			holdMs := 1 + rng.Int64N(300)
			if _, err := h.Run(ids, "renew", id, now, []int64{0}, holdMs); err != nil {
				t.Fatalf("step %d: renew of a live hold: %v", step, err)
			}
			held[id] = hold{amount: x.amount, until: now + holdMs}
		}
		if c, l := charged[now-now%window], live(now); c+l > limit {
			t.Fatalf("step %d at %d: %d charged in the window and %d held, over the limit of %d", step, now, c, l, limit)
		}
	}
	for _, what := range []string{"admitted", "held", "refused a hold", "committed"} {
		if did[what] < 100 {
			t.Errorf("%s %d times in 20000 steps: the trace tries too little (%v)", what, did[what], did)
		}
	}
}

// gateway is an LLM gateway's holding policy, worked by hand in the
// tests below: 2 slots, 3 requests a minute and 1000 tokens a minute per
// key, each limit counting its own unit.
func gateway(t *testing.T) *HoldingPolicy {
	t.Helper()
	h, err := NewHoldingPolicy("gw", []PolicyLimit{
		{Name: "slots", Algorithm: "concurrency", Identity: "key", Params: map[string]int64{"limit": 2}, Unit: "slots"},
		{Name: "requests", Algorithm: "fixed_window", Identity: "key", Params: map[string]int64{"limit": 3, "window_ms": 60000}},
		{Name: "tokens", Algorithm: "fixed_window", Identity: "key", Params: map[string]int64{"limit": 1000, "window_ms": 60000}, Unit: "tokens"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestHoldsUnits: each limit counts its own amount. A call reserves a
// slot, a request and 400 tokens, and commits the 150 it used: the slot
// is free again, the request and the 150 tokens are counted; a second
// call's reserve of 900 tokens is denied by the tokens alone (850 left),
// a third's of 800 admitted, the tokens then binding.
func TestHoldsUnits(t *testing.T) {
	h := gateway(t)
	amounts := func(cost int64, tokens int64) []int64 {
		costs, err := h.Policy().Amounts(cost, map[string]int64{"tokens": tokens})
		if err != nil {
			t.Fatal(err)
		}
		return costs
	}
	if got := amounts(1, 400); fmt.Sprint(got) != "[1 1 400]" {
		t.Fatalf("Amounts(1, tokens 400) = %v, want [1 1 400]", got)
	}
	if _, err := h.Policy().Amounts(1, map[string]int64{"token": 1}); !errors.Is(err, ErrBadInput) {
		t.Fatalf("a unit no limit counts: %v, want ErrBadInput", err)
	}
	runHolds(t, h, map[string]string{"key": "k"}, []holdStep{
		// slots binds: 1 of 2 left, below 2/3 requests and 600/1000 tokens
		{op: "reserve", now: 0, id: "c1", costs: amounts(1, 400), holdMs: 60000, allowed: true, remaining: 1},
		{op: "commit", now: 10, id: "c1", costs: amounts(1, 150), allowed: true, remaining: 2}, // requests binds: 2/3
		{op: "reserve", now: 20, id: "c2", costs: amounts(1, 900), holdMs: 60000, allowed: false, remaining: 850},
		{op: "reserve", now: 30, id: "c3", costs: amounts(1, 800), holdMs: 60000, allowed: true, remaining: 50}, // tokens bind: 50/1000
		{op: "decide", now: 40, costs: []int64{1, 1, 100}, allowed: false, remaining: 50},
		{op: "decide", now: 40, costs: []int64{0, 1, 50}, allowed: true, remaining: 0},
	})
}

// TestHoldsOnSomeLimits: an id may hold on some limits of a policy only:
// here a limit counted per key beside one with a constant, shared by
// every key, where two keys' calls use the same hold id. A reserve of
// such an id is refused; a commit ends the holds it has and charges
// every limit; NOHOLD only where it holds on none.
func TestHoldsOnSomeLimits(t *testing.T) {
	h, err := NewHoldingPolicy("p", []PolicyLimit{
		{Name: "slots", Algorithm: "concurrency", Identity: "key", Params: map[string]int64{"limit": 2}},
		{Name: "all", Algorithm: "fixed_window", Constant: "all", Params: map[string]int64{"limit": 5, "window_ms": 60000}},
	})
	if err != nil {
		t.Fatal(err)
	}
	a, b := map[string]string{"key": "a"}, map[string]string{"key": "b"}
	runHolds(t, h, a, []holdStep{
		{op: "reserve", now: 0, id: "j", n: 1, holdMs: 1000, allowed: true, remaining: 1}, // slots 1/2 binds, all 4/5
	})
	runHolds(t, h, b, []holdStep{
		{op: "reserve", now: 1, id: "j", n: 1, holdMs: 1000, wantErr: ErrBadInput}, // held on all, not on b's slots
		{op: "commit", now: 2, id: "j", n: 1, allowed: true, remaining: 4},         // a's hold on all ended, all charged 1: 4/5 binds
		{op: "release", now: 3, id: "j", wantErr: ErrNoHold},                       // not a retry, nothing held
	})
	runHolds(t, h, a, []holdStep{
		{op: "decide", now: 4, n: 0, allowed: true, remaining: 1},                 // a's slot still held
		{op: "commit", now: 5, id: "j", n: 1, allowed: true, remaining: 3},        // ends it: all 3/5 binds
		{op: "decide", now: 6, costs: []int64{0, 3}, allowed: true, remaining: 0}, // all binds: 0/5
	})
}

// TestHoldsResetKeepsHolds: a holding policy's reset deletes its limits'
// state, not the holds of work in flight: a slot held stays held.
func TestHoldsResetKeepsHolds(t *testing.T) {
	h := gateway(t)
	ids := map[string]string{"key": "k"}
	runHolds(t, h, ids, []holdStep{
		{op: "reserve", now: 0, id: "a", n: 1, holdMs: 60000, allowed: true, remaining: 1},
		{op: "reserve", now: 1, id: "b", n: 1, holdMs: 60000, allowed: true, remaining: 0},
		{op: "commit", now: 2, id: "b", n: 1, allowed: true, remaining: 1},
	})
	if err := h.Reset(ids); err != nil {
		t.Fatal(err)
	}
	runHolds(t, h, ids, []holdStep{
		// a still holds its slot; the requests counted are gone
		{op: "decide", now: 3, n: 0, allowed: true, remaining: 1},
		{op: "reserve", now: 4, id: "c", n: 1, holdMs: 60000, allowed: true, remaining: 0},
		{op: "reserve", now: 5, id: "d", n: 1, holdMs: 60000, allowed: false, remaining: 0},
	})
}

// TestHoldsEndForLaterClocks: a call drops the holds that ended at its
// time, so that a later call whose clock is behind does not count them
// again; a refused call drops nothing.
func TestHoldsEndForLaterClocks(t *testing.T) {
	h := oneLimit(t, "concurrency", map[string]int64{"limit": 1})
	ids := map[string]string{"user": "k"}
	runHolds(t, h, ids, []holdStep{
		{op: "reserve", now: 1000, id: "a", n: 1, holdMs: 100, allowed: true, remaining: 0},
		{op: "release", now: 1200, id: "b", wantErr: ErrNoHold},       // refused: drops nothing
		{op: "decide", now: 1050, n: 1, allowed: false, remaining: 0}, // a still held at 1050
		{op: "decide", now: 1200, n: 0, allowed: true, remaining: 1},  // ended at 1100: dropped
		{op: "decide", now: 1050, n: 1, allowed: true, remaining: 0},  // not counted again
		{op: "release", now: 1050, id: "a", wantErr: ErrNoHold},       // gone
	})
}
