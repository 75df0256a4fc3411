// Package fallback decides with a primary limiter, in production a Redis
// limiter of package redislimit, and, while the primary fails, without
// it: with a local limiter (package goimpl's, which decides every limit
// and policy exactly as the scripts do), by admitting, or by denying. A
// circuit breaker stops calling a primary that keeps failing and probes
// it again later. It knows only the contract, package limitspec.
//
//	remote, _ := redislimit.New(ctx, rdb, redislimit.Options{})
//	local, _ := goimpl.New(goimpl.Options{})
//	lim, err := fallback.New(remote, local, fallback.Options{Processes: 4})
//	...
//	res, err := lim.Limit(ctx, limitspec.Request{Key: user, Limit: plan, Cost: 1})
//	// res.Side says who decided: limitspec.Primary or limitspec.Fallback.
//
// # Deciding
//
// Each Request names its Limit or Policy, as for any limitspec.Limiter;
// the local limiter decides the same one while the primary fails.
//
// While the breaker is closed, Limit calls the primary with a deadline of
// Options.Timeout (50 ms by default), within the caller's ctx, whose own
// deadline still bounds the whole call. The primary must return once its
// ctx is done, as the limitspec.Limiter contract says: a redislimit
// limiter does, its go-redis client having ContextTimeoutEnabled
// (redislimit.New refuses a client without it, with which go-redis would
// wait for its ReadTimeout, 5 s by default, whatever the ctx says).
//
// The default Timeout, 50 ms, is far above what a healthy Redis takes (one
// round trip, and 5 to 130 µs of Redis CPU per decision: docs/performance.md), and
// small enough that a request whose Redis hangs still gets a decision well
// within the deadlines HTTP callers usually set, 50 ms later and only until
// the breaker opens. Set it below the shortest deadline your callers give:
// a call whose ctx ends first returns the ctx's error, not a decision.
//
// # Which errors fall back
//
// Every primary error falls back, except three:
//
//   - an error matching limitspec.ErrBadInput is returned as it is: the
//     request itself is wrong, and the local limiter would refuse it too;
//   - an error matching limitspec.ErrMisconfigured (a Redis holding
//     another version of a Functions library) is returned as it is: a
//     mistake to fix, which deciding locally would hide;
//   - when the caller's ctx is done (canceled, or past its deadline), Limit
//     returns ctx.Err(): the caller has stopped waiting, and the primary is
//     not to blame.
//
// None counts as a primary failure. Every other error (Redis
// unreachable, too slow for Timeout, loading, read-only, a bad state) is
// one: it is counted in Stats.PrimaryErrors and by the breaker, and the
// request is decided as Options.Mode says; but for a holding policy's
// decision or reserve that fails while the breaker is closed, which in
// Local mode is denied (holds.go). In Local mode, an error of the local
// limiter is returned as it is.
//
// # Modes and results
//
// Every Result has Side set: limitspec.Primary when the primary decided,
// else as the mode says:
//
//   - Local (the default): the local limiter decides, Side
//     limitspec.Fallback, its Result and Limits as the local limiter
//     reports them (with the share below).
//   - FailOpen: Allowed is true, Side limitspec.FailOpen, Limits nil,
//     every other field 0.
//   - FailClosed: Allowed is false, RetryAfter is the time until the
//     breaker lets a probe through, at least 1 ms (1 ms while the breaker
//     is closed or half-open: the next call tries the primary), Side
//     limitspec.FailClosed, Limits nil, every other field 0.
//
// # The share of each process
//
// Options.Processes is the number of processes that share the primary's
// limit, each with its own local limiter. While the primary is down, each
// process admits 1/Processes of the limit, exactly, in integers: the local
// limiter is called with every amount times Processes, the Cost and each
// amount of Costs (a policy's amounts by unit), so that a fixed_window
// limit of 10 shared by 3 processes admits 3 requests of cost 1 in each of
// them (9 ≤ 10, 12 > 10), and a limit of tokens its share of tokens. Each
// of the Result's Limits reports its Quota and Remaining, in its own
// unit, divided by Processes, rounded down: the largest amounts the
// process itself can still admit. An amount whose product with Processes
// would pass 2^53−1 is refused with an error matching
// limitspec.ErrBadInput.
//
// # Starting from the primary's word
//
// In Local mode the Limiter remembers, for the last Options.Reports keys
// (DefaultReports), how much of the limit the primary last reported used;
// for a policy, of each of its limits, per value of the identity the
// limit counts (the result's Limits carry each). The first time the local
// limiter decides a key, its state of each of these limits is reset and
// that limit's amount is forced on it (nothing once the report's
// ResetAfter has passed), so that it starts where the primary was, not
// from a full limit; a limit the primary reported nothing of (a user
// never seen, behind a known IP) starts from what the local limiter
// holds: full, if it never decided it either. From then on the
// primary's admissions of the key are forced on the local limiter too
// (with their Costs; not a peek, a request whose every amount is 0), and
// what the local limiter admitted is forced on the primary before the
// primary decides the key again (an outage's admissions count after it):
// each limit (of a policy, per value of the identity it counts) is paid,
// alone, the sum of the amounts it admitted, each in its own unit (the
// amount of its unit in Costs, else the Cost), before the primary's next
// decision of a request that counts it; a limit the primary reported
// nothing of is paid too, its local state kept from then on as the
// primary's admissions are forced on it. Each payment is a request of an id of its
// own: a payment whose reply is lost is sent again with the same id
// before anything else is paid, and a primary that honours ids (packages
// redislimit and goimpl) counts it once when it is sent again within
// REQUEST_MS (60 s) of the first; later, it may be counted twice, which
// only under-admits (docs/semantics.md, "Request ids").
// Each of these steps is ordered against the key's other calls: the
// first local decision starts the state while the key's others wait, a
// primary decision of the key waits while another call tells the primary
// what was admitted without it, and replies that arrive out of order
// (calls that overlapped) keep the larger amount used.
// docs/semantics.md ("Faults") states the bound this gives, with one
// process and with Processes: n, and what a caller sees of each fault.
// For an outage that can only under-admit, put a lease.Limiter (package
// lease) in front of a Limiter in FailClosed mode: every admission is
// then charged on the primary before it is made.
//
// A primary failure is slow when the call may have been applied (no
// reply within Timeout, a reply lost: limitspec.ErrOutcomeUnknown), down
// otherwise; Stats counts both. A request whose call was slow is decided
// locally but not told to the primary afterwards as the local
// admissions of the others are: the primary counted it once if it ran
// it. Unless it carries a request id (its own, or with
// Options.RequestIDs one the Limiter gives every decision): admitted
// locally, it is then kept and sent to the primary again, forced, with
// its id, as the commits of holds are (settle.go), and the primary
// charges it only if it did not charge the first, so that it counts
// exactly once (docs/semantics.md, "A call whose outcome is unknown").
// Options.ModeFor gives a mode per request. Every change of the
// breaker's state is logged by Options.Logger.
//
// # The breaker
//
// The breaker is closed at first: every call goes to the primary. After
// Options.Failures consecutive primary failures (5 by default) it opens:
// no call goes to the primary, each is decided as the mode says. A
// failure counts only if its call started after the last counted
// failure was seen: the calls in flight together when the primary (or
// this host) stalled for a moment are one failure, however many they
// are, so that a burst of concurrent calls caught by one slow moment
// (a cold start dialling its connections, a GC pause) does not hand a
// healthy primary's traffic to the local limiter; a primary that keeps
// failing opens it after Failures rounds of calls, each started after
// the previous round failed: at once when it refuses connections, after
// Failures times the Timeout when it does not answer. After
// Options.OpenFor (1 s by default) it is half-open: one call at a time goes
// to the primary, as a probe, while the others are decided without it. A
// probe that succeeds closes the breaker; one that fails opens it again for
// OpenFor. A probe that ends without a verdict (bad input, a
// misconfiguration, the caller's ctx done) leaves it open, with the next
// call probing at once.
//
// A busy host is not an outage: a call that fails (for want of a reply,
// or of its turn in a batch), which this process saw more than half the
// Timeout after its deadline (its goroutine ran late: CPU starvation, a
// GC pause), failed for the process's lateness, not the primary's
// slowness, and the breaker does not count it (Stats.PrimaryLate), but
// for Failures of them in a row: a primary that does not answer a busy
// host still opens the breaker, after twice the failures. The call
// itself is decided as any failed call is.
//
// # Counters and metrics
//
// Stats reads the counters at any time; they are atomic, and the calls
// that update them take no lock. Package otelmetrics exports them as
// OpenTelemetry metrics; they plug into Prometheus too without this
// package importing either: a prometheus.CounterFunc per side,
//
//	for _, side := range []limitspec.Side{limitspec.Primary, limitspec.Fallback, limitspec.FailOpen, limitspec.FailClosed} {
//		prometheus.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
//			Name:        "ratelimit_decisions_total",
//			Help:        "Rate-limit decisions by the side that made them.",
//			ConstLabels: prometheus.Labels{"side": side.String()},
//		}, func() float64 { return float64(lim.Stats().Decisions(side)) }))
//	}
//
// and likewise CounterFuncs for PrimaryErrors, Errors and Opens and a
// GaugeFunc for State (0 closed, 1 open, 2 half-open); in OpenTelemetry,
// observable counters and an observable gauge whose callbacks read Stats.
// Options.OnStateChange is called on every change of the breaker's state,
// for a log line or an event.
//
// # Check and Reset
//
// Check (limitspec.Checker) asks the primary, and in Local mode the local
// limiter, each that implements limitspec.Checker, whether it can decide
// a limit or a policy at all, so that package httplimit refuses at start-up
// what the primary would refuse at every request (a policy over several
// identities on a Redis Cluster). Reset resets the key in both limiters,
// each that implements limitspec.Resetter, whatever the breaker's state.
package fallback

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/internal/refusal"
)

