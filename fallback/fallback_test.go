package fallback

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// t0 is the time of every local decision, so that they are exact.
var t0 = time.UnixMilli(1_700_000_000_000)

// behaviour is what the fake primary does.
type behaviour int32

const (
	succeed      behaviour = iota // answers: admitted, quota 100
	fail                          // fails at once, as an unreachable Redis
	hang                          // waits for its ctx to end, then fails
	refuse                        // refuses the request as bad input
	misconfigure                  // fails as a Redis holding another library version
	gate                          // signals entered, waits for release, then answers as gated says
)

// errDown is the fake primary's failure.
var errDown = fmt.Errorf("%w: connection refused", limitspec.ErrUnavailable)

// errRefused is the fake primary's bad-input error.
var errRefused = &limitspec.InputError{Msg: "fake: cost must be an integer in [0, 9007199254740991], got -1"}

// errMisconfigured is the fake primary's misconfiguration.
var errMisconfigured = fmt.Errorf("%w: the server holds limitspec library version 2, this build uses 3", limitspec.ErrMisconfigured)

// primaryResult is what the fake primary answers when it succeeds.
func primaryResult() limitspec.Result {
	return limitspec.Result{Allowed: true, Limits: []limitspec.LimitResult{
		{Name: "fake", Allowed: true, Quota: 100, Remaining: 99, ResetAfter: 10 * time.Millisecond}}}
}

// fake is a primary limiter whose behaviour the test sets.
type fake struct {
	do      atomic.Int32 // a behaviour
	gated   atomic.Int32 // what a gate call does once released
	calls   atomic.Int64 // decisions asked
	paid    atomic.Int64 // costs forced on it: what the local limiter admitted while it failed
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
	if req.Force && behaviour(f.do.Load()) == succeed {
		f.paid.Add(req.Cost)
		return primaryResult(), nil
	}
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
	case misconfigure:
		return limitspec.Result{}, errMisconfigured
	}
	return primaryResult(), nil
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

// gcra admits burst at once, then 1 a second.
func gcra(burst int64) limitspec.Limit {
	return limitspec.GCRA{Burst: burst, Rate: 1, Period: time.Second}
}

// fixedWindow admits limit a minute.
func fixedWindow(limit int64) limitspec.Limit {
	return limitspec.FixedWindow{Limit: limit, Window: time.Minute}
}

// req is a request of cost for key by lim, at t0.
func req(lim limitspec.Limit, key string, cost int64) limitspec.Request {
	return limitspec.Request{Key: key, Limit: lim, Cost: cost, Peek: cost == 0, Now: t0}
}

