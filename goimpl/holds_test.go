package goimpl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/oracle"
)

// holdSpec is a holding policy and the oracle's model of it.
func holdSpec(tb testing.TB, s policySpec) (*limitspec.Policy, *oracle.HoldingPolicy) {
	tb.Helper()
	p, _ := s.build(tb)
	o, err := oracle.NewHoldingPolicy(s.name, s.limits)
	if err != nil {
		tb.Fatal(err)
	}
	return p.WithHolds(), o
}

// llmSpec is an LLM gateway's policy of three units: 3 slots per tenant
// (concurrency, unit slots), 6 requests a second (fixed_window, the
// request's cost) and 10,000 tokens refilled at 2,000 a second
// (token_bucket, unit tokens).
var llmSpec = policySpec{"llm", []oracle.PolicyLimit{
	{Name: "slots", Algorithm: "concurrency", Identity: "tenant", Params: map[string]int64{"limit": 3}, Unit: "slots"},
	{Name: "requests", Algorithm: "fixed_window", Identity: "tenant", Params: fwp(6, 1000)},
	{Name: "tokens", Algorithm: "token_bucket", Identity: "tenant", Params: map[string]int64{"capacity": 10000, "refill_tokens": 2000, "refill_ms": 1000}, Unit: "tokens"},
}}

// holdStep is one call of a holding policy: a decision (op "decide") or
// an operation on the hold id, of cost, or of costs by unit.
type holdStep struct {
	op     string
	tenant string
	id     string
	now    int64
	cost   int64
	costs  map[string]int64
	holdMs int64
}

// request is the step's request of p.
func (s holdStep) request(p *limitspec.Policy) limitspec.Request {
	return limitspec.Request{Policy: p, IDs: map[string]string{"tenant": s.tenant}, Cost: s.cost, Costs: s.costs,
		Peek: asksNothing(s.cost, s.costs), Now: at(s.now)}
}

// holdOps are the operations of limitspec.Hold, by name.
var holdOps = map[string]limitspec.HoldOp{"reserve": limitspec.Reserve, "commit": limitspec.Commit, "release": limitspec.Release, "renew": limitspec.Renew}

// run runs the step on a limiter by way (0: the Limiter, 1: a bound
// policy).
func (s holdStep) run(l *Limiter, bp *BoundPolicy, p *limitspec.Policy) (limitspec.Result, error) {
	ctx, req := context.Background(), s.request(p)
	if bp != nil {
		req.Policy = nil
	}
	switch {
	case s.op == "decide" && bp != nil:
		return bp.Limit(ctx, req)
	case s.op == "decide":
		return l.Limit(ctx, req)
	}
	h := limitspec.Hold{Op: holdOps[s.op], ID: s.id, For: ms(s.holdMs)}
	if bp != nil {
		return bp.Hold(ctx, req, h)
	}
	return l.Hold(ctx, req, h)
}

// want is the oracle's result of the step.
func (s holdStep) want(o *oracle.HoldingPolicy) (oracle.PolicyResult, error) {
	costs, err := o.Policy().Amounts(goCost(s.op, s.cost, s.costs), s.costs)
	if err != nil {
		return oracle.PolicyResult{}, err
	}
	return o.Run(map[string]string{"tenant": s.tenant}, s.op, s.id, s.now, costs, s.holdMs)
}

// holdSide is a limiter under test, called one way, beside its oracle.
type holdSide struct {
	l  *Limiter
	bp *BoundPolicy
	p  *limitspec.Policy
	o  *oracle.HoldingPolicy
}

// newHoldSides are a Limiter and a bound policy of s, each with its own
// oracle.
func newHoldSides(t *testing.T, s policySpec) []holdSide {
	var sides []holdSide
	for way := range 2 {
		p, o := holdSpec(t, s)
		l := newLimiter(t, Options{NoSweeper: true})
		side := holdSide{l: l, p: p, o: o}
		if way == 1 {
			bp, err := l.BindPolicy(p)
			if err != nil {
				t.Fatal(err)
			}
			side.bp = bp
		}
		sides = append(sides, side)
	}
	return sides
}