// Mode says how a request is decided while the primary fails.
type Mode uint8

const (
	// Local: the local limiter decides (Side limitspec.Fallback).
	Local Mode = iota
	// FailOpen: the request is admitted (Side limitspec.FailOpen).
	FailOpen
	// FailClosed: the request is denied (Side limitspec.FailClosed).
	FailClosed
)

// String is the mode's name: local, fail-open or fail-closed.
func (m Mode) String() string { return name(m, "Mode", "local", "fail-open", "fail-closed") }

// The values Options' zero fields stand for.
const (
	// DefaultTimeout is the deadline of each primary call; the package
	// documentation ("Deciding") says why 50 ms.
	DefaultTimeout = 50 * time.Millisecond
	// DefaultFailures is the number of consecutive primary failures that
	// open the breaker.
	DefaultFailures = 5
	// DefaultOpenFor is how long the breaker stays open before a probe.
	DefaultOpenFor = time.Second
)

// MaxProcesses is the largest Options.Processes: a local decision
// charges its cost times Processes, which must stay below 2^53, so that
// a larger count would leave room for no cost worth deciding.
const MaxProcesses = 1 << 16

// maxExact is 2^53−1, the largest cost the limiters take.
const maxExact = 1<<53 - 1

// Options configure a Limiter. The zero value is valid: Local mode, one
// process, the default Timeout, Failures and OpenFor.
type Options struct {
	// Mode says how requests are decided while the primary fails.
	Mode Mode
	// Processes is the number of processes sharing the primary's limit,
	// each deciding 1/Processes of it locally while the primary fails
	// (Local mode only; see the package documentation); 0 means 1, and
	// at most MaxProcesses.
	Processes int
	// Timeout is the deadline of each primary call; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Failures is the number of consecutive primary failures that open
	// the breaker, each of a call started after the previous one failed
	// (see "The breaker"); 0 means DefaultFailures.
	Failures int
	// OpenFor is how long the breaker stays open before it lets a probe
	// through; 0 means DefaultOpenFor.
	OpenFor time.Duration
	// Now is the breaker's clock; nil means time.Now. Tests set it.
	Now func() time.Time
	// ModeFor, if not nil, gives the mode of each request (by its
	// policy's name, say: a login limit that fails closed, a read limit
	// that fails open); Mode is the mode of requests it is not given.
	// It must return a known mode, and Local only when there is a local
	// limiter.
	ModeFor func(req limitspec.Request) Mode
	// Reports is the number of keys whose last primary decision the
	// Limiter remembers, to start the local limiter from it
	// ("Starting from the primary's word"); 0 means DefaultReports.
	Reports int
	// OnStateChange, if not nil, is called on every change of the
	// breaker's state, by the goroutine whose call made it, right after
	// it, holding no lock; it must be quick, as that call waits for it.
	// Changes made at nearly the same time by different goroutines may
	// be reported in another order: read Stats for the current state.
	OnStateChange func(from, to State)
	// RequestIDs gives every decision sent to the primary (of a limit or
	// a plain policy, not a peek) a request id of the Limiter's own when
	// its Request has none (docs/semantics.md, "Request ids"), so that a
	// decision whose outcome is unknown (its reply lost, or late: a
	// Redis killed mid-call) and admitted locally is told to the primary
	// afterwards, exactly: it is sent again, forced, with its id, and the
	// primary charges it only if it never charged the first (see "A call
	// whose outcome is unknown"). It costs what an id costs on the
	// primary (package redislimit: about 1.56 times the Redis CPU of a
	// decision, and a key of about 200 B per decision for two minutes);
	// a request that carries its own ID is paid so without it. On a
	// Redis Cluster, a decision with an id whose slot is migrating is
	// refused until the move ends (its request key is new: TRYAGAIN),
	// so that it fails at Timeout and is decided locally (redislimit's
	// own Options.RequestIDs drops its id instead, and is not exact).
	RequestIDs bool
	// Logger logs every change of the breaker's state, with the mode and
	// the last primary error (Warn when the primary is left, Info when
	// it is back); nil means slog.Default(). To log nothing, give
	// slog.New(slog.DiscardHandler).
	Logger *slog.Logger
}

