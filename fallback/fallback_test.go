package fallback

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
)

// t0 is the time of every local decision, so that they are exact.
var t0 = time.UnixMilli(1_700_000_000_000)

// behaviour is what the fake primary does.
type behaviour int32

const (
	succeed behaviour = iota // answers: admitted, limit 100
	fail                     // fails at once, as an unreachable Redis
	hang                     // waits for its ctx to end, then fails
	refuse                   // refuses the request as bad input
	gate                     // signals entered, waits for release, then answers as gated says
)

// errDown is the fake primary's failure.
var errDown = fmt.Errorf("%w: connection refused", limitspec.ErrUnavailable)

// errRefused is the fake primary's bad-input error.
var errRefused = &goimpl.InputError{Msg: "fake: cost must be an integer in [0, 9007199254740991], got -1"}

// fake is a primary limiter whose behaviour the test sets.
type fake struct {
	do      atomic.Int32 // a behaviour
	gated   atomic.Int32 // what a gate call does once released
	calls   atomic.Int64
	resets  atomic.Int64
	entered chan struct{} // a gate call sends here when it starts
	release chan struct{} // and waits for this
}

func newFake(b behaviour) *fake {
	f := &fake{entered: make(chan struct{}, 100), release: make(chan struct{})}
	f.do.Store(int32(b))
	return f
}

func (f *fake) set(b behaviour) { f.do.Store(int32(b)) }

func (f *fake) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	f.calls.Add(1)
	b := behaviour(f.do.Load())
	if b == gate {
		f.entered <- struct{}{}
		select {
		case <-f.release:
		case <-ctx.Done():
			return limitspec.Result{}, fmt.Errorf("%w: %w", limitspec.ErrUnavailable, ctx.Err())
		}
		b = behaviour(f.gated.Load())
	}
	switch b {
	case fail:
		return limitspec.Result{}, errDown
	case hang:
		<-ctx.Done()
		return limitspec.Result{}, fmt.Errorf("%w: %w", limitspec.ErrUnavailable, ctx.Err())
	case refuse:
		return limitspec.Result{}, errRefused
	}
	r := goimpl.Result{Allowed: true, Limit: 100, Remaining: 99, RetryAfterMs: -1, ResetAfterMs: 10}
	return limitspec.Result{Result: r, Limits: []limitspec.Quota{{Name: "fake", Result: r}}}, nil
}

func (f *fake) Reset(ctx context.Context, req limitspec.Request) error {
	f.resets.Add(1)
	return nil
}

// clock is a breaker clock the test moves.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(t0.UnixNano())
	return c
}

func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func req(key string, cost int64) limitspec.Request {
	return limitspec.Request{Key: key, Cost: cost, Now: t0}
}