// check runs the step on the side and fails the test unless it answers
// as the oracle does: the same result, or an error of the same kind.
func (h holdSide) check(t *testing.T, what string, s holdStep) (limitspec.Result, error) {
	t.Helper()
	got, err := s.run(h.l, h.bp, h.p)
	want, werr := s.want(h.o)
	switch {
	case werr != nil:
		for _, kind := range []struct{ o, g error }{{oracle.ErrBadInput, limitspec.ErrBadInput}, {oracle.ErrNoHold, limitspec.ErrNoHold}} {
			if errors.Is(werr, kind.o) && !errors.Is(err, kind.g) {
				t.Fatalf("%s %+v: %+v, %v; want an error matching %v (the oracle's %v)", what, s, got, err, kind.g, werr)
			}
		}
	case err != nil:
		t.Fatalf("%s %+v: %v; want %+v", what, s, err, want)
	default:
		checkPolicyResult(t, fmt.Sprintf("%s %+v", what, s), h.p, got, want)
	}
	return got, err
}

// TestLLMGatewayMatchesOracle: an LLM gateway's requests, each one
// reserve of 1 slot, 1 request and its max tokens and one commit of 1, 1
// and the tokens it used (or a release, or nothing: its hold ends), with
// decisions, renewals and retries among them, on several tenants and a
// clock that now and then steps back, decide as the oracle's
// HoldingPolicy decides them, through the Limiter and a bound policy.
func TestLLMGatewayMatchesOracle(t *testing.T) {
	for seed := range uint64(4) {
		for i, side := range newHoldSides(t, llmSpec) {
			rng := rand.New(rand.NewPCG(seed, 7))
			now := int64(1_700_000_000_000)
			type open struct {
				tenant, id string
				max        int64
			}
			var flight []open
			var ended []holdStep // commits and releases, to send again
			for n := range 600 {
				now += rng.Int64N(400) - 40 // mostly on, now and then back
				what := fmt.Sprintf("seed %d way %d step %d", seed, i, n)
				tenant := "t" + strconv.Itoa(rng.IntN(3))
				switch k := rng.IntN(10); {
				case k < 4 || len(flight) == 0:
					max := 1 + rng.Int64N(4000)
					s := holdStep{op: "reserve", tenant: tenant, id: fmt.Sprint("r", n), now: now, cost: 1, costs: map[string]int64{"tokens": max}, holdMs: 200 + rng.Int64N(3000)}
					if res, err := side.check(t, what, s); err == nil && res.Allowed {
						flight = append(flight, open{tenant, s.id, max})
					}
				case k < 7:
					j := rng.IntN(len(flight))
					f := flight[j]
					flight = append(flight[:j], flight[j+1:]...)
					s := holdStep{op: "commit", tenant: f.tenant, id: f.id, now: now, cost: 1, costs: map[string]int64{"tokens": rng.Int64N(f.max + 500)}}
					if rng.IntN(4) == 0 {
						s.op, s.cost, s.costs = "release", 0, map[string]int64{"tokens": 0}
					}
					side.check(t, what, s)
					ended = append(ended, s)
				case k < 8 && len(ended) > 0:
					s := ended[rng.IntN(len(ended))] // sent again
					s.now = now
					if rng.IntN(3) == 0 {
						s.costs = map[string]int64{"tokens": s.costs["tokens"] + 1} // another amount
					}
					side.check(t, what, s)
				case k < 9:
					f := flight[rng.IntN(len(flight))]
					side.check(t, what, holdStep{op: "renew", tenant: f.tenant, id: f.id, now: now, costs: map[string]int64{"tokens": 0}, holdMs: 100 + rng.Int64N(2000)})
				default:
					side.check(t, what, holdStep{op: "decide", tenant: tenant, now: now, cost: rng.Int64N(2), costs: map[string]int64{"tokens": rng.Int64N(3000)}})
				}
			}
		}
	}
}

// TestEveryAlgorithmHoldsMatchOracle: the holds of every algorithm, as
// the single limit of a holding policy, decide as the oracle's, denials'
// waits over many holds included.
func TestEveryAlgorithmHoldsMatchOracle(t *testing.T) {
	for _, alg := range append(algorithms, "concurrency") {
		params := smallParams[alg]
		if alg == "concurrency" {
			params = map[string]int64{"limit": 3}
		}
		spec := policySpec{"p_" + alg, []oracle.PolicyLimit{{Name: "l", Algorithm: alg, Identity: "tenant", Params: params}}}
		for i, side := range newHoldSides(t, spec) {
			rng := rand.New(rand.NewPCG(uint64(len(alg)), 3))
			now := int64(1_700_000_000_000)
			for n := range 400 {
				now += rng.Int64N(300) - 20
				s := holdStep{tenant: "a", id: "h" + strconv.Itoa(rng.IntN(12)), now: now, cost: rng.Int64N(3)}
				switch k := rng.IntN(6); k {
				case 0, 1:
					s.op, s.cost, s.holdMs = "reserve", 1+rng.Int64N(2), 1+rng.Int64N(4000)
				case 2:
					s.op = "commit"
				case 3:
					s.op, s.cost = "release", 0
				case 4:
					s.op, s.cost, s.holdMs = "renew", 0, 1+rng.Int64N(3000)
				default:
					s.op, s.id = "decide", ""
				}
				side.check(t, fmt.Sprintf("%s way %d step %d", alg, i, n), s)
			}
		}
	}
}