// DefaultReports is the number of keys whose last primary decision a
// Limiter remembers when Options.Reports is 0: about 22 MB of live heap
// at most, some 220 B a key once more keys than that come and go (185 B
// a key before; go test ./fallback -run X -bench ReportsMemory prints
// both, for limits and for policies).
const DefaultReports = 100_000

// Limiter decides with a primary limiter and, while it fails, as its
// Options say. It implements limitspec.Limiter, limitspec.Resetter and
// limitspec.Checker and is safe for concurrent use. Make one with New.
type Limiter struct {
	primary, local limitspec.Limiter
	mode           Mode
	modeFor        func(limitspec.Request) Mode
	processes      int64
	maxCost        int64 // the largest cost whose product with processes is exact
	timeout        time.Duration
	now            func() time.Time
	br             breaker
	c              counters
	reports        *reports
	log            *slog.Logger
	lastErr        atomic.Pointer[error] // the primary's last failure, for the log
	onChange       func(from, to State)
	payments       *limiters.IDs // the request ids of payments
	seeds          *limiters.IDs // the ids of the local holds started from the primary's word
	decisionIDs    *limiters.IDs // with Options.RequestIDs, the ids of decisions; nil without
	owed           owedSettles   // commits and releases owed to the primary (settle.go)
	lateRun        atomic.Int64  // the late failures in a row (late)
}