// local is an in-process limiter without sweeper, its clock at t0.
func local(t testing.TB) *goimpl.Limiter {
	t.Helper()
	l, err := goimpl.New(goimpl.Options{NoSweeper: true, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
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
func limit(t *testing.T, l limitspec.Limiter, r limitspec.Request) limitspec.Result {
	t.Helper()
	res, err := l.Limit(context.Background(), r)
	if err != nil {
		t.Fatalf("Limit(%+v): %v", r, err)
	}
	return res
}

func TestNewRefuses(t *testing.T) {
	p, loc := newFake(succeed), local(t)
	var nilMemory *goimpl.Limiter
	var nilFake *fake
	for _, tc := range []struct {
		name           string
		primary, local limitspec.Limiter
		opts           Options
		msg            string // what the error must say
	}{
		{"nil primary", nil, loc, Options{}, "the primary limiter is nil"},
		{"typed nil primary", nilFake, loc, Options{}, "the primary limiter is nil"},
		{"typed nil primary, fail open", nilMemory, nil, Options{Mode: FailOpen}, "the primary limiter is nil"},
		{"nil local in Local mode", p, nil, Options{}, "the local limiter is nil in Local mode (Options.Mode)"},
		{"typed nil local in Local mode", p, nilMemory, Options{}, "the local limiter is nil in Local mode (Options.Mode)"},
		{"unknown mode", p, loc, Options{Mode: FailClosed + 1}, "Options.Mode: unknown mode 3"},
		{"negative processes", p, loc, Options{Processes: -1}, "Options.Processes must be in [0, 65536], got -1"},
		{"too many processes", p, loc, Options{Processes: 1 << 60}, "Options.Processes must be in [0, 65536], got 1152921504606846976"},
		{"one process too many", p, loc, Options{Processes: MaxProcesses + 1}, "Options.Processes must be in [0, 65536], got 65537"},
		{"negative timeout", p, loc, Options{Timeout: -time.Millisecond}, "Options.Timeout must be ≥ 0, got -1ms"},
		{"negative failures", p, loc, Options{Failures: -1}, "Options.Failures must be ≥ 0, got -1"},
		{"negative open time", p, loc, Options{OpenFor: -time.Second}, "Options.OpenFor must be ≥ 0, got -1s"},
		{"negative reports", p, loc, Options{Reports: -1}, "Options.Reports must be ≥ 0, got -1"},
	} {
		l, err := New(tc.primary, tc.local, tc.opts)
		if l != nil || !errors.Is(err, limitspec.ErrMisconfigured) || fmt.Sprint(err) != "fallback: misconfigured: "+tc.msg {
			t.Errorf("%s: New: %v, %v; want no limiter and an error matching ErrMisconfigured saying %q", tc.name, l, err, tc.msg)
		}
	}
	for _, m := range []Mode{FailOpen, FailClosed} {
		if _, err := New(p, nil, Options{Mode: m}); err != nil {
			t.Errorf("%v mode without a local limiter: %v", m, err)
		}
	}
	if _, err := New(p, loc, Options{Processes: MaxProcesses}); err != nil {
		t.Errorf("Processes: MaxProcesses: %v", err)
	}
}

// TestTypedNilLocalUnused: a typed nil local limiter, which FailOpen mode
// never calls, is accepted and left alone, by Limit and by Reset.
func TestTypedNilLocalUnused(t *testing.T) {
	var nilMemory *goimpl.Limiter
	p := newFake(fail)
	l := mustNew(t, struct{ limitspec.Limiter }{p}, nilMemory, Options{Mode: FailOpen}, newClock())
	if res := limit(t, l, req(gcra(1), "k", 1)); !res.Allowed || res.Side != limitspec.FailOpen {
		t.Errorf("Limit: %+v, want admitted by fail-open", res)
	}
	if err := l.Reset(context.Background(), req(gcra(1), "k", 0)); !errors.Is(err, limitspec.ErrBadInput) {
		t.Errorf("Reset: %v, want an error matching ErrBadInput (neither limiter can reset)", err)
	}
}

func TestPrimaryDecides(t *testing.T) {
	p, loc := newFake(succeed), local(t)
	l := mustNew(t, p, loc, Options{Processes: 4}, newClock())
	want := primaryResult() // unscaled, with Side set (Primary is 0)
	for i := 0; i < 3; i++ {
		if diff := cmp.Diff(want, limit(t, l, req(gcra(1), "k", 1))); diff != "" {
			t.Fatalf("call %d (-want +got):\n%s", i, diff)
		}
	}
	// The local limiter was not consulted: its burst of 1 is whole.
	if r := limit(t, loc, req(gcra(1), "k", 1)); !r.Allowed {
		t.Errorf("the local limiter was charged while the primary decided: %+v", r)
	}
	if diff := cmp.Diff(Stats{Primary: 3, State: Closed}, l.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestModes(t *testing.T) {
	c := newClock()
	for _, tc := range []struct {
		mode Mode
		want limitspec.Result
	}{
		// gcra burst 2, rate 1/s at t0 on a fresh key: 1 left, whole again
		// in 1 s (the TAT is t0 + 1 s).
		{Local, limitspec.Result{Allowed: true, Side: limitspec.Fallback, Limits: []limitspec.LimitResult{
			{Name: "gcra", Limit: gcra(2), Allowed: true, Quota: 2, Remaining: 1, ResetAfter: time.Second}}}},
		{FailOpen, limitspec.Result{Allowed: true, Side: limitspec.FailOpen}},
		// The breaker is still closed after one failure: the next call
		// tries the primary, so retry after the least wait, 1 ms.
		{FailClosed, limitspec.Result{RetryAfter: time.Millisecond, Side: limitspec.FailClosed}},
	} {
		l := mustNew(t, newFake(fail), local(t), Options{Mode: tc.mode}, c)
		if diff := cmp.Diff(tc.want, limit(t, l, req(gcra(2), "k", 1))); diff != "" {
			t.Errorf("%v: result (-want +got):\n%s", tc.mode, diff)
		}
	}
}

func TestFailClosedRetryAfter(t *testing.T) {
	c := newClock()
	l := mustNew(t, newFake(fail), nil, Options{Mode: FailClosed, Failures: 2, OpenFor: 1500 * time.Millisecond}, c)
	// Closed after the first failure (1 ms), open for 1.5 s after the second.
	for i, want := range []time.Duration{time.Millisecond, 1500 * time.Millisecond} {
		if res := limit(t, l, req(gcra(1), "k", 1)); res.Allowed || res.RetryAfter != want || res.Side != limitspec.FailClosed {
			t.Errorf("call %d: %+v, want denied, RetryAfter %v", i, res, want)
		}
	}
	for _, tc := range []struct {
		advance time.Duration
		want    time.Duration
	}{
		{400 * time.Millisecond, 1100 * time.Millisecond},
		{1099*time.Millisecond + 500*time.Microsecond, time.Millisecond}, // 0.5 ms left, rounded up
	} {
		c.advance(tc.advance)
		if res := limit(t, l, req(gcra(1), "k", 1)); res.RetryAfter != tc.want {
			t.Errorf("after %v more: RetryAfter %v, want %v", tc.advance, res.RetryAfter, tc.want)
		}
	}
}

func TestShare(t *testing.T) {
	for _, tc := range []struct {
		limit, processes, cost int64
		admitted               int   // requests admitted in one window
		quota                  int64 // Quota reported
	}{
		{10, 3, 1, 3, 3}, // 3·3 = 9 ≤ 10 < 12
		{10, 1, 1, 10, 10},
		{10, 10, 1, 1, 1},
		{10, 11, 1, 0, 0}, // one eleventh of 10 is not a whole request
		{10, 2, 2, 2, 5},  // costs of 4: 8 ≤ 10 < 12
		{12, 4, 1, 3, 3},
	} {
		l := mustNew(t, newFake(fail), local(t), Options{Processes: int(tc.processes)}, newClock())
		admitted := 0
		for i := 0; i < int(tc.limit)+1; i++ {
			res := limit(t, l, req(fixedWindow(tc.limit), "k", tc.cost))
			if res.Allowed {
				admitted++
			}
			// The local limiter has limit - admitted·cost·processes left.
			left := tc.limit - int64(admitted)*tc.cost*tc.processes
			if q := res.Limits[0]; q.Quota != tc.quota || q.Remaining != left/tc.processes || res.Side != limitspec.Fallback {
				t.Fatalf("%+v, call %d: %+v, want Quota %d, Remaining %d", tc, i, res, tc.quota, left/tc.processes)
			}
		}
		if admitted != tc.admitted {
			t.Errorf("%+v: %d admitted, want %d", tc, admitted, tc.admitted)
		}
	}
}

func TestShareOverflow(t *testing.T) {
	l := mustNew(t, newFake(fail), local(t), Options{Processes: 3}, newClock())
	const largest = (1<<53 - 1) / 3
	// The largest cost whose share is exact: decided, never admitted.
	if res := limit(t, l, req(fixedWindow(10), "k", largest)); res.Allowed || res.RetryAfter != limitspec.Never || res.Side != limitspec.Fallback {
		t.Errorf("cost %d: %+v, want denied for ever", int64(largest), res)
	}
	if _, err := l.Limit(context.Background(), req(fixedWindow(10), "k", largest+1)); !errors.Is(err, limitspec.ErrBadInput) {
		t.Errorf("cost %d: %v, want an error matching ErrBadInput", int64(largest+1), err)
	}
	// A peek is a peek: cost 0 times 3; 10/3 = 3 remaining.
	if res := limit(t, l, req(fixedWindow(10), "k", 0)); !res.Allowed || res.Limits[0].Remaining != 3 {
		t.Errorf("peek: %+v, want allowed with 3 remaining", res)
	}
}

func TestSharePolicy(t *testing.T) {
	p, err := limitspec.IPUserPolicy()
	if err != nil {
		t.Fatal(err)
	}
	l := mustNew(t, newFake(fail), local(t), Options{Processes: 4}, newClock())
	r := limitspec.Request{Policy: p, IDs: map[string]string{"ip": "10.0.0.1", "user": "u1"}, Cost: 1, Now: t0}
	// ip_second and user_second allow 10 a second: 2 for each of 4 processes.
	full := []int64{10, 120, 240, 10, 120, 240}
	for i, wantAllowed := range []bool{true, true, false} {
		res := limit(t, l, r)
		if res.Allowed != wantAllowed || len(res.Limits) != len(full) {
			t.Fatalf("call %d: %+v, want allowed %v and %d limits", i, res, wantAllowed, len(full))
		}
		used := int64(4 * min(i+1, 2)) // each admission charges 4; the third is denied
		for j, q := range res.Limits {
			if q.Quota != full[j]/4 || q.Remaining != (full[j]-used)/4 {
				t.Errorf("call %d, limit %s: Quota %d, Remaining %d; want %d, %d", i, q.Name, q.Quota, q.Remaining, full[j]/4, (full[j]-used)/4)
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
	l := mustNew(t, p, local(t), Options{Failures: 3, OnStateChange: tr.record}, c)
	// Failures that are not consecutive do not open it.
	for i, b := range []behaviour{fail, fail, succeed, fail, fail, succeed} {
		p.set(b)
		limit(t, l, req(gcra(100), "k", 1))
		if s := l.Stats().State; s != Closed {
			t.Fatalf("call %d: %v, want closed", i, s)
		}
	}
	p.set(fail)
	for i := 1; i <= 10; i++ {
		res := limit(t, l, req(gcra(100), "k", 1))
		wantCalls, wantState := int64(6+min(i, 3)), Closed
		if i >= 3 {
			wantState = Open
		}
		if res.Side != limitspec.Fallback || p.calls.Load() != wantCalls || l.Stats().State != wantState {
			t.Fatalf("failure %d: side %v, %d primary calls, %v; want fallback, %d, %v", i, res.Side, p.calls.Load(), l.Stats().State, wantCalls, wantState)
		}
	}
	want := Stats{Primary: 2, Fallback: 14, PrimaryErrors: 7, PrimaryDown: 7, Opens: 1, State: Open}
	if diff := cmp.Diff(want, l.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
	// Still open just before OpenFor has passed: no call reaches the primary.
	c.advance(DefaultOpenFor - time.Nanosecond)
	limit(t, l, req(gcra(100), "k", 1))
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
	l := mustNew(t, p, local(t), Options{Failures: 1, OnStateChange: tr.record}, c)
	limit(t, l, req(gcra(100), "k", 1))
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
		res, err := l.Limit(ctx, req(gcra(100), "k", 1))
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
				if res := limit(t, l, req(gcra(100), "k", 1)); res.Side != limitspec.Fallback {
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
		if res := limit(t, l, req(gcra(100), "k", 1)); res.Side != limitspec.Fallback || p.calls.Load() != calls {
			t.Errorf("reopened, before OpenFor: side %v, %d new primary calls; want fallback, none", res.Side, p.calls.Load()-calls)
		}
		c.advance(time.Millisecond)
	}
	if res := limit(t, l, req(gcra(100), "k", 1)); res.Side != limitspec.Primary || p.calls.Load() != calls+1 {
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
	// A bad request, then a misconfigured primary, as the next probes: no
	// verdict either, each returned as the primary's own error.
	for _, b := range []struct {
		do  behaviour
		err error
	}{{refuse, errRefused}, {misconfigure, errMisconfigured}} {
		p.set(b.do)
		if _, err := l.Limit(context.Background(), req(gcra(100), "k", 1)); err != b.err {
			t.Fatalf("probe: %v, want the primary's error %v", err, b.err)
		}
	}
	st := l.Stats()
	if st.State != Open || st.Opens != 1 || st.PrimaryErrors != 1 || st.Errors != 3 {
		t.Errorf("after probes without verdict: %+v; want open, opened once, 1 primary error, 3 errors", st)
	}
	// The next call probes at once, with no more waiting.
	p.set(succeed)
	if res := limit(t, l, req(gcra(100), "k", 1)); res.Side != limitspec.Primary {
		t.Errorf("next call: side %v, want primary", res.Side)
	}
	want := []string{"open→half-open", "half-open→open", "open→half-open", "half-open→open",
		"open→half-open", "half-open→open", "open→half-open", "half-open→closed"}
	if diff := cmp.Diff(want, tr.take()); diff != "" {
		t.Errorf("state changes (-want +got):\n%s", diff)
	}
}

// TestPrimaryErrorsPassThrough: a request the primary refuses as bad
// input, or a primary that is misconfigured, gets the primary's own
// error, in every mode: it is not decided locally, admitted or denied,
// not counted as a failure, and never opens the breaker (Failures 1).
func TestPrimaryErrorsPassThrough(t *testing.T) {
	for _, b := range []struct {
		do  behaviour
		err error
	}{{refuse, errRefused}, {misconfigure, errMisconfigured}} {
		for _, mode := range []Mode{Local, FailOpen, FailClosed} {
			p, loc := newFake(b.do), local(t)
			l := mustNew(t, p, loc, Options{Mode: mode, Failures: 1}, newClock())
			for i := 0; i < 3; i++ {
				if res, err := l.Limit(context.Background(), req(gcra(1), "k", 1)); err != b.err || res.Allowed || res.Limits != nil {
					t.Fatalf("%v, %v mode, call %d: %+v, %v; want the primary's own error %v", b.err, mode, i, res, err, b.err)
				}
			}
			if diff := cmp.Diff(Stats{Errors: 3, State: Closed}, l.Stats()); diff != "" {
				t.Errorf("%v, %v mode: Stats (-want +got):\n%s", b.err, mode, diff)
			}
			// The local limiter was never charged: its burst of 1 is whole.
			if r := limit(t, loc, req(gcra(1), "k", 1)); !r.Allowed {
				t.Errorf("%v, %v mode: the local limiter was charged: %+v", b.err, mode, r)
			}
		}
	}
}

func TestLocalErrorReturned(t *testing.T) {
	l := mustNew(t, newFake(fail), local(t), Options{}, newClock())
	// goimpl refuses an empty key; the fake primary failed before seeing it.
	_, err := l.Limit(context.Background(), req(gcra(1), "", 1))
	var ie *limitspec.InputError
	if !errors.As(err, &ie) || ie.Msg != "gcra: key must not be empty" {
		t.Errorf("Limit: %v, want the local limiter's error", err)
	}
	want := Stats{PrimaryErrors: 1, PrimaryDown: 1, Errors: 1, State: Closed}
	if diff := cmp.Diff(want, l.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestCallerContext(t *testing.T) {
	p := newFake(hang)
	l := mustNew(t, p, local(t), Options{Failures: 1, Timeout: time.Hour}, newClock())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Limit(ctx, req(gcra(1), "k", 1)); err != context.Canceled || p.calls.Load() != 0 {
		t.Errorf("done ctx: %v after %d primary calls, want context.Canceled, none", err, p.calls.Load())
	}
	// The caller's deadline comes before Timeout: its error, not a decision.
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := l.Limit(ctx, req(gcra(1), "k", 1)); err != context.DeadlineExceeded {
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
	l := mustNew(t, newFake(hang), local(t), Options{Timeout: timeout}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	res, err := l.Limit(ctx, req(gcra(1), "k", 1))
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
	p, loc := newFake(fail), local(t)
	l := mustNew(t, p, loc, Options{}, newClock())
	if res := limit(t, l, req(gcra(1), "k", 1)); !res.Allowed || res.Side != limitspec.Fallback {
		t.Fatalf("first call: %+v, want admitted by the fallback", res)
	}
	if res := limit(t, l, req(gcra(1), "k", 1)); res.Allowed {
		t.Fatalf("second call: %+v, want denied (burst 1)", res)
	}
	if err := l.Reset(context.Background(), req(gcra(1), "k", 0)); err != nil {
		t.Fatal(err)
	}
	if res := limit(t, l, req(gcra(1), "k", 1)); !res.Allowed || p.resets.Load() != 1 {
		t.Errorf("after Reset: %+v, %d primary resets; want admitted, 1", res, p.resets.Load())
	}
	// Neither limiter can reset: a fake without Reset, and no local.
	l = mustNew(t, struct{ limitspec.Limiter }{p}, nil, Options{Mode: FailOpen}, nil)
	if err := l.Reset(context.Background(), req(gcra(1), "k", 0)); !errors.Is(err, limitspec.ErrBadInput) {
		t.Errorf("Reset without resetters: %v, want an error matching ErrBadInput", err)
	}
}

// clusterLimiter is a Redis limiter on a Cluster client; New asks the
// cluster nothing, and Check needs no server.
func clusterLimiter(t *testing.T) *redislimit.Limiter {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	l, err := redislimit.New(context.Background(), rdb, redislimit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// odd is a limit of no generated package: no limiter can decide it.
type odd struct{}

func (odd) Algorithm() limitspec.Algorithm { return limitspec.Algorithm{Library: "odd", Name: "odd"} }
func (odd) Validate() error                { return nil }
func (odd) QuotaWindow() time.Duration     { return 0 }

// TestCheck: Check passes on the primary's verdict (a Cluster refuses a
// policy over two identities), then in Local mode the local limiter's,
// and without a Checker to ask, the limit's own Validate.
func TestCheck(t *testing.T) {
	ipUser, err := limitspec.IPUserPolicy()
	if err != nil {
		t.Fatal(err)
	}
	burstQuota, err := limitspec.BurstQuotaPolicy(1000)
	if err != nil {
		t.Fatal(err)
	}
	cluster, plain := clusterLimiter(t), struct{ limitspec.Limiter }{newFake(succeed)}
	for _, tc := range []struct {
		name           string
		primary, local limitspec.Limiter
		mode           Mode
		req            limitspec.Request
		want           string // "" for no error
	}{
		{"cluster, two identities", cluster, local(t), Local, limitspec.Request{Policy: ipUser},
			"fallback: the primary limiter refuses it: policy ip_user counts several identities or a constant ([ip user])"},
		{"cluster, one identity", cluster, local(t), Local, limitspec.Request{Policy: burstQuota}, ""},
		{"cluster, a valid limit", cluster, nil, FailOpen, limitspec.Request{Limit: gcra(1)}, ""},
		{"local refuses", plain, local(t), Local, limitspec.Request{Limit: odd{}},
			"fallback: the local limiter refuses it: odd.odd: no decision of this algorithm is linked in"},
		{"local unused in fail-open", plain, local(t), FailOpen, limitspec.Request{Limit: odd{}}, ""},
		{"nobody to ask: Validate", plain, nil, FailClosed, limitspec.Request{Limit: limitspec.GCRA{Rate: 1, Period: time.Second}},
			"gcra: parameter burst must be an integer in [1, 1000000000000], got 0"},
	} {
		l := mustNew(t, tc.primary, tc.local, Options{Mode: tc.mode}, nil)
		err := l.Check(tc.req)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want none", tc.name, err)
		case tc.want != "" && (!errors.Is(err, limitspec.ErrBadInput) || !strings.HasPrefix(fmt.Sprint(err), tc.want)):
			t.Errorf("%s: %v, want an error matching ErrBadInput beginning %q", tc.name, err, tc.want)
		}
	}
}

// TestCountsUnderLoad runs many goroutines while the primary changes
// behaviour, and checks that the counters account for every call made.
func TestCountsUnderLoad(t *testing.T) {
	p, tr := newFake(succeed), &transitions{}
	l := mustNew(t, p, local(t), Options{Failures: 2, OpenFor: time.Millisecond, OnStateChange: tr.record}, nil)
	const workers, calls = 8, 500
	var sides [4]atomic.Uint64
	var errs atomic.Uint64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for i := 0; i < calls; i++ {
				if w == 0 && i%50 == 0 {
					p.set([]behaviour{succeed, fail, refuse, misconfigure}[i/50%4])
				}
				res, err := l.Limit(context.Background(), req(gcra(1_000_000), fmt.Sprint("k", w), 1))
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
	// Every probe ended: as many half-opens as ends of half-open. Opens
	// counts every opening from closed, and the failed probes among the
	// ends of half-open that went back to open (a probe that ends
	// without a verdict goes back too, uncounted).
	var started, ended, fromClosed, toOpen uint64
	for _, c := range tr.take() {
		switch c {
		case "open→half-open":
			started++
		case "half-open→closed", "half-open→open":
			ended++
		}
		switch {
		case c == "closed→open":
			fromClosed++
			toOpen++
		case strings.HasSuffix(c, "→open"):
			toOpen++
		}
	}
	want := Stats{Primary: sides[0].Load(), Fallback: sides[1].Load(), Errors: errs.Load(),
		PrimaryErrors: st.PrimaryErrors, PrimaryDown: st.PrimaryErrors, Opens: st.Opens, State: st.State}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("Stats (-counted +got):\n%s", diff)
	}
	if st.PrimaryErrors == 0 || fromClosed == 0 || st.Opens < fromClosed || st.Opens > toOpen {
		t.Errorf("%d primary errors, %d openings; %d changes from closed to open and %d to open in all: want some errors, and openings between the two",
			st.PrimaryErrors, st.Opens, fromClosed, toOpen)
	}
	if n := st.Primary + st.Fallback + st.Errors; n != workers*calls {
		t.Errorf("%d decisions and errors, want %d", n, workers*calls)
	}
	// Every primary call is a decision, a failure or a refusal (the only errors).
	if n := st.Primary + st.PrimaryErrors + st.Errors; n != uint64(p.calls.Load()) {
		t.Errorf("%d primary outcomes counted, %d primary calls made", n, p.calls.Load())
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
	lim := limitspec.GCRA{Burst: 1_000_000_000, Rate: 1_000_000_000, Period: time.Second}
	loc, err := goimpl.New(goimpl.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { loc.Close() })
	for _, bc := range []struct {
		name string
		lim  limitspec.Limiter
	}{
		{"local alone", loc},
		{"primary", must(New(newFake(succeed), loc, Options{Logger: slog.New(slog.DiscardHandler)}))},
		{"fallback", must(New(newFake(fail), loc, Options{Logger: slog.New(slog.DiscardHandler)}))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := bc.lim.Limit(ctx, limitspec.Request{Key: "k", Limit: lim, Cost: 1}); err != nil {
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

// TestReportsForgetPolicies: a program that builds a policy per request
// leaves reports holding at most maxPolicies policies' limits.
func TestReportsForgetPolicies(t *testing.T) {
	r := newReports(10)
	for i := range 3 * maxPolicies {
		p, err := limitspec.NewPolicy("plan", limitspec.PolicyLimit{Name: "daily", Identity: "user",
			Limit: limitspec.FixedWindow{Limit: int64(i + 1), Window: time.Hour}})
		if err != nil {
			t.Fatal(err)
		}
		if ones := r.onesOf(p); len(ones) != 1 || ones[0].Name() != "plan" {
			t.Fatalf("policy %d: %v; want one policy named plan", i, ones)
		}
	}
	held := 0
	r.parts.Range(func(_, _ any) bool { held++; return true })
	if held > maxPolicies || int64(held) != r.policies.Load() {
		t.Errorf("%d policies held, %d counted; want at most %d, counted alike", held, r.policies.Load(), maxPolicies)
	}
}

// BenchmarkReportsMemory measures what the reports hold: a primary that
// answers decides one request of each of n keys (a limit, and a policy
// of two limits per user), n = DefaultReports, twice and four times as
// many, and the live heap grows by B/report (per DefaultReports: the
// reports a Limiter keeps) once they are all decided, and MB in all: it
// must not grow with n past DefaultReports.
func BenchmarkReportsMemory(b *testing.B) {
	p, err := limitspec.NewPolicy("plan",
		limitspec.PolicyLimit{Name: "minute", Limit: fixedWindow(100), Identity: "user"},
		limitspec.PolicyLimit{Name: "burst", Limit: gcra(10), Identity: "user"})
	if err != nil {
		b.Fatal(err)
	}
	reqs := map[string]func(key string) limitspec.Request{
		"limit": func(key string) limitspec.Request { return req(fixedWindow(100), key, 1) },
		"policy": func(key string) limitspec.Request {
			return limitspec.Request{Policy: p, IDs: map[string]string{"user": key}, Cost: 1, Now: t0}
		},
	}
	for _, kind := range []string{"limit", "policy"} {
		for _, n := range []int{DefaultReports, 2 * DefaultReports, 4 * DefaultReports} {
			b.Run(fmt.Sprintf("%s/keys=%d", kind, n), func(b *testing.B) {
				keys := make([]string, n)
				for i := range keys {
					keys[i] = "user-" + strconv.Itoa(i)
				}
				var grew int64
				for b.Loop() {
					l := must(New(newFake(succeed), local(b), Options{Logger: slog.New(slog.DiscardHandler)}))
					before := heapInUse()
					for _, k := range keys {
						if _, err := l.Limit(context.Background(), reqs[kind](k)); err != nil {
							b.Fatal(err)
						}
					}
					grew = heapInUse() - before
					runtime.KeepAlive(l)
				}
				b.ReportMetric(float64(grew)/DefaultReports, "B/report")
				b.ReportMetric(float64(grew)/1e6, "MB")
			})
		}
	}
}

// heapInUse is the heap allocated (live) after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