// gcra is a local gcra limiter admitting burst at once, then 1 a second.
func gcra(t *testing.T, burst int64) limitspec.Limiter {
	t.Helper()
	g, err := goimpl.NewGCRA(goimpl.GCRAParams{Burst: burst, Rate: 1, PeriodMs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return limitspec.Local("gcra", g)
}

// fixedWindow is a local fixed_window limiter of limit per minute.
func fixedWindow(t *testing.T, limit int64) limitspec.Limiter {
	t.Helper()
	fw, err := goimpl.NewFixedWindow(goimpl.FixedWindowParams{Limit: limit, WindowMs: 60000})
	if err != nil {
		t.Fatal(err)
	}
	return limitspec.Local("fixed_window", fw)
}

// mustNew is New that fails the test on error, with the test's clock.
func mustNew(t *testing.T, primary, local limitspec.Limiter, opts Options, c *clock) *Limiter {
	t.Helper()
	if c != nil {
		opts.Now = c.Now
	}
	l, err := New(primary, local, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// limit calls l.Limit and fails the test on error.
func limit(t *testing.T, l *Limiter, r limitspec.Request) limitspec.Result {
	t.Helper()
	res, err := l.Limit(context.Background(), r)
	if err != nil {
		t.Fatalf("Limit(%+v): %v", r, err)
	}
	return res
}

func TestNewRefuses(t *testing.T) {
	p, loc := newFake(succeed), gcra(t, 1)
	for _, tc := range []struct {
		name           string
		primary, local limitspec.Limiter
		opts           Options
	}{
		{"nil primary", nil, loc, Options{}},
		{"nil local in Local mode", p, nil, Options{}},
		{"unknown mode", p, loc, Options{Mode: FailClosed + 1}},
		{"negative processes", p, loc, Options{Processes: -1}},
		{"negative timeout", p, loc, Options{Timeout: -time.Millisecond}},
		{"negative failures", p, loc, Options{Failures: -1}},
		{"negative open time", p, loc, Options{OpenFor: -time.Second}},
	} {
		if _, err := New(tc.primary, tc.local, tc.opts); !errors.Is(err, limitspec.ErrBadInput) {
			t.Errorf("%s: New: %v, want an error matching ErrBadInput", tc.name, err)
		}
	}
	for _, m := range []Mode{FailOpen, FailClosed} {
		if _, err := New(p, nil, Options{Mode: m}); err != nil {
			t.Errorf("%v mode without a local limiter: %v", m, err)
		}
	}
}

func TestPrimaryDecides(t *testing.T) {
	p, loc := newFake(succeed), gcra(t, 1)
	l := mustNew(t, p, loc, Options{Processes: 4}, newClock())
	for i := 0; i < 3; i++ {
		res := limit(t, l, req("k", 1))
		// The primary's result, unscaled, with Side set.
		if res.Side != limitspec.Primary || !res.Allowed || res.Limit != 100 || res.Remaining != 99 || len(res.Limits) != 1 {
			t.Fatalf("call %d: %+v, want the primary's result", i, res)
		}
	}
	// The local limiter was not consulted: its burst of 1 is whole.
	if r, _ := loc.Limit(context.Background(), req("k", 1)); !r.Allowed {
		t.Errorf("the local limiter was charged while the primary decided: %+v", r)
	}
	want := Stats{Primary: 3, State: Closed}
	if diff := cmp.Diff(want, l.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestModes(t *testing.T) {
	c := newClock()
	for _, tc := range []struct {
		mode Mode
		want limitspec.Result // without Limits, checked apart
	}{
		{Local, limitspec.Result{Result: goimpl.Result{Allowed: true, Limit: 2, Remaining: 1, RetryAfterMs: -1, ResetAfterMs: 1000}, Side: limitspec.Fallback}},
		{FailOpen, limitspec.Result{Result: goimpl.Result{Allowed: true, RetryAfterMs: -1}, Side: limitspec.FailOpen}},
		// The breaker is still closed after one failure: the next call
		// tries the primary, so retry after the least wait, 1 ms.
		{FailClosed, limitspec.Result{Result: goimpl.Result{RetryAfterMs: 1}, Side: limitspec.FailClosed}},
	} {
		l := mustNew(t, newFake(fail), gcra(t, 2), Options{Mode: tc.mode}, c)
		res := limit(t, l, req("k", 1))
		limits := res.Limits
		res.Limits = nil
		if diff := cmp.Diff(tc.want, res); diff != "" {
			t.Errorf("%v: result (-want +got):\n%s", tc.mode, diff)
		}
		if wantQuotas := tc.mode == Local; (len(limits) == 1) != wantQuotas || len(limits) > 1 {
			t.Errorf("%v: Limits %+v, want the local quota only in Local mode", tc.mode, limits)
		}
	}
}

func TestFailClosedRetryAfter(t *testing.T) {
	c := newClock()
	l := mustNew(t, newFake(fail), nil, Options{Mode: FailClosed, Failures: 2, OpenFor: 1500 * time.Millisecond}, c)
	for i, want := range []int64{1, 1500} { // closed after the first failure, open after the second
		if res := limit(t, l, req("k", 1)); res.Allowed || res.RetryAfterMs != want || res.Side != limitspec.FailClosed {
			t.Errorf("call %d: %+v, want denied, RetryAfterMs %d", i, res, want)
		}
	}
	for _, tc := range []struct {
		advance time.Duration
		want    int64
	}{
		{400 * time.Millisecond, 1100},
		{1099*time.Millisecond + 500*time.Microsecond, 1}, // 0.5 ms left, rounded up
	} {
		c.advance(tc.advance)
		if res := limit(t, l, req("k", 1)); res.RetryAfterMs != tc.want {
			t.Errorf("after %v more: RetryAfterMs %d, want %d", tc.advance, res.RetryAfterMs, tc.want)
		}
	}
}

func TestShare(t *testing.T) {
	for _, tc := range []struct {
		limit, processes, cost int64
		admitted               int   // requests admitted in one window
		reported               int64 // Limit reported
	}{
		{10, 3, 1, 3, 3}, // 3·3 = 9 ≤ 10 < 12
		{10, 1, 1, 10, 10},
		{10, 10, 1, 1, 1},
		{10, 11, 1, 0, 0}, // one eleventh of 10 is not a whole request
		{10, 2, 2, 2, 5},  // costs of 4: 8 ≤ 10 < 12
		{12, 4, 1, 3, 3},
	} {
		l := mustNew(t, newFake(fail), fixedWindow(t, tc.limit), Options{Processes: int(tc.processes)}, newClock())
		admitted := 0
		for i := 0; i < int(tc.limit)+1; i++ {
			res := limit(t, l, req("k", tc.cost))
			if res.Allowed {
				admitted++
			}
			// The local limiter has limit - admitted·cost·processes left.
			left := tc.limit - int64(admitted)*tc.cost*tc.processes
			if res.Limit != tc.reported || res.Remaining != left/tc.processes || res.Side != limitspec.Fallback {
				t.Fatalf("%+v, call %d: %+v, want Limit %d, Remaining %d", tc, i, res.Result, tc.reported, left/tc.processes)
			}
			if q := res.Limits[0]; q.Limit != res.Limit || q.Remaining != res.Remaining {
				t.Fatalf("%+v, call %d: quota %+v, want the result's Limit and Remaining", tc, i, q.Result)
			}
		}
		if admitted != tc.admitted {
			t.Errorf("%+v: %d admitted, want %d", tc, admitted, tc.admitted)
		}
	}
}

func TestShareOverflow(t *testing.T) {
	l := mustNew(t, newFake(fail), fixedWindow(t, 10), Options{Processes: 3}, newClock())
	const largest = (1<<53 - 1) / 3
	// The largest cost whose share is exact: decided, never admitted.
	if res := limit(t, l, req("k", largest)); res.Allowed || res.RetryAfterMs != -1 || res.Side != limitspec.Fallback {
		t.Errorf("cost %d: %+v, want denied for ever", int64(largest), res)
	}
	if _, err := l.Limit(context.Background(), req("k", largest+1)); !errors.Is(err, limitspec.ErrBadInput) {
		t.Errorf("cost %d: %v, want an error matching ErrBadInput", int64(largest+1), err)
	}
	// A peek is a peek: cost 0 times 3.
	if res := limit(t, l, req("k", 0)); !res.Allowed || res.Remaining != 3 {
		t.Errorf("peek: %+v, want allowed with 3 remaining", res)
	}
}

func TestSharePolicy(t *testing.T) {
	p, err := goimpl.NewPolicy("ip_user", nil)
	if err != nil {
		t.Fatal(err)
	}
	l := mustNew(t, newFake(fail), limitspec.LocalPolicy(p), Options{Processes: 4}, newClock())
	r := limitspec.Request{IDs: map[string]string{"ip": "10.0.0.1", "user": "u1"}, Cost: 1, Now: t0}
	// ip_second and user_second allow 10 a second: 2 for each of 4 processes.
	wantLimits := []int64{10 / 4, 120 / 4, 240 / 4, 10 / 4, 120 / 4, 240 / 4}
	for i, wantAllowed := range []bool{true, true, false} {
		res := limit(t, l, r)
		if res.Allowed != wantAllowed || len(res.Limits) != len(wantLimits) {
			t.Fatalf("call %d: %+v, want allowed %v and %d limits", i, res, wantAllowed, len(wantLimits))
		}
		used := int64(4 * min(i+1, 2))
		full := []int64{10, 120, 240, 10, 120, 240}
		for j, q := range res.Limits {
			if q.Limit != wantLimits[j] || q.Remaining != (full[j]-used)/4 {
				t.Errorf("call %d, limit %s: Limit %d, Remaining %d; want %d, %d", i, q.Name, q.Limit, q.Remaining, wantLimits[j], (full[j]-used)/4)
			}
		}
	}
}

// transitions records the breaker's changes.
type transitions struct {
	mu  sync.Mutex
	got []string
}

func (tr *transitions) record(from, to State) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.got = append(tr.got, from.String()+"→"+to.String())
}

func (tr *transitions) take() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	got := tr.got
	tr.got = nil
	return got
}

func TestBreakerOpens(t *testing.T) {
	c, p, tr := newClock(), newFake(fail), &transitions{}
	l := mustNew(t, p, gcra(t, 100), Options{Failures: 3, OnStateChange: tr.record}, c)
	// Failures that are not consecutive do not open it.
	for i, b := range []behaviour{fail, fail, succeed, fail, fail, succeed} {
		p.set(b)
		limit(t, l, req("k", 1))
		if s := l.Stats().State; s != Closed {
			t.Fatalf("call %d: %v, want closed", i, s)
		}
	}
	p.set(fail)
	for i := 1; i <= 10; i++ {
		res := limit(t, l, req("k", 1))
		wantCalls, wantState := int64(6+min(i, 3)), Closed
		if i >= 3 {
			wantState = Open
		}
		if res.Side != limitspec.Fallback || p.calls.Load() != wantCalls || l.Stats().State != wantState {
			t.Fatalf("failure %d: side %v, %d primary calls, %v; want fallback, %d, %v", i, res.Side, p.calls.Load(), l.Stats().State, wantCalls, wantState)
		}
	}
	want := Stats{Primary: 2, Fallback: 14, PrimaryErrors: 7, Opens: 1, State: Open}
	if diff := cmp.Diff(want, l.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
	// Still open just before OpenFor has passed: no call reaches the primary.
	c.advance(DefaultOpenFor - time.Nanosecond)
	limit(t, l, req("k", 1))
	if p.calls.Load() != 9 {
		t.Errorf("%d primary calls while open, want 9", p.calls.Load())
	}
	if diff := cmp.Diff([]string{"closed→open"}, tr.take()); diff != "" {
		t.Errorf("state changes (-want +got):\n%s", diff)
	}
}

// openBreaker returns a Limiter over p whose breaker has just opened (one
// failure opens it), with OpenFor 1 s on clock c.
func openBreaker(t *testing.T, p *fake, c *clock, tr *transitions) *Limiter {
	t.Helper()
	p.set(fail)
	l := mustNew(t, p, gcra(t, 100), Options{Failures: 1, OnStateChange: tr.record}, c)
	limit(t, l, req("k", 1))
	if s := l.Stats().State; s != Open {
		t.Fatalf("after a failure: %v, want open", s)
	}
	tr.take()
	return l
}

// probe starts a call that becomes the half-open probe, held in the fake
// primary until the test releases it; done receives its outcome.
func probe(t *testing.T, l *Limiter, p *fake, ctx context.Context, then behaviour) (done chan limitspec.Result, errc chan error) {
	t.Helper()
	p.gated.Store(int32(then))
	p.set(gate)
	done, errc = make(chan limitspec.Result, 1), make(chan error, 1)
	go func() {
		res, err := l.Limit(ctx, req("k", 1))
		done <- res
		errc <- err
	}()
	select {
	case <-p.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the probe did not reach the primary")
	}
	return done, errc
}

func TestHalfOpen(t *testing.T) {
	for _, tc := range []struct {
		name    string
		then    behaviour // what the probe finds
		side    limitspec.Side
		state   State
		changes []string
	}{
		{"probe succeeds", succeed, limitspec.Primary, Closed, []string{"open→half-open", "half-open→closed"}},
		{"probe fails", fail, limitspec.Fallback, Open, []string{"open→half-open", "half-open→open"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, p, tr := newClock(), newFake(fail), &transitions{}
			l := openBreaker(t, p, c, tr)
			c.advance(DefaultOpenFor)
			done, errc := probe(t, l, p, context.Background(), tc.then)
			// While the probe is out, the others are decided without the primary.
			for i := 0; i < 5; i++ {
				if res := limit(t, l, req("k", 1)); res.Side != limitspec.Fallback {
					t.Fatalf("call %d during the probe: side %v, want fallback", i, res.Side)
				}
			}
			if n, s := p.calls.Load(), l.Stats().State; n != 2 || s != HalfOpen {
				t.Fatalf("during the probe: %d primary calls, %v; want 2 (the failure, the probe), half-open", n, s)
			}
			close(p.release)
			if res, err := <-done, <-errc; err != nil || res.Side != tc.side {
				t.Fatalf("probe: %+v, %v; want side %v", res, err, tc.side)
			}
			if s := l.Stats().State; s != tc.state {
				t.Errorf("after the probe: %v, want %v", s, tc.state)
			}
			if diff := cmp.Diff(tc.changes, tr.take()); diff != "" {
				t.Errorf("state changes (-want +got):\n%s", diff)
			}
			checkAfterProbe(t, l, p, c, tc.state)
		})
	}
}

// checkAfterProbe checks that a closed breaker calls the primary at once
// and that a reopened one waits OpenFor from the failed probe.
func checkAfterProbe(t *testing.T, l *Limiter, p *fake, c *clock, s State) {
	t.Helper()
	p.set(succeed)
	calls := p.calls.Load()
	if s == Open {
		c.advance(DefaultOpenFor - time.Millisecond)
		if res := limit(t, l, req("k", 1)); res.Side != limitspec.Fallback || p.calls.Load() != calls {
			t.Errorf("reopened, before OpenFor: side %v, %d new primary calls; want fallback, none", res.Side, p.calls.Load()-calls)
		}
		c.advance(time.Millisecond)
	}
	if res := limit(t, l, req("k", 1)); res.Side != limitspec.Primary || p.calls.Load() != calls+1 {
		t.Errorf("side %v, %d new primary calls; want primary, 1", res.Side, p.calls.Load()-calls)
	}
	if st := l.Stats(); st.State != Closed || st.Opens != uint64(1+int(s)) {
		t.Errorf("at the end: %+v, want closed after %d openings", st, 1+int(s))
	}
}

func TestProbeWithoutVerdict(t *testing.T) {
	c, p, tr := newClock(), newFake(fail), &transitions{}
	l := openBreaker(t, p, c, tr)
	c.advance(DefaultOpenFor)
	// The caller gives up while the probe is out: no verdict on the primary.
	ctx, cancel := context.WithCancel(context.Background())
	done, errc := probe(t, l, p, ctx, succeed)
	cancel()
	if _, err := <-done, <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled probe: %v, want context.Canceled", err)
	}
	// A bad request as the next probe: no verdict either.
	p.set(refuse)
	if _, err := l.Limit(context.Background(), req("k", 1)); err != errRefused {
		t.Fatalf("refused probe: %v, want the primary's error", err)
	}
	st := l.Stats()
	if st.State != Open || st.Opens != 1 || st.PrimaryErrors != 1 || st.Errors != 2 {
		t.Errorf("after probes without verdict: %+v; want open, opened once, 1 primary error, 2 errors", st)
	}
	// The next call probes at once, with no more waiting.
	p.set(succeed)
	if res := limit(t, l, req("k", 1)); res.Side != limitspec.Primary {
		t.Errorf("next call: side %v, want primary", res.Side)
	}
	want := []string{"open→half-open", "half-open→open", "open→half-open", "half-open→open", "open→half-open", "half-open→closed"}
	if diff := cmp.Diff(want, tr.take()); diff != "" {
		t.Errorf("state changes (-want +got):\n%s", diff)
	}
}

func TestBadInputPassesThrough(t *testing.T) {
	p := newFake(refuse)
	l := mustNew(t, p, gcra(t, 1), Options{Failures: 1}, newClock())
	for i := 0; i < 3; i++ {
		if _, err := l.Limit(context.Background(), req("k", 1)); err != errRefused {
			t.Fatalf("call %d: %v, want the primary's own error", i, err)
		}
	}
	// No fallback decision, no primary failure, the breaker closed.
	want := Stats{Errors: 3, State: Closed}
	if diff := cmp.Diff(want, l.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestLocalErrorReturned(t *testing.T) {
	l := mustNew(t, newFake(fail), gcra(t, 1), Options{}, newClock())
	// goimpl refuses an empty key; the fake primary failed before seeing it.
	_, err := l.Limit(context.Background(), req("", 1))
	var ie *goimpl.InputError
	if !errors.As(err, &ie) || ie.Msg != "gcra: key must not be empty" {
		t.Errorf("Limit: %v, want the local limiter's error", err)
	}
	want := Stats{PrimaryErrors: 1, Errors: 1, State: Closed}
	if diff := cmp.Diff(want, l.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestCallerContext(t *testing.T) {
	p := newFake(hang)
	l := mustNew(t, p, gcra(t, 1), Options{Failures: 1, Timeout: time.Hour}, newClock())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Limit(ctx, req("k", 1)); err != context.Canceled || p.calls.Load() != 0 {
		t.Errorf("done ctx: %v after %d primary calls, want context.Canceled, none", err, p.calls.Load())
	}
	// The caller's deadline comes before Timeout: its error, not a decision.
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := l.Limit(ctx, req("k", 1)); err != context.DeadlineExceeded {
		t.Errorf("caller's deadline: %v, want context.DeadlineExceeded", err)
	}
	// Neither was the primary's failure: the breaker (Failures 1) is closed.
	want := Stats{Errors: 2, State: Closed}
	if diff := cmp.Diff(want, l.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestHangingPrimary(t *testing.T) {
	const timeout = 50 * time.Millisecond
	l := mustNew(t, newFake(hang), gcra(t, 1), Options{Timeout: timeout}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	res, err := l.Limit(ctx, req("k", 1))
	took := time.Since(start)
	if err != nil || res.Side != limitspec.Fallback || !res.Allowed {
		t.Fatalf("Limit: %+v, %v; want an admission by the fallback", res, err)
	}
	// It waited for the primary's deadline, and not for the caller's: the
	// margin is for a loaded machine, far below the caller's 10 s.
	if took < timeout || took > timeout+2*time.Second {
		t.Errorf("decided after %v, want Timeout (%v) plus a margin of at most 2 s", took, timeout)
	}
	if ctx.Err() != nil {
		t.Errorf("the caller's deadline passed")
	}
}

func TestReset(t *testing.T) {
	p, loc := newFake(fail), gcra(t, 1)
	l := mustNew(t, p, loc, Options{}, newClock())
	if res := limit(t, l, req("k", 1)); !res.Allowed || res.Side != limitspec.Fallback {
		t.Fatalf("first call: %+v, want admitted by the fallback", res)
	}
	if res := limit(t, l, req("k", 1)); res.Allowed {
		t.Fatalf("second call: %+v, want denied (burst 1)", res)
	}
	if err := l.Reset(context.Background(), req("k", 0)); err != nil {
		t.Fatal(err)
	}
	if res := limit(t, l, req("k", 1)); !res.Allowed || p.resets.Load() != 1 {
		t.Errorf("after Reset: %+v, %d primary resets; want admitted, 1", res, p.resets.Load())
	}
	// Neither limiter can reset: a fake without Reset, and no local.
	l = mustNew(t, struct{ limitspec.Limiter }{p}, nil, Options{Mode: FailOpen}, nil)
	if err := l.Reset(context.Background(), req("k", 0)); !errors.Is(err, limitspec.ErrBadInput) {
		t.Errorf("Reset without resetters: %v, want an error matching ErrBadInput", err)
	}
}

// TestCountsUnderLoad runs many goroutines while the primary changes
// behaviour, and checks that the counters account for every call made.
func TestCountsUnderLoad(t *testing.T) {
	p, tr := newFake(succeed), &transitions{}
	l := mustNew(t, p, gcra(t, 1_000_000), Options{Failures: 2, OpenFor: time.Millisecond, OnStateChange: tr.record}, nil)
	const workers, calls = 8, 500
	var sides [4]atomic.Uint64
	var errs atomic.Uint64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for i := 0; i < calls; i++ {
				if w == 0 && i%50 == 0 {
					p.set([]behaviour{succeed, fail, refuse}[i/50%3])
				}
				res, err := l.Limit(context.Background(), req(fmt.Sprint("k", w), 1))
				if err != nil {
					errs.Add(1)
					continue
				}
				sides[res.Side].Add(1)
			}
		})
	}
	wg.Wait()
	st := l.Stats()
	want := Stats{Primary: sides[0].Load(), Fallback: sides[1].Load(), Errors: errs.Load(),
		PrimaryErrors: st.PrimaryErrors, Opens: st.Opens, State: st.State}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("Stats (-counted +got):\n%s", diff)
	}
	if n := st.Primary + st.Fallback + st.Errors; n != workers*calls {
		t.Errorf("%d decisions and errors, want %d", n, workers*calls)
	}
	// Every primary call is a decision, a failure or a refusal (the only errors).
	if n := st.Primary + st.PrimaryErrors + st.Errors; n != uint64(p.calls.Load()) {
		t.Errorf("%d primary outcomes counted, %d primary calls made", n, p.calls.Load())
	}
	// Every probe ended: as many half-opens as ends of half-open.
	var started, ended int
	for _, c := range tr.take() {
		switch c {
		case "open→half-open":
			started++
		case "half-open→closed", "half-open→open":
			ended++
		}
	}
	if started != ended || st.State == HalfOpen {
		t.Errorf("%d probes started, %d ended, state %v", started, ended, st.State)
	}
	t.Logf("%+v; %d probes", st, started)
}

// BenchmarkLimit measures what the wrapper adds to a call: the primary
// answering (the breaker closed) and the primary failing (the breaker
// open, the local gcra deciding), beside the local limiter alone.
func BenchmarkLimit(b *testing.B) {
	g, err := goimpl.NewGCRA(goimpl.GCRAParams{Burst: 1_000_000_000, Rate: 1_000_000_000, PeriodMs: 1000})
	if err != nil {
		b.Fatal(err)
	}
	loc := limitspec.Local("gcra", g)
	for _, bc := range []struct {
		name string
		lim  limitspec.Limiter
	}{
		{"local alone", loc},
		{"primary", must(New(newFake(succeed), loc, Options{}))},
		{"fallback", must(New(newFake(fail), loc, Options{}))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := bc.lim.Limit(ctx, limitspec.Request{Key: "k", Cost: 1}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

func must(l *Limiter, err error) *Limiter {
	if err != nil {
		panic(err)
	}
	return l
}