// paymentID is the request id of a new payment.
func (l *Limiter) paymentID() string { return l.payments.Next() }

// New returns a Limiter deciding with primary, and with local while the
// primary fails (local may be nil in the FailOpen and FailClosed modes,
// which never call it). It refuses a nil limiter it needs (a nil
// interface, or one holding a nil pointer), an unknown mode, a negative
// option and Processes above MaxProcesses with an error reading
// "fallback: misconfigured: ..." that names the field, matching
// limitspec.ErrMisconfigured. The Limiter starts no goroutine and has
// nothing to close; primary and local stay the caller's, to close when
// done (goimpl.Limiter.Close stops its sweepers).
func New(primary, local limitspec.Limiter, opts Options) (*Limiter, error) {
	if err := check(primary, local, opts); err != nil {
		return nil, err
	}
	if limiters.IsNil(local) {
		local = nil // a typed nil that FailOpen or FailClosed never calls, nor Reset
	}
	l := &Limiter{primary: primary, local: local, mode: opts.Mode, modeFor: opts.ModeFor,
		payments: limiters.NewIDs("fallback-payment"), seeds: limiters.NewIDs("fallback-seed"),
		processes: int64(max(opts.Processes, 1)), timeout: opts.Timeout, now: opts.Now,
		reports: newReports(cmp.Or(opts.Reports, DefaultReports)), log: cmp.Or(opts.Logger, slog.Default()),
		onChange: opts.OnStateChange}
	l.maxCost = maxExact / l.processes
	if opts.RequestIDs {
		l.decisionIDs = limiters.NewIDs("fallback-request")
	}
	if l.timeout == 0 {
		l.timeout = DefaultTimeout
	}
	if l.now == nil {
		l.now = time.Now
	}
	l.br = breaker{threshold: DefaultFailures, openFor: DefaultOpenFor, base: l.now(), onChange: l.changed}
	l.br.counted.Store(int64(-maxAt))
	if opts.Failures != 0 {
		l.br.threshold = int64(opts.Failures)
	}
	if opts.OpenFor != 0 {
		l.br.openFor = opts.OpenFor
	}
	return l, nil
}

