package fallback

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
)

// llmPolicy is a policy of four limits per user, counting three units:
// requests (Cost), tokens a minute and a day (Costs["tokens"]), and
// images (Costs["images"], else Cost).
func llmPolicy(t *testing.T) *limitspec.Policy {
	t.Helper()
	p, err := limitspec.NewPolicy("llm",
		limitspec.PolicyLimit{Name: "requests", Identity: "user", Limit: limitspec.FixedWindow{Limit: 10, Window: time.Minute}},
		limitspec.PolicyLimit{Name: "tokens", Identity: "user", Unit: "tokens", Limit: limitspec.FixedWindow{Limit: 100_000, Window: time.Minute}},
		limitspec.PolicyLimit{Name: "tokens_day", Identity: "user", Unit: "tokens", Limit: limitspec.FixedWindow{Limit: 1_000_000, Window: 24 * time.Hour}},
		limitspec.PolicyLimit{Name: "images", Identity: "user", Unit: "images", Limit: limitspec.FixedWindow{Limit: 20, Window: time.Minute}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// llmRequest is a request of alice's for cost and tokens, at t0.
func llmRequest(p *limitspec.Policy, cost, tokens int64) limitspec.Request {
	return limitspec.Request{Policy: p, IDs: map[string]string{"user": "alice"}, Cost: cost,
		Costs: map[string]int64{"tokens": tokens}, Peek: cost == 0 && tokens == 0, Now: t0}
}

// amounts are each limit's Quota and Remaining in res, in order.
func amounts(res limitspec.Result) (quota, remaining []int64) {
	for _, lr := range res.Limits {
		quota, remaining = append(quota, lr.Quota), append(remaining, lr.Remaining)
	}
	return quota, remaining
}

// usedBy is what the limiter lim has counted of each limit of req's
// policy: Quota less Remaining, by a peek.
func usedBy(t *testing.T, lim limitspec.Limiter, req limitspec.Request) []int64 {
	t.Helper()
	req.Cost, req.Costs, req.Force, req.ID, req.Peek = 0, nil, false, "", true
	res := limit(t, lim, req)
	var used []int64
	for _, lr := range res.Limits {
		used = append(used, lr.Quota-lr.Remaining)
	}
	return used
}

// TestUnitsOutagePaidPerLimit: the primary admits 1 request of 1,000
// tokens, fails, and each of n processes' local limiter admits 3 of
// 3,000 tokens, charging each limit its own amount times n (the images
// limit, whose unit the requests do not give, counts Cost). Once the
// primary answers again, each of its limits is paid exactly what was
// admitted locally, in its own unit: 3 requests, 9,000 tokens on both
// token limits, 3 images, whatever n; so it counts 4 requests, 10,000
// tokens a minute and a day, and 4 images.
func TestUnitsOutagePaidPerLimit(t *testing.T) {
	for _, tc := range []struct {
		processes int
		// The third local decision's Limits: each limit's Quota / n and
		// (Quota − 1·amount − 3·amount·n) / n, by hand.
		quota, remaining []int64
	}{
		{1, []int64{10, 100_000, 1_000_000, 20}, []int64{6, 90_000, 990_000, 16}}, // 10−1−3, 100000−1000−9000, 1000000−10000, 20−1−3
		{2, []int64{5, 50_000, 500_000, 10}, []int64{1, 40_500, 490_500, 6}},      // (10−1−6)/2, (100000−1000−18000)/2, (1000000−19000)/2, (20−1−6)/2
		{3, []int64{3, 33_333, 333_333, 6}, []int64{0, 24_000, 324_000, 3}},       // (10−1−9)/3, (100000−1000−27000)/3, (1000000−28000)/3, (20−1−9)/3
	} {
		p := llmPolicy(t)
		store := local(t)
		primary := &losing{Limiter: store}
		l := mustNew(t, primary, local(t), Options{Failures: 1000, Processes: tc.processes}, newClock())
		if res := limit(t, l, llmRequest(p, 1, 1000)); !res.Allowed || res.Side != limitspec.Primary {
			t.Fatalf("n=%d, the first request: %+v; want admitted by the primary", tc.processes, res)
		}
		primary.down.Store(true)
		r := llmRequest(p, 1, 3000)
		var res limitspec.Result
		for i := range 3 {
			if res = limit(t, l, r); !res.Allowed || res.Side != limitspec.Fallback {
				t.Fatalf("n=%d, local request %d: %+v; want admitted locally", tc.processes, i+1, res)
			}
		}
		if quota, remaining := amounts(res); !slices.Equal(quota, tc.quota) || !slices.Equal(remaining, tc.remaining) {
			t.Errorf("n=%d, the third local decision: quotas %v, remaining %v; want %v, %v", tc.processes, quota, remaining, tc.quota, tc.remaining)
		}
		if r.Costs["tokens"] != 3000 {
			t.Errorf("n=%d: the caller's Costs were written: %v", tc.processes, r.Costs)
		}
		primary.down.Store(false)
		if res := limit(t, l, llmRequest(p, 0, 0)); res.Side != limitspec.Primary {
			t.Fatalf("n=%d, a peek once the primary is back: %+v; want decided by the primary", tc.processes, res)
		}
		want := []int64{4, 10_000, 10_000, 4}
		if got := usedBy(t, store, r); !slices.Equal(got, want) {
			t.Errorf("n=%d: the primary counts %v; want %v (1 + 3 requests, 1,000 + 9,000 tokens, 1 + 3 images)", tc.processes, got, want)
		}
		limit(t, l, llmRequest(p, 0, 0))
		if got := usedBy(t, store, r); !slices.Equal(got, want) {
			t.Errorf("n=%d, after another call: the primary counts %v; want %v (paid once)", tc.processes, got, want)
		}
	}
}

// TestUnitsMirrored: a request the primary admits once the local
// limiter has started from its word is forced on the local limiter too,
// with its amounts by unit, its Cost left 0 (so 1: "Amounts in Go")
// as the primary counted it.
func TestUnitsMirrored(t *testing.T) {
	p := llmPolicy(t)
	store, loc := local(t), local(t)
	primary := &losing{Limiter: store}
	l := mustNew(t, primary, loc, Options{Failures: 1000}, newClock())
	limit(t, l, llmRequest(p, 1, 1000)) // the primary: 1 request, 1,000 tokens, 1 image
	primary.down.Store(true)
	limit(t, l, llmRequest(p, 1, 1000)) // locally, started from the primary's word: 2, 2,000, 2
	primary.down.Store(false)
	if res := limit(t, l, llmRequest(p, 0, 5000)); !res.Allowed || res.Side != limitspec.Primary {
		t.Fatalf("the request of 5,000 tokens, its Cost left 0: %+v; want admitted by the primary", res)
	}
	want := []int64{3, 7000, 7000, 3}
	if got := usedBy(t, store, llmRequest(p, 0, 0)); !slices.Equal(got, want) {
		t.Errorf("the primary counts %v; want %v", got, want)
	}
	if got := usedBy(t, loc, llmRequest(p, 0, 0)); !slices.Equal(got, want) {
		t.Errorf("the local limiter counts %v; want %v, as the primary", got, want)
	}
}

// TestUnitsOverflow: in Local mode each amount of Costs is charged times
// Processes, as Cost is: the largest amount whose product is below 2^53
// is decided (denied for ever: above the limit), one more is refused as
// bad input, naming its unit; a decision and a reserve alike.
func TestUnitsOverflow(t *testing.T) {
	const largest = (1<<53 - 1) / 4
	p := llmPolicy(t)
	for _, tc := range []struct {
		name    string
		hold    bool
		tokens  int64
		refused bool
	}{
		{"decision, largest", false, largest, false},
		{"decision, one more", false, largest + 1, true},
		{"reserve, largest", true, largest, false},
		{"reserve, one more", true, largest + 1, true},
	} {
		l := opened(t, mustNew(t, downHolder{}, local(t), Options{Processes: 4}, newClock()))
		r := llmRequest(p, 1, tc.tokens)
		var res limitspec.Result
		var err error
		if tc.hold {
			r.Policy = p.WithHolds()
			res, err = l.Hold(context.Background(), r, limitspec.Hold{Op: limitspec.Reserve, ID: "h", For: time.Second})
		} else {
			res, err = l.Limit(context.Background(), r)
		}
		switch {
		case tc.refused && (!errors.Is(err, limitspec.ErrBadInput) || !strings.Contains(err.Error(), "tokens")):
			t.Errorf("%s: %v; want an error matching ErrBadInput naming tokens", tc.name, err)
		case !tc.refused && (err != nil || res.Allowed || res.RetryAfter != limitspec.Never || res.Side != limitspec.Fallback):
			t.Errorf("%s: %+v, %v; want denied for ever by the fallback", tc.name, res, err)
		}
	}
}

// TestUnitsHoldShare: a reserve decided locally holds each limit's
// amount times Processes: 2 processes reserving 1 request and 3,000
// tokens hold 2 and 6,000, and each limit reports its share of what is
// left.
func TestUnitsHoldShare(t *testing.T) {
	p := llmPolicy(t).WithHolds()
	l := opened(t, mustNew(t, downHolder{}, local(t), Options{Processes: 2}, newClock()))
	r := llmRequest(p, 1, 3000)
	res, err := l.Hold(context.Background(), r, limitspec.Hold{Op: limitspec.Reserve, ID: "h", For: time.Second})
	if err != nil || !res.Allowed || res.Side != limitspec.Fallback {
		t.Fatalf("reserve: %+v, %v; want admitted by the fallback", res, err)
	}
	// (10−2)/2, (100000−6000)/2, (1000000−6000)/2, (20−2)/2
	want := []int64{4, 47_000, 497_000, 9}
	if _, remaining := amounts(res); !slices.Equal(remaining, want) {
		t.Errorf("reserve: remaining %v; want %v", remaining, want)
	}
	if !maps.Equal(r.Costs, map[string]int64{"tokens": 3000}) {
		t.Errorf("the caller's Costs were written: %v", r.Costs)
	}
}

// downHolder is a primary that keeps holds and is down: it fails every
// call at once, as an unreachable Redis.
type downHolder struct{}

func (downHolder) Limit(context.Context, limitspec.Request) (limitspec.Result, error) {
	return limitspec.Result{}, errDown
}

func (downHolder) Hold(context.Context, limitspec.Request, limitspec.Hold) (limitspec.Result, error) {
	return limitspec.Result{}, errDown
}

// TestUnitsSharedLimitPaid: a policy of 10 requests a minute per IP and
// 10,000 tokens a minute per user. The primary admits alice's and bob's
// requests of 100 tokens from one IP, fails, and the local limiter
// admits alice 3 of 1,000 tokens. Back, bob's request of 200 tokens
// finds the IP paid first (its limit is shared): 2 + 3 + 1 = 6 requests,
// 4 left; bob's tokens owe nothing: 300 used. Alice's tokens are paid
// before the primary's next decision of hers: 100 + 3,000.
func TestUnitsSharedLimitPaid(t *testing.T) {
	p, err := limitspec.NewPolicy("llm",
		limitspec.PolicyLimit{Name: "ip_requests", Identity: "ip", Limit: limitspec.FixedWindow{Limit: 10, Window: time.Minute}},
		limitspec.PolicyLimit{Name: "user_tokens", Identity: "user", Unit: "tokens", Limit: limitspec.FixedWindow{Limit: 10_000, Window: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	store := local(t)
	primary := &losing{Limiter: store}
	l := mustNew(t, primary, local(t), Options{Failures: 1000}, newClock())
	of := func(user string, cost, tokens int64) limitspec.Request {
		return limitspec.Request{Policy: p, IDs: map[string]string{"ip": "10.0.0.1", "user": user}, Cost: cost,
			Costs: map[string]int64{"tokens": tokens}, Peek: cost == 0 && tokens == 0, Now: t0}
	}
	for _, tc := range []struct {
		name       string
		down       bool
		req        limitspec.Request
		n          int
		side       limitspec.Side
		alice, bob []int64 // what the primary counts after, of alice's and bob's limits
	}{
		{"alice on the primary", false, of("alice", 1, 100), 1, limitspec.Primary, []int64{1, 100}, []int64{1, 0}},
		{"bob on the primary", false, of("bob", 1, 100), 1, limitspec.Primary, []int64{2, 100}, []int64{2, 100}},
		{"alice locally", true, of("alice", 1, 1000), 3, limitspec.Fallback, []int64{2, 100}, []int64{2, 100}},
		{"bob back on the primary", false, of("bob", 1, 200), 1, limitspec.Primary, []int64{6, 100}, []int64{6, 300}},
		{"alice's peek", false, of("alice", 0, 0), 1, limitspec.Primary, []int64{6, 3100}, []int64{6, 300}},
	} {
		primary.down.Store(tc.down)
		for range tc.n {
			if res := limit(t, l, tc.req); !res.Allowed || res.Side != tc.side {
				t.Fatalf("%s: %+v; want admitted by %v", tc.name, res, tc.side)
			}
		}
		primary.down.Store(false)
		if got := usedBy(t, store, of("alice", 0, 0)); !slices.Equal(got, tc.alice) {
			t.Errorf("%s: the primary counts %v of alice's limits; want %v", tc.name, got, tc.alice)
		}
		if got := usedBy(t, store, of("bob", 0, 0)); !slices.Equal(got, tc.bob) {
			t.Errorf("%s: the primary counts %v of bob's limits; want %v", tc.name, got, tc.bob)
		}
	}
}

// opened returns l once calls of a plain limit, which its primary fails,
// have opened its breaker: a holding call that fails while the breaker
// is closed is denied, not decided locally (holds.go). The test's clock
// stands still: the breaker stays open.
func opened(t *testing.T, l *Limiter) *Limiter {
	t.Helper()
	for i := 0; l.Stats().State != Open; i++ {
		if i == 100 {
			t.Fatalf("the breaker never opened: %+v", l.Stats())
		}
		limit(t, l, req(gcra(10), "open", 1))
	}
	return l
}