// heldRefusal is a step that must be refused with an error matching
// want whose message has msg.
type heldRefusal struct {
	step holdStep
	want error
	msg  string
}

// TestHeldPartly: limits of one name are shared by policies, so an id
// can hold on some of a policy's limits only. A reserve of such an id is
// refused, naming the limit it holds on and the first it does not; a
// reserve of another amount names the first limit that holds it; a
// commit acts on the limits it holds on, and charges every limit.
func TestHeldPartly(t *testing.T) {
	l := newLimiter(t, Options{NoSweeper: true})
	slots := limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: 2}, Identity: "tenant"}
	minute := limitspec.PolicyLimit{Name: "minute", Limit: limitspec.FixedWindow{Limit: 10, Window: time.Minute}, Identity: "tenant"}
	pool, err := limitspec.NewPolicy("pool", slots)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := limitspec.NewPolicy("jobs", minute, slots)
	if err != nil {
		t.Fatal(err)
	}
	pool, jobs = pool.WithHolds(), jobs.WithHolds()
	ctx, now := context.Background(), int64(1_700_000_000_000)
	req := func(p *limitspec.Policy, cost int64) limitspec.Request {
		return limitspec.Request{Policy: p, IDs: map[string]string{"tenant": "acme"}, Cost: cost, Peek: cost == 0, Now: at(now)}
	}
	if res, err := l.Hold(ctx, req(pool, 1), limitspec.Hold{Op: limitspec.Reserve, ID: "x", For: time.Minute}); err != nil || !res.Allowed {
		t.Fatalf("reserve of x on pool: %+v, %v", res, err)
	}
	for _, r := range []heldRefusal{
		{holdStep{op: "reserve", cost: 1}, limitspec.ErrBadInput, "jobs: id x holds on slots but nothing on minute"},
		{holdStep{op: "reserve", cost: 2}, limitspec.ErrBadInput, "jobs: id x holds on slots but nothing on minute"},
	} {
		_, err := l.Hold(ctx, req(jobs, r.step.cost), limitspec.Hold{Op: limitspec.Reserve, ID: "x", For: time.Minute})
		if !errors.Is(err, r.want) || !strings.Contains(err.Error(), r.msg) {
			t.Errorf("%+v: %v; want %q", r.step, err, r.msg)
		}
	}
	if _, err := l.Hold(ctx, req(pool, 2), limitspec.Hold{Op: limitspec.Reserve, ID: "x", For: time.Minute}); err == nil || !strings.Contains(err.Error(), "pool: id x holds 1 on slots, not 2") {
		t.Errorf("a reserve of x for 2 on pool: %v; want it refused as holding 1", err)
	}
	// the commit by jobs frees the slot x held (concurrency keeps no
	// state: its charge is nothing), and charges the minute, on which x
	// held nothing, 1: work done is work done
	res, err := l.Hold(ctx, req(jobs, 1), limitspec.Hold{Op: limitspec.Commit, ID: "x"})
	if err != nil || res.Limits[0].Remaining != 9 || res.Limits[1].Remaining != 2 {
		t.Fatalf("commit of x by jobs: %+v, %v; want minute at 9 and both slots free", res, err)
	}
	if again, err := l.Hold(ctx, req(jobs, 1), limitspec.Hold{Op: limitspec.Commit, ID: "x"}); err != nil || fmt.Sprint(again) != fmt.Sprint(res) {
		t.Errorf("the commit sent again: %+v, %v; want its first reply %+v", again, err, res)
	}
	if _, err := l.Hold(ctx, req(pool, 0), limitspec.Hold{Op: limitspec.Release, ID: "x"}); !errors.Is(err, limitspec.ErrNoHold) {
		t.Errorf("a release of x after its commit: %v; want ErrNoHold", err)
	}
}