// check refuses what New cannot work with.
func check(primary, local limitspec.Limiter, opts Options) error {
	switch {
	case limiters.IsNil(primary):
		return misconfigured("the primary limiter is nil")
	case opts.Mode > FailClosed:
		return misconfigured("Options.Mode: unknown mode %d", opts.Mode)
	case opts.Mode == Local && limiters.IsNil(local):
		return misconfigured("the local limiter is nil in Local mode (Options.Mode)")
	case opts.Processes < 0 || opts.Processes > MaxProcesses:
		return misconfigured("Options.Processes must be in [0, %d], got %d", MaxProcesses, opts.Processes)
	case opts.Timeout < 0:
		return misconfigured("Options.Timeout must be ≥ 0, got %v", opts.Timeout)
	case opts.Failures < 0:
		return misconfigured("Options.Failures must be ≥ 0, got %d", opts.Failures)
	case opts.OpenFor < 0:
		return misconfigured("Options.OpenFor must be ≥ 0, got %v", opts.OpenFor)
	case opts.Reports < 0:
		return misconfigured("Options.Reports must be ≥ 0, got %d", opts.Reports)
	}
	return nil
}

func badInput(format string, args ...any) error {
	return &limitspec.InputError{Msg: fmt.Sprintf(format, args...)}
}

// misconfigured is New's refusal of what it cannot work with, as every
// constructor's refusal: "fallback: misconfigured: ...", matching
// limitspec.ErrMisconfigured.
func misconfigured(format string, args ...any) error {
	return refusal.Config("fallback", format, args...)
}

// Limit decides req: with the primary while it answers, else as the
// mode says (see the package documentation). Its errors are the
// primary's bad-input and misconfiguration errors, the caller's ctx's
// error and, in Local mode, the local limiter's errors.
func (l *Limiter) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	if err := limiters.Defaults(&req, true); err != nil {
		return limitspec.Result{}, err
	}
	if req.Policy != nil && req.Policy.Holds() {
		return l.holding(ctx, req, nil) // holds.go
	}
	if err := ctx.Err(); err != nil {
		return l.fail(err)
	}
	made := l.decisionIDs != nil && req.ID == "" && !req.Peek
	if made {
		req.ID = l.decisionIDs.Next()
	}
	fault := downed
	if call, probe := l.br.acquire(l.now()); call {
		var res limitspec.Result
		var err error
		if res, fault, err = l.tryPrimary(ctx, req, probe); fault == answered {
			l.settleOwed(ctx)
			return res, err
		}
	}
	local := req
	if made {
		local.ID = "" // the local limiter has no reply to lose
	}
	res, err := l.without(ctx, local, fault != ranMaybe)
	if fault == ranMaybe && req.ID != "" && err == nil && res.Side == limitspec.Fallback && (res.Allowed || req.Force) {
		l.owed.owe(settle{req: req, decision: true})
	}
	return res, err
}

// primaryFault says what became of a request sent to the primary.
type primaryFault int

const (
	answered primaryFault = iota // the primary answered, or refused it
	downed                       // it failed, and did not decide the request
	ranMaybe                     // it failed, and may have decided the request (a reply lost or late)
)

// tryPrimary calls the primary: when it answers (answered), res and err
// are the caller's; else the request is to be decided without it.
func (l *Limiter) tryPrimary(ctx context.Context, req limitspec.Request, probe bool) (limitspec.Result, primaryFault, error) {
	call := l.reports.send()
	res, fault, err := l.callPrimary(ctx, probe, func(pctx context.Context) (limitspec.Result, bool, error) {
		if err := l.pay(pctx, req); err != nil {
			return limitspec.Result{}, false, err
		}
		res, err := l.primary.Limit(pctx, req)
		return res, true, err
	})
	if fault == answered && err == nil {
		l.heard(ctx, req, res, call)
	}
	return res, fault, err
}

