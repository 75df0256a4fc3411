package linearize

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
)

// ownSpec is the policy of TestCheckerAcceptsTheOracle: the tests'
// pool (see linearize_test.go).
var ownSpec = Spec{Name: "pool", Identity: "tenant", Limits: []LimitSpec{
	{Name: "slots", Algorithm: "concurrency", Params: map[string]int64{"limit": 3}},
	{Name: "window", Algorithm: "fixed_window", Params: map[string]int64{"limit": 12, "window_ms": 1000}},
	{Name: "bucket", Algorithm: "token_bucket", Params: map[string]int64{"capacity": 6, "refill_tokens": 1, "refill_ms": 100}},
}}

// TestCheckerAcceptsTheOracle: a limiter that is the oracle's model itself
// (oracleLimiter: linearizable by construction, losing replies and
// sending operations on holds again as redislimit does), under the
// traffic of the Redis tests, makes a history the check accepts, quickly.
func TestCheckerAcceptsTheOracle(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	lim := &oracleLimiter{spec: ownSpec, rng: rand.New(rand.NewPCG(seed, 1)), models: map[string]*oracleModel{}, ran: map[int64][2]int{}}
	rec, err := NewRecorder(lim, ownSpec, 1_700_000_000_000, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	w := Workload{Clients: 32, Values: []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"}, Calls: 75, Duration: 10 * time.Second, Pause: 2 * time.Millisecond, Seed: seed}
	w.Run(t.Context(), rec)
	time.Sleep(50 * time.Millisecond) // the attempts applied later
	calls := rec.Calls()
	ops := Operations(calls, lim)
	res, err := Check(ownSpec, ops, 20*time.Second, t.ArtifactDir())
	st := Count(calls, ops)
	t.Logf("seed %d: %d calls (%v), %d operations, %d lost attempts (%d maybe run late): %s in %v", seed, st.Calls, st.ByClass, st.Operations, st.Lost, st.Late, res.Verdict, res.Took.Round(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != "Ok" {
		t.Fatalf("the oracle's own history is %s (see %s):\n%s", res.Verdict, res.Visualization, res.Explanation)
	}
}

// oracleLimiter decides by the oracle's model, one attempt at a time at
// a random moment of its call. One attempt in 8 loses its reply (see
// attempt). After a broken connection an operation on a hold is sent
// again, up to three attempts, and a decision fails with
// ErrOutcomeUnknown; after a timeout, any call fails so, and with the
// context's deadline. It counts the attempts sent (Attempts).
type oracleLimiter struct {
	spec   Spec
	mu     sync.Mutex
	rng    *rand.Rand
	models map[string]*oracleModel
	ran    map[int64][2]int // attempts, and of them timed out
}

// Ran is how many attempts of the call at now were made, and how many of
// them timed out.
func (l *oracleLimiter) Ran(now int64) (int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ran[now][0], l.ran[now][1]
}

// Limit decides req: Hold of a decision.
func (l *oracleLimiter) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	return l.Hold(ctx, req, limitspec.Hold{})
}

// Hold runs h (a decision when h is zero) on the model of req's value.
func (l *oracleLimiter) Hold(_ context.Context, req limitspec.Request, h limitspec.Hold) (limitspec.Result, error) {
	in := Input{Op: Decide, Value: req.IDs[l.spec.Identity], ID: h.ID, Cost: req.Cost, HoldMs: h.Ms(), Now: req.Now.UnixMilli()}
	if h.Op != 0 {
		in.Op = h.Op.String()
	}
	for attempt := 1; ; attempt++ {
		out, loss := l.attempt(in)
		switch {
		case loss == delivered:
			return asResult(out)
		case loss == timedOut:
			return limitspec.Result{}, fmt.Errorf("oracleLimiter: %w: %w: %w", limitspec.ErrUnavailable, limitspec.ErrOutcomeUnknown, context.DeadlineExceeded)
		case in.Op == Decide || attempt == 3:
			return limitspec.Result{}, fmt.Errorf("oracleLimiter: %w: %w", limitspec.ErrUnavailable, limitspec.ErrOutcomeUnknown)
		}
	}
}

// How an attempt's reply came back.
const (
	delivered = iota
	broken    // the connection broke: applied before, or never
	timedOut  // no reply in time: applied later, or never
)

// attempt applies in after a random wait. One attempt in 8 loses its
// reply: to a broken connection (applied, or not), or to a timeout
// (applied later, as a frozen server would once resumed, or not).
func (l *oracleLimiter) attempt(in Input) (out Output, loss int) {
	l.mu.Lock()
	wait := time.Duration(l.rng.IntN(3000)) * time.Microsecond
	later := time.Duration(l.rng.IntN(30_000)) * time.Microsecond
	if l.rng.IntN(8) == 0 {
		loss = broken + l.rng.IntN(2)
	}
	apply := loss == delivered || l.rng.IntN(2) == 0
	n := l.ran[in.Now]
	n[0]++
	if loss == timedOut {
		n[1]++
	}
	l.ran[in.Now] = n
	l.mu.Unlock()
	time.Sleep(wait)
	switch {
	case !apply:
	case loss == timedOut:
		go func() {
			time.Sleep(later)
			l.apply(in)
		}()
	default:
		out = l.apply(in)
	}
	return out, loss
}

// apply applies in to the model of its value.
func (l *oracleLimiter) apply(in Input) Output {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.models[in.Value]
	if m == nil {
		m, _ = newOracleModel(l.spec, in.Value)
		l.models[in.Value] = m
	}
	return m.run(in)
}

// asResult is out as a limiter returns it.
func asResult(out Output) (limitspec.Result, error) {
	switch out.Class {
	case NoHold:
		return limitspec.Result{}, fmt.Errorf("oracleLimiter: %w", limitspec.ErrNoHold)
	case BadInput:
		return limitspec.Result{}, &limitspec.InputError{Msg: out.Err}
	}
	res := limitspec.Result{Allowed: out.Allowed, Binding: out.Binding}
	for _, l := range out.Limits {
		r := limitspec.LimitResult{Allowed: l.Allowed, Remaining: l.Remaining,
			RetryAfter: time.Duration(l.RetryAfterMs) * time.Millisecond, ResetAfter: time.Duration(l.ResetAfterMs) * time.Millisecond}
		if l.RetryAfterMs < 0 {
			r.RetryAfter = limitspec.Never
		}
		res.Limits = append(res.Limits, r)
	}
	return res, nil
}

// TestFingerprint: the oracle's data can be fingerprinted (no func
// reached), two orders of calls that commute reach one fingerprint, and a
// call that changes the data changes it.
func TestFingerprint(t *testing.T) {
	t.Parallel()
	a := Input{Op: Reserve, Value: "t", ID: "a", Cost: 1, HoldMs: 100, Now: 1000}
	b := Input{Op: Reserve, Value: "t", ID: "b", Cost: 2, HoldMs: 100, Now: 1000}
	nohold := Input{Op: Release, Value: "t", ID: "c", Now: 1000}
	fp := func(ins ...Input) string {
		m, err := newOracleModel(ownSpec, "t")
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range ins {
			m.run(in)
		}
		s, ok := fingerprint(m.state())
		if !ok {
			t.Fatalf("the oracle's data after %v cannot be fingerprinted", ins)
		}
		return s
	}
	switch {
	case fp(a, b) != fp(b, a):
		t.Error("two reserves at one time reach two fingerprints in two orders")
	case fp(a, nohold) != fp(a):
		t.Error("a release refused with NOHOLD changed the fingerprint")
	case fp(a) == fp():
		t.Error("a reserve did not change the fingerprint")
	}
}