// TestReplayOfCommitAndRelease: a commit or release sent again within
// REQUEST_MS gets its first reply and changes nothing; another operation
// or other amounts find no hold; past its reach it finds none either; a
// renew sent again renews again; a reserve of the id after starts a new
// hold. Each step is checked against the oracle, and the replies of the
// retries against the first ones.
func TestReplayOfCommitAndRelease(t *testing.T) {
	spec := policySpec{"jobs", []oracle.PolicyLimit{
		{Name: "slots", Algorithm: "concurrency", Identity: "tenant", Params: map[string]int64{"limit": 2}},
		{Name: "minute", Algorithm: "fixed_window", Identity: "tenant", Params: fwp(5, 60000)},
	}}
	t0 := int64(1_700_000_000_000)
	steps := []struct {
		s     holdStep
		again int // the index of the step whose reply this one repeats, +1
	}{
		{s: holdStep{op: "reserve", id: "a", now: t0, cost: 1, holdMs: 10000}},
		{s: holdStep{op: "reserve", id: "b", now: t0, cost: 1, holdMs: 10000}},
		{s: holdStep{op: "commit", id: "a", now: t0 + 10, cost: 1}},
		{s: holdStep{op: "decide", now: t0 + 20, cost: 1}},
		{s: holdStep{op: "commit", id: "a", now: t0 + 30, cost: 1}, again: 3},
		{s: holdStep{op: "commit", id: "a", now: t0 + 30, cost: 2}},
		{s: holdStep{op: "release", id: "a", now: t0 + 30}},
		{s: holdStep{op: "release", id: "b", now: t0 + 40}},
		{s: holdStep{op: "release", id: "b", now: t0 + 50}, again: 8},
		{s: holdStep{op: "renew", id: "b", now: t0 + 50, holdMs: 100}},
		{s: holdStep{op: "reserve", id: "c", now: t0 + 60, cost: 1, holdMs: 1000}},
		{s: holdStep{op: "renew", id: "c", now: t0 + 70, holdMs: 5000}},
		{s: holdStep{op: "renew", id: "c", now: t0 + 80, holdMs: 5000}},
		{s: holdStep{op: "reserve", id: "a", now: t0 + 90, cost: 1, holdMs: 1000}},
		{s: holdStep{op: "release", id: "a", now: t0 + 100}},
		{s: holdStep{op: "commit", id: "a", now: t0 + 10 + requestMs, cost: 1}},
		{s: holdStep{op: "release", id: "b", now: t0 + 39 + requestMs}, again: 8},
		{s: holdStep{op: "release", id: "b", now: t0 + 40 + requestMs}},
		{s: holdStep{op: "decide", now: t0 + 41 + requestMs}},
	}
	for i, side := range newHoldSides(t, spec) {
		var replies []limitspec.Result
		for n, st := range steps {
			st.s.tenant = "acme"
			res, _ := side.check(t, fmt.Sprintf("way %d step %d", i, n), st.s)
			replies = append(replies, res)
			if st.again > 0 && fmt.Sprint(res) != fmt.Sprint(replies[st.again-1]) {
				t.Errorf("way %d step %d: %+v; want the first reply %+v", i, n, res, replies[st.again-1])
			}
		}
	}
}