// callPrimary runs call, a call of the primary (sent: it reached the
// primary, or may have), with the deadline Timeout, and tells the
// breaker how it went. When the primary answers or refuses the request
// (answered), res and err are the caller's; else err is the primary's
// failure, counted as slow or down, and the request is to be decided
// without it.
func (l *Limiter) callPrimary(ctx context.Context, probe bool, call func(context.Context) (res limitspec.Result, sent bool, err error)) (limitspec.Result, primaryFault, error) {
	start := l.now()
	pctx, cancel := context.WithTimeout(ctx, l.timeout)
	res, sent, err := call(pctx)
	cancel()
	switch {
	case err == nil:
		l.lateRun.Store(0)
		l.br.succeed(probe)
		return l.decided(res, limitspec.Primary), answered, nil
	case !limiters.Outage(err):
		l.br.release(probe)
		res, err = l.fail(err)
		return res, answered, err
	case ctx.Err() != nil:
		l.br.release(probe)
		res, err = l.fail(ctx.Err())
		return res, answered, err
	}
	fault := downed
	if slow(err) {
		l.c.primarySlow.Add(1)
		if sent {
			fault = ranMaybe
		}
	} else {
		l.c.primaryDown.Add(1)
	}
	if l.late(start) {
		l.c.primaryLate.Add(1)
		l.br.release(probe)
		return limitspec.Result{}, fault, err
	}
	l.lastErr.Store(&err)
	l.br.failed(probe, start, l.now())
	return limitspec.Result{}, fault, err
}

// late reports whether a primary call started at start, which failed,
// failed because this process ran late, not the primary: its goroutine
// saw the failure more than half the Timeout after the call's deadline
// (a busy host, a GC pause, a starved client: a call that waited for a
// batch, or for its reply, past its deadline), which neither a slow
// primary nor a refused connection makes. Such a failure is not counted by
// the breaker, but for Failures of them in a row (a primary that does
// not answer a busy host still opens it, after twice the failures).
func (l *Limiter) late(start time.Time) bool {
	overdue := l.now().Sub(start) - l.timeout
	if overdue <= l.timeout/2 {
		l.lateRun.Store(0)
		return false
	}
	return l.lateRun.Add(1) <= l.br.threshold
}

// pay tells the primary what the local limiter admitted of each part of
// req (its limit, or each limit of its policy for the value of its
// identity) while the primary failed, before the primary decides req
// again: the admissions of an outage count after it. It takes no lock
// while nothing is owed.
func (l *Limiter) pay(ctx context.Context, req limitspec.Request) error {
	if !l.reports.owes() {
		return nil
	}
	for _, part := range l.reports.partsOf(req) {
		if err := l.payPart(ctx, part); err != nil {
			return err
		}
	}
	return nil
}

// payPart tells the primary what part owes, a forced call of that amount
// in the part's own unit (its limit's), under a request id of its own;
// while another call tells it, payPart waits for that call to end.
func (l *Limiter) payPart(ctx context.Context, part limitspec.Request) error {
	for {
		pay, paying, wait := l.reports.debt(part, l.paymentID)
		if wait != nil {
			if err := await(ctx, wait); err != nil {
				return err
			}
			continue
		}
		if pay.amount == 0 {
			return nil
		}
		payReq := part
		payReq.Cost, payReq.Costs, payReq.Force, payReq.ID = pay.amount, nil, true, pay.id
		_, err := l.primary.Limit(ctx, payReq)
		l.reports.paid(part, pay, paying, err == nil)
		if err != nil {
			return err
		}
	}
}

// slow reports whether the primary's failure err may have been applied:
// the call reached the primary (or may have) and no reply came in time
// (limitspec.ErrOutcomeUnknown; or a deadline the primary did not
// classify). Any other failure is the primary's refusal or a connection
// never made: the primary is down.
func slow(err error) bool {
	return errors.Is(err, limitspec.ErrOutcomeUnknown) ||
		!errors.Is(err, limitspec.ErrUnavailable) && errors.Is(err, context.DeadlineExceeded)
}

// heard keeps the primary's decision res of req, to start the local
// limiter from it; when the local limiter was started from an earlier
// one, what the primary charged (an admission, or a forced request, not
// a peek) is forced on it too, req as it is (its Cost and Costs), so
// that it counts whatever the primary admitted since.
func (l *Limiter) heard(ctx context.Context, req limitspec.Request, res limitspec.Result, call uint64) {
	if l.modeOf(req) != Local || l.local == nil {
		return
	}
	seeded := l.reports.record(req, res, l.now(), call)
	if len(seeded) == 0 || !(res.Allowed || req.Force) || limiters.IsPeek(req) {
		return
	}
	for _, ch := range seeded {
		if await(ctx, ch) != nil {
			return
		}
	}
	req.Force = true
	l.local.Limit(ctx, req) // an error here only leaves the local state behind
}

// modeOf is req's mode: ModeFor's, or Mode.
func (l *Limiter) modeOf(req limitspec.Request) Mode {
	if l.modeFor == nil {
		return l.mode
	}
	return l.modeFor(req)
}

// failClosed is a denial of the fallback failing closed: RetryAfter is
// the time until the breaker lets a call reach the primary, at least
// 1 ms (1 ms while it is closed or half-open: the next call tries it).
func (l *Limiter) failClosed() limitspec.Result {
	return l.decided(limitspec.Result{RetryAfter: l.br.retryAfter(l.now())}, limitspec.FailClosed)
}

// without decides req without the primary, as the mode says; the local
// limiter decides it scaled (each amount times Processes). What it
// admits, req's own amounts on each of its limits, is owed to the
// primary (told it before its next decision of a request of that limit
// and key) when owe is set: not for a request the primary may have
// decided already, which it counted once if it did.
func (l *Limiter) without(ctx context.Context, req limitspec.Request, owe bool) (limitspec.Result, error) {
	var res limitspec.Result
	switch mode := l.modeOf(req); {
	case mode == FailOpen:
		res.Allowed = true
		return l.decided(res, limitspec.FailOpen), nil
	case mode == FailClosed:
		return l.failClosed(), nil
	case mode != Local || limiters.IsNil(l.local):
		return l.fail(fmt.Errorf("fallback: %w: ModeFor gave mode %v, which this Limiter cannot decide by (no local limiter, or no such mode)",
			limitspec.ErrMisconfigured, mode))
	}
	scaled, err := l.scaled(req)
	if err != nil {
		return l.fail(err)
	}
	if err = l.start(ctx, req); err != nil {
		return l.fail(err)
	}
	res, err = l.local.Limit(ctx, scaled)
	if err != nil {
		return l.fail(err)
	}
	if owe && (res.Allowed || req.Force) {
		l.reports.owe(req)
	}
	if l.processes > 1 {
		share(&res, l.processes)
	}
	return l.decided(res, limitspec.Fallback), nil
}

// start starts the local limiter's state of each part of req (its
// limit, or each limit of its policy) from the primary's last report of
// it, once, or waits until another call has.
func (l *Limiter) start(ctx context.Context, req limitspec.Request) error {
	// Its own parts first, then the others': a call never waits while
	// it holds a part another call may wait for.
	starts := l.reports.take(req, l.now())
	var err error
	for _, st := range starts {
		if st.seeding != nil {
			if e := l.startPart(ctx, st); err == nil {
				err = e
			}
		}
	}
	for _, st := range starts {
		if st.wait != nil && err == nil {
			err = l.startPart(ctx, st)
		}
	}
	return err
}

// startPart starts one part of a request's local state as st says, or
// waits until another call has.
func (l *Limiter) startPart(ctx context.Context, st start) error {
	switch {
	case st.seeding != nil && inFlight(st.part):
		defer close(st.seeding)
		id, err := seedHold(ctx, l.local, st, l.seeds.Next(), l.now())
		l.reports.with(st.part, false, func(rep *report) {
			if rep != nil {
				rep.seedHold = id
			}
		})
		return err
	case st.seeding != nil:
		defer close(st.seeding)
		return seed(ctx, l.local, st.part, st.amount)
	}
	if st.wait != nil {
		return await(ctx, st.wait)
	}
	return nil
}

// inFlight reports whether part, a policy's part, is of a limit in
// flight (limitspec.InFlight), whose state is the holds.
func inFlight(part limitspec.Request) bool {
	if part.Policy == nil {
		return false
	}
	limits := part.Policy.Limits()
	return len(limits) == 1 && limitspec.InFlight(limits[0].Limit)
}