// TestResetKeepsHolds: a reset of a holding policy deletes its limits'
// state and leaves their holds: the slots stay taken until released.
func TestResetKeepsHolds(t *testing.T) {
	spec := policySpec{"pool", []oracle.PolicyLimit{
		{Name: "slots", Algorithm: "concurrency", Identity: "tenant", Params: map[string]int64{"limit": 2}},
		{Name: "minute", Algorithm: "fixed_window", Identity: "tenant", Params: fwp(3, 60000)},
	}}
	t0 := int64(1_700_000_000_000)
	for i, side := range newHoldSides(t, spec) {
		what := fmt.Sprintf("way %d", i)
		side.check(t, what, holdStep{op: "reserve", tenant: "acme", id: "a", now: t0, cost: 1, holdMs: 30000})
		side.check(t, what, holdStep{op: "decide", tenant: "acme", now: t0, cost: 1})
		side.check(t, what, holdStep{op: "decide", tenant: "acme", now: t0, cost: 1})
		req := limitspec.Request{Policy: side.p, IDs: map[string]string{"tenant": "acme"}}
		if err := side.l.Reset(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if err := side.o.Reset(map[string]string{"tenant": "acme"}); err != nil {
			t.Fatal(err)
		}
		res, _ := side.check(t, what, holdStep{op: "decide", tenant: "acme", now: t0 + 10})
		if res.Limits[0].Remaining != 1 || res.Limits[1].Remaining != 2 {
			t.Errorf("%s: after the reset %+v; want the slot still held (1 left) and the minute's count gone but the hold (2 left)", what, res)
		}
		side.check(t, what, holdStep{op: "reserve", tenant: "acme", id: "b", now: t0 + 20, cost: 1, holdMs: 30000})
		side.check(t, what, holdStep{op: "reserve", tenant: "acme", id: "c", now: t0 + 20, cost: 1, holdMs: 30000})
		side.check(t, what, holdStep{op: "commit", tenant: "acme", id: "a", now: t0 + 30, cost: 1})
	}
}

// TestManyLiveHolds: 20,000 holds live on one key work, with their sum
// exact: each reserve is admitted while the sum fits, the remaining is
// the limit less the sum, a release gives its amount back, and a denial
// waits for the earliest end from which the amount fits.
func TestManyLiveHolds(t *testing.T) {
	const n, limit = 20000, 50000
	l := newLimiter(t, Options{NoSweeper: true})
	p, err := limitspec.NewPolicy("pool", limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: limit}, Identity: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithHolds()
	ctx, t0 := context.Background(), int64(1_700_000_000_000)
	req := func(now, cost int64) limitspec.Request {
		return limitspec.Request{Policy: p, IDs: map[string]string{"tenant": "big"}, Cost: cost, Peek: cost == 0, Now: at(now)}
	}
	var sum int64
	for i := range n {
		amount := 1 + int64(i%3) // 1, 2, 3: 40,000 in all
		// the ends in another order than the reserves: i*7919 mod n
		h := limitspec.Hold{Op: limitspec.Reserve, ID: "h" + strconv.Itoa(i), For: ms(1000 + int64(i*7919%n))}
		res, err := l.Hold(ctx, req(t0, amount), h)
		sum += amount
		if err != nil || !res.Allowed || res.Limits[0].Remaining != limit-sum {
			t.Fatalf("reserve %d: %+v, %v; want admitted, %d remaining", i, res, err, limit-sum)
		}
	}
	for i := 0; i < n; i += 2 {
		if _, err := l.Hold(ctx, req(t0+1, 0), limitspec.Hold{Op: limitspec.Release, ID: "h" + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
		sum -= 1 + int64(i%3)
	}
	res, err := l.Limit(ctx, req(t0+2, 0))
	if err != nil || res.Limits[0].Remaining != limit-sum {
		t.Fatalf("after releasing half: %+v, %v; want %d remaining", res, err, limit-sum)
	}
	// a denial of limit-sum+100 waits until the holds ending first (the
	// odd i, by end 1000 + i*7919 mod n) have freed 100
	want, freed := waitFor(n, 100, t0+2)
	res, err = l.Limit(ctx, req(t0+2, limit-sum+100))
	if err != nil || res.Allowed || res.RetryAfter != ms(want-(t0+2)) {
		t.Fatalf("a denial: %+v, %v; want a wait of %d ms (%d freed)", res, err, want-(t0+2), freed)
	}
}

// waitFor is when the odd holds of TestManyLiveHolds, ending at t0 + 1000
// + i*7919 mod n, have freed at least need, and what they have freed
// then.
func waitFor(n int, need, t0 int64) (at, freed int64) {
	ends := map[int64]int64{}
	for i := 1; i < n; i += 2 {
		ends[t0-2+1000+int64(i*7919%n)] += 1 + int64(i%3)
	}
	for at = t0; freed < need; at++ {
		freed += ends[at]
	}
	return at - 1, freed
}

// heldKeys is how many keys of holds the limiter keeps.
func heldKeys(l *Limiter) int {
	n := 0
	for i := range l.holds.shards {
		sh := &l.holds.shards[i]
		sh.mu.Lock()
		n += len(sh.keys)
		if len(sh.keys) != len(sh.all) {
			panic("holds: a shard's keys and its list differ")
		}
		sh.mu.Unlock()
	}
	return n
}

// TestHoldsMemoryReleased: a key's holds are let go of once a call on it
// has dropped the last that ended and nothing it remembers is within
// reach; keys no call comes back to are let go of by the calls on other
// keys once their holds are TTL_MARGIN_MS past their end.
func TestHoldsMemoryReleased(t *testing.T) {
	l := newLimiter(t, Options{NoSweeper: true})
	p, err := limitspec.NewPolicy("pool", limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: 1}, Identity: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithHolds()
	ctx, t0 := context.Background(), int64(1_700_000_000_000)
	hold := func(tenant string, now int64, op limitspec.HoldOp, d time.Duration) {
		t.Helper()
		req := limitspec.Request{Policy: p, IDs: map[string]string{"tenant": tenant}, Cost: 1, Now: at(now)}
		if op != limitspec.Reserve {
			req.Cost, req.Peek = 0, true
		}
		if _, err := l.Hold(ctx, req, limitspec.Hold{Op: op, ID: "job", For: d}); err != nil {
			t.Fatal(err)
		}
	}
	decide := func(tenant string, now int64) {
		t.Helper()
		if _, err := l.Limit(ctx, limitspec.Request{Policy: p, IDs: map[string]string{"tenant": tenant}, Peek: true, Now: at(now)}); err != nil {
			t.Fatal(err)
		}
	}
	hold("a", t0, limitspec.Reserve, time.Second)
	if n := heldKeys(l); n != 1 {
		t.Fatalf("%d keys of holds after a reserve; want 1", n)
	}
	decide("a", t0+999)
	decide("a", t0+1000) // the hold ends: dropped, and the key with it
	if n := heldKeys(l); n != 0 {
		t.Errorf("%d keys of holds once the only hold ended and a call dropped it; want none", n)
	}
	hold("b", t0, limitspec.Reserve, time.Hour)
	hold("b", t0+10, limitspec.Release, 0) // remembered for its retries
	if n := heldKeys(l); n != 1 {
		t.Errorf("%d keys of holds with a release within reach; want 1", n)
	}
	decide("b", t0+10+2*requestMs-1)
	if n := heldKeys(l); n != 1 {
		t.Errorf("%d keys of holds with a release less than REQUEST_MS past its reach; want 1", n)
	}
	decide("b", t0+10+2*requestMs)
	if n := heldKeys(l); n != 0 {
		t.Errorf("%d keys of holds once the release left its reach REQUEST_MS ago; want none", n)
	}
	// 3000 tenants hold for 1 ms and vanish; calls on one other tenant,
	// a minute and more later, let go of them all
	for i := range 3000 {
		hold("gone"+strconv.Itoa(i), t0, limitspec.Reserve, time.Millisecond)
	}
	hold("live", t0, limitspec.Reserve, 24*time.Hour)
	for i := range 100 * holdShards {
		hold("live", t0+1+ttlMarginMs+int64(i), limitspec.Renew, 24*time.Hour)
	}
	if n := heldKeys(l); n != 1 {
		t.Errorf("%d keys of holds after the calls of one live tenant; want 1, its own", n)
	}
}

// TestConcurrentHoldingCalls: holding calls on different keys, and on
// keys shared by policies that lock them in other orders, beside plain
// policies and single limits on the same tables, run at once (under
// -race) without deadlock, and leave every slot free once every
// reservation has been committed.
func TestConcurrentHoldingCalls(t *testing.T) {
	l := newLimiter(t, Options{NoSweeper: true})
	slots := limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: 4}, Identity: "tenant"}
	minute := limitspec.PolicyLimit{Name: "minute", Limit: limitspec.FixedWindow{Limit: 1_000_000, Window: time.Minute}, Identity: "tenant"}
	global := limitspec.PolicyLimit{Name: "global", Limit: limitspec.FixedWindow{Limit: 1_000_000, Window: time.Minute}, Constant: "all"}
	a, err := limitspec.NewPolicy("a", slots, minute, global)
	if err != nil {
		t.Fatal(err)
	}
	b, err := limitspec.NewPolicy("b", global, minute, slots)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := limitspec.NewPolicy("a", minute, global) // an in-flight limit counts only holds
	if err != nil {
		t.Fatal(err)
	}
	policies := []*limitspec.Policy{a.WithHolds(), b.WithHolds(), plain}
	ctx, t0 := context.Background(), int64(1_700_000_000_000)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 300 {
				ids := map[string]string{"tenant": "t" + strconv.Itoa((g+i)%5)}
				p := policies[(g+i)%len(policies)]
				req := limitspec.Request{Policy: p, IDs: ids, Cost: 1, Now: at(t0 + int64(i))}
				if !p.Holds() {
					if _, err := l.Limit(ctx, req); err != nil {
						t.Error(err)
					}
					continue
				}
				id := fmt.Sprint("g", g, "-", i)
				res, err := l.Hold(ctx, req, limitspec.Hold{Op: limitspec.Reserve, ID: id, For: time.Hour})
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := l.Limit(ctx, limitspec.Request{Key: ids["tenant"], Limit: minute.Limit, Cost: 1, Now: at(t0 + int64(i))}); err != nil {
					t.Error(err)
				}
				if res.Allowed {
					if _, err := l.Hold(ctx, req, limitspec.Hold{Op: limitspec.Commit, ID: id}); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	watchdog(t, &wg, time.Minute)
	for k := range 5 {
		req := limitspec.Request{Policy: policies[0], IDs: map[string]string{"tenant": "t" + strconv.Itoa(k)}, Peek: true, Now: at(t0 + 400)}
		res, err := l.Limit(ctx, req)
		if err != nil || res.Limits[0].Remaining != 4 {
			t.Errorf("tenant t%d after every commit: %+v, %v; want its 4 slots free", k, res, err)
		}
	}
}

// TestHoldListMatchesSorted: the blocks of a hold list keep its holds in
// order, with their sums, earliest and latest ends, through adds,
// removals and drops of ended holds, as a sorted slice does; a walk
// passes them in order with the sum of those after each end.
func TestHoldListMatchesSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var l holdList
	ref := map[string]holdEntry{}
	for step := range 20000 {
		switch k := rng.IntN(10); {
		case k < 6:
			x := holdEntry{end: rng.Int64N(5000), amount: 1 + rng.Int64N(9), id: "h" + strconv.Itoa(rng.IntN(3000))}
			if _, ok := ref[x.id]; !ok {
				l.add(x)
				ref[x.id] = x
			}
		case k < 9:
			for id, x := range ref {
				l.remove(x.end, id)
				delete(ref, id)
				break
			}
		default:
			now := rng.Int64N(300)
			l.dropEnded(now, func(id string) {
				if ref[id].end > now {
					t.Fatalf("step %d: %s dropped at %d, ends at %d", step, id, now, ref[id].end)
				}
				delete(ref, id)
			})
		}
		checkHoldList(t, step, &l, ref, step%500 == 0)
	}
}

// checkHoldList fails the test unless l holds ref's holds in order,
// and, with walked, unless a walk passes them in order.
func checkHoldList(t *testing.T, step int, l *holdList, ref map[string]holdEntry, walked bool) {
	t.Helper()
	var sum int64
	var prev *holdEntry
	n := 0
	for _, b := range l.blocks {
		var bsum int64
		if len(b.e) == 0 || len(b.e) > blockMax {
			t.Fatalf("step %d: a block of %d holds", step, len(b.e))
		}
		for i := range b.e {
			x := &b.e[i]
			if prev != nil && !prev.before(x.end, x.id) || ref[x.id] != *x {
				t.Fatalf("step %d: %+v out of order or unknown", step, *x)
			}
			prev, bsum, n = x, bsum+x.amount, n+1
		}
		if bsum != b.sum {
			t.Fatalf("step %d: a block sums %d, keeps %d", step, bsum, b.sum)
		}
		sum += bsum
	}
	if n != len(ref) || n != l.n || sum != l.sum {
		t.Fatalf("step %d: %d holds of sum %d (kept %d, %d); want %d", step, n, sum, l.n, l.sum, len(ref))
	}
	w := walk(l)
	for held := sum; walked; {
		end, more := w.next()
		if !more {
			break
		}
		for _, x := range ref {
			if x.end == end {
				held -= x.amount
			}
		}
		if w.advance(1<<62) != end || w.held != held {
			t.Fatalf("step %d: the walk at %d holds %d, want %d", step, end, w.held, held)
		}
	}
}

// TestUnitsAndRequestIDs: each limit of a policy counts its own unit's
// amount, else the request's cost, and names its unit in its result; an
// unknown unit is refused before each cost's domain, as are Costs on a
// single limit; a request with an id is remembered with its costs, a
// retry must repeat them, and a peek is decided, never looked up. Each
// step is checked against the oracle's DecideOnce.
func TestUnitsAndRequestIDs(t *testing.T) {
	spec := policySpec{"gateway", []oracle.PolicyLimit{
		{Name: "requests", Algorithm: "fixed_window", Identity: "tenant", Params: fwp(5, 1000)},
		{Name: "tokens", Algorithm: "token_bucket", Identity: "tenant", Params: map[string]int64{"capacity": 1000, "refill_tokens": 100, "refill_ms": 1000}, Unit: "tokens"},
		{Name: "daily_tokens", Algorithm: "fixed_window", Identity: "tenant", Params: fwp(5000, 86400000), Unit: "tokens"},
	}}
	p, o := spec.build(t)
	l := newLimiter(t, Options{NoSweeper: true})
	var rs oracle.Requests
	t0 := int64(1_700_000_000_000)
	ids := map[string]string{"tenant": "acme"}
	for n, s := range []struct {
		id    string
		now   int64
		cost  int64
		costs map[string]int64
	}{
		{"", t0, 1, map[string]int64{"tokens": 400}},
		{"r1", t0, 1, map[string]int64{"tokens": 500}},
		{"r1", t0 + 5, 1, map[string]int64{"tokens": 500}}, // a retry: its first reply
		{"r1", t0 + 5, 1, map[string]int64{"tokens": 501}}, // refused: other costs
		{"r1", t0 + 5, 0, nil},                             // a peek: decided
		{"r1", t0 + 5, 0, map[string]int64{"tokens": 0}},   // a peek too
		{"", t0 + 10, 1, map[string]int64{"tokens": 200}},  // denied: 1100 tokens
		{"", t0 + 10, 1, map[string]int64{"token": 1}},     // refused: no such unit
		{"", t0 + 10, 1, map[string]int64{"tokens": -1}},   // refused: out of its domain
		{"", t0 + 10, 1, map[string]int64{"token": -1}},    // the unit first
		{"r2", t0 + 20, 2, nil},
	} {
		what := fmt.Sprintf("step %d %+v", n, s)
		res, err := l.Limit(context.Background(), limitspec.Request{Policy: p, IDs: ids, Cost: s.cost, Costs: s.costs,
			Peek: asksNothing(s.cost, s.costs), Now: at(s.now), ID: s.id})
		costs, werr := o.Amounts(s.cost, s.costs)
		var want oracle.PolicyResult
		if werr == nil {
			want, werr = o.DecideOnce(&rs, ids, s.id, s.now, costs, false)
		}
		switch {
		case werr != nil:
			if !errors.Is(err, limitspec.ErrBadInput) || (s.costs["token"] != 0 && !strings.Contains(err.Error(), "no limit counts the unit token")) {
				t.Errorf("%s: %v; want a refusal, as the oracle's %v", what, err, werr)
			}
		case err != nil:
			t.Errorf("%s: %v; want %+v", what, err, want)
		default:
			checkPolicyResult(t, what, p, res, want)
		}
	}
	_, err := l.Limit(context.Background(), limitspec.Request{Key: "acme", Limit: limitspec.FixedWindow{Limit: 5, Window: time.Second}, Cost: 1, Costs: map[string]int64{"tokens": 1}})
	if !errors.Is(err, limitspec.ErrBadInput) {
		t.Errorf("Costs on a single limit: %v; want a refusal", err)
	}
}

// TestPolicyAllocations: on existing keys, a bound policy's decision
// into a Result used again allocates nothing (each limit names its state
// in its pooled call's buffer), nor does a holding policy's decision, nor
// a reserve and its commit on a key that remembers a dozen commits (its
// ends kept in their slots, the reply of a policy of one limit in place).
// BenchmarkBoundPolicyOneGCRA, BenchmarkHoldingDecision and
// BenchmarkReserveCommit measure the same.
func TestPolicyAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops some of the calls a sync.Pool is given back")
	}
	ctx, ids := context.Background(), map[string]string{"user": "alice"}
	var res limitspec.Result
	for _, holds := range []bool{false, true} {
		bp, _ := benchPolicy(t, holds)
		now := int64(t0)
		decision := func() {
			now++
			if err := bp.LimitInto(ctx, limitspec.Request{IDs: ids, Cost: 1, Now: at(now)}, &res); err != nil {
				t.Fatal(err)
			}
		}
		decision()
		if n := testing.AllocsPerRun(1000, decision); n != 0 {
			t.Errorf("holds %v: %.1f allocations per decision; want none", holds, n)
		}
	}
	bp, _ := benchPolicy(t, true)
	holdIDs, i := benchHoldIDs(), 0
	pair := func() {
		i++
		req := limitspec.Request{IDs: ids, Cost: 1, Now: at(t0 + int64(i)*10_000)} // a commit remembered for 12 pairs
		h := limitspec.Hold{Op: limitspec.Reserve, ID: holdIDs[i%len(holdIDs)], For: time.Minute}
		if err := bp.HoldInto(ctx, req, h, &res); err != nil || !res.Allowed {
			t.Fatal(err, res.Allowed)
		}
		h.Op, h.For = limitspec.Commit, 0
		if err := bp.HoldInto(ctx, req, h, &res); err != nil {
			t.Fatal(err)
		}
	}
	for range 50 {
		pair()
	}
	if n := testing.AllocsPerRun(1000, pair); n != 0 {
		t.Errorf("%.1f allocations per reserve and commit; want none", n)
	}
}