// await waits until ch is closed, or returns ctx's error if it is done
// first.
func await(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// scaled is req as the local limiter decides it, for one of Processes
// processes: each amount above 0, its Cost and each of its Costs (in a
// new map: the caller's is not written), times Processes. An amount
// whose product would pass 2^53−1 is refused with an error matching
// limitspec.ErrBadInput (of Costs, the first such unit in order); the
// local limiter refuses amounts below 0.
func (l *Limiter) scaled(req limitspec.Request) (limitspec.Request, error) {
	if req.Cost > l.maxCost {
		return req, badInput("fallback: cost %d times %d processes passes 2^53-1", req.Cost, l.processes)
	}
	unit, over := "", false
	for u, c := range req.Costs {
		if c > l.maxCost && (!over || u < unit) {
			unit, over = u, true
		}
	}
	if over {
		return req, badInput("fallback: cost %d of %s times %d processes passes 2^53-1", req.Costs[unit], unit, l.processes)
	}
	if l.processes == 1 {
		return req, nil
	}
	if req.Cost > 0 {
		req.Cost *= l.processes
	}
	if len(req.Costs) > 0 {
		costs := make(map[string]int64, len(req.Costs))
		for u, c := range req.Costs {
			costs[u] = c
			if c > 0 {
				costs[u] = c * l.processes
			}
		}
		req.Costs = costs
	}
	return req, nil
}

// share reports res as one of n processes' share of it: each limit's
// Quota and Remaining (never negative), in the limit's own unit, divided
// by n, rounded down.
func share(res *limitspec.Result, n int64) {
	for i := range res.Limits {
		q := &res.Limits[i]
		q.Quota, q.Remaining = q.Quota/n, q.Remaining/n
	}
}

// decided counts res as decided by side and returns it with Side set.
func (l *Limiter) decided(res limitspec.Result, side limitspec.Side) limitspec.Result {
	res.Side = side
	l.c.decisions[side].Add(1)
	return res
}

// fail counts a call that returns err.
func (l *Limiter) fail(err error) (limitspec.Result, error) {
	l.c.errors.Add(1)
	return limitspec.Result{}, err
}

// Reset deletes req's state in both limiters, each that implements
// limitspec.Resetter, whatever the breaker's state; the primary's reset
// has the deadline Timeout. The error joins both limiters' errors; it
// matches limitspec.ErrBadInput when neither can reset.
func (l *Limiter) Reset(ctx context.Context, req limitspec.Request) error {
	var errs []error
	found := false
	if r, ok := l.primary.(limitspec.Resetter); ok {
		found = true
		pctx, cancel := context.WithTimeout(ctx, l.timeout)
		errs = append(errs, r.Reset(pctx, req))
		cancel()
	}
	if r, ok := l.local.(limitspec.Resetter); ok {
		found = true
		errs = append(errs, r.Reset(ctx, req))
	}
	if !found {
		return badInput("fallback: neither limiter has a reset")
	}
	return errors.Join(errs...)
}

// Check reports whether the limiter can decide req's limit or policy
// (see limitspec.Checker): the primary's verdict, then in Local mode the
// local limiter's, each of them that implements limitspec.Checker; when
// neither is asked, a Limit's own Validate. The error says which limiter
// refused, and matches what its Check returned.
func (l *Limiter) Check(req limitspec.Request) error {
	asked := false
	for _, c := range []struct {
		name string
		lim  limitspec.Limiter
		used bool
	}{{"the primary limiter", l.primary, true}, {"the local limiter", l.local, l.mode == Local}} {
		ch, ok := c.lim.(limitspec.Checker)
		if !ok || !c.used {
			continue
		}
		asked = true
		if err := ch.Check(req); err != nil {
			return fmt.Errorf("fallback: %s refuses it: %w", c.name, err)
		}
	}
	if !asked && !limiters.IsNil(req.Limit) {
		return req.Limit.Validate()
	}
	return nil
}

// counters are the Limiter's counts, read by Stats.
type counters struct {
	decisions   [4]atomic.Uint64 // by limitspec.Side
	primarySlow atomic.Uint64
	primaryDown atomic.Uint64
	primaryLate atomic.Uint64
	errors      atomic.Uint64
}

// changed logs a change of the breaker's state, then tells OnStateChange.
func (l *Limiter) changed(from, to State) {
	var last error
	if p := l.lastErr.Load(); p != nil {
		last = *p
	}
	switch {
	case to == Open && from == HalfOpen:
		l.log.Debug("rate limiter: the probe did not close the breaker", "breaker", to.String(), "error", last)
	case to == Open:
		l.log.Warn("rate limiter: primary failing, deciding without it", "breaker", to.String(), "from", from.String(),
			"mode", l.mode.String(), "error", last, "slow", last != nil && slow(last))
	case to == Closed:
		l.log.Info("rate limiter: primary answers again", "breaker", to.String())
	default:
		l.log.Debug("rate limiter: probing the primary", "breaker", to.String())
	}
	if l.onChange != nil {
		l.onChange(from, to)
	}
}
