package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// The kill test's figures.
const (
	workers  = 8
	deadline = 300 * time.Millisecond // each call's ctx
	// margin is what a call may take past its deadline: scheduling on a
	// loaded machine, under the race detector. A call that waited for a
	// dead server would take seconds (go-redis's default timeouts are 5 s).
	margin   = 200 * time.Millisecond
	downFor  = time.Second
	recovery = 5 * time.Second // Redis must decide again within this after the restart
)

// killLimit is the traffic's limit, far above what it sends: every call
// is admitted, whoever decides.
var killLimit = limitspec.GCRA{Burst: 1_000_000, Rate: 1_000_000, Period: time.Second}

// call is one Limit call of the traffic.
type call struct {
	start, end time.Time
	side       limitspec.Side
	err        error
}

// traffic calls a Limiter from several goroutines until stopped.
type traffic struct {
	lim   *fallback.Limiter
	stop  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	calls []call
	n     atomic.Int64
}

func startTraffic(lim *fallback.Limiter) *traffic {
	tr := &traffic{lim: lim, stop: make(chan struct{})}
	for w := 0; w < workers; w++ {
		tr.wg.Go(func() { tr.run(w) })
	}
	return tr
}

func (tr *traffic) run(w int) {
	var mine []call
	for i := 0; ; i++ {
		select {
		case <-tr.stop:
			tr.mu.Lock()
			tr.calls = append(tr.calls, mine...)
			tr.mu.Unlock()
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		c := call{start: time.Now()}
		res, err := tr.lim.Limit(ctx, limitspec.Request{Key: fmt.Sprintf("user:%d:%d", w, i%4), Limit: killLimit, Cost: 1})
		cancel()
		c.end, c.side, c.err = time.Now(), res.Side, err
		mine = append(mine, c)
		tr.n.Add(1)
		time.Sleep(time.Millisecond)
	}
}

// halt stops the traffic and returns every call made.
func (tr *traffic) halt() []call {
	close(tr.stop)
	tr.wg.Wait()
	return tr.calls
}

// errorLog is a primary that keeps the first errors of the one it wraps,
// to say why a test failed.
type errorLog struct {
	limitspec.Limiter
	mu   sync.Mutex
	errs []string
}

func (e *errorLog) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	start := time.Now()
	res, err := e.Limiter.Limit(ctx, req)
	if err != nil {
		e.mu.Lock()
		if len(e.errs) < 5 {
			e.errs = append(e.errs, fmt.Sprintf("after %v: %v", time.Since(start), err))
		}
		e.mu.Unlock()
	}
	return res, err
}

func (e *errorLog) errors() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.errs...)
}

// waitFor polls cond until it holds or within has passed.
func waitFor(within time.Duration, cond func() bool) bool {
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// newClient is a go-redis client that fails fast: a call to a dead
// server must fail within the fallback's Timeout so that the fallback
// decides within the caller's deadline. ContextTimeoutEnabled makes
// socket reads and writes end at the ctx's deadline (without it go-redis
// waits for ReadTimeout whatever the ctx says, and redislimit.New refuses
// the client); the short dial, read, write and pool timeouts bound a call
// even without a deadline; no retries (MaxRetries -1, DialerRetries 1,
// where go-redis would retry a refused dial 5 times 100 ms apart), since
// a retry against a dead server only spends the caller's deadline: the
// fallback is the retry.
func newClient(addr string) *redis.Client {
	return newClientWithin(addr, 100*time.Millisecond)
}

// newClientWithin is newClient with every timeout d.
func newClientWithin(addr string, d time.Duration) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:                  addr,
		ContextTimeoutEnabled: true,
		DialTimeout:           d,
		ReadTimeout:           d,
		WriteTimeout:          d,
		PoolTimeout:           d,
		MaxRetries:            -1,
		DialerRetries:         1,
	})
}

// TestFaultRedisKilledMidTraffic kills the Redis server under traffic and
// restarts it: no call takes longer than its deadline (plus a margin),
// the fallback decides while Redis is down, the breaker opens, and Redis
// decides again once it is back. Then the same with a server that hangs
// (SIGSTOP) instead: each call that reaches it waits for the fallback's
// Timeout.
func TestFaultRedisKilledMidTraffic(t *testing.T) {
	for _, tc := range []struct {
		name       string
		stop, back func(*redistest.Server)
	}{
		{"killed", (*redistest.Server).Kill, (*redistest.Server).Restart},
		{"paused", (*redistest.Server).Pause, (*redistest.Server).Resume},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.StartServer(t)
			rdb := newClient(srv.Addr())
			defer rdb.Close()
			outage(t, srv, rdb, tc.stop, tc.back)
		})
	}
}

// outage runs traffic through a fallback over a Redis limiter on srv,
// stops srv, starts it again, and checks what the calls got.
func outage(t *testing.T, srv *redistest.Server, rdb *redis.Client, stop, back func(*redistest.Server)) {
	rl, err := redislimit.New(context.Background(), rdb, redislimit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	local, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	var opened atomic.Int64
	primary := &errorLog{Limiter: rl}
	lim, err := fallback.New(primary, local, fallback.Options{Failures: 3, OpenFor: 200 * time.Millisecond,
		OnStateChange: func(from, to fallback.State) {
			if to == fallback.Open {
				opened.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	tr := startTraffic(lim)
	if !waitFor(10*time.Second, func() bool { return lim.Stats().Primary >= 100 }) {
		tr.halt()
		t.Fatalf("no 100 primary decisions before the outage: %+v; primary errors: %v", lim.Stats(), primary.errors())
	}
	stop(srv)
	stopped, before := time.Now(), tr.n.Load()
	time.Sleep(downFor)
	down, starting := lim.Stats(), time.Now()
	back(srv)
	started := time.Now()
	backOK := waitFor(recovery, func() bool { return lim.Stats().Primary > down.Primary })
	time.Sleep(100 * time.Millisecond)
	calls := tr.halt()

	t.Logf("%d calls; stats while down %+v; at the end %+v; primary errors: %v", len(calls), down, lim.Stats(), primary.errors())
	checkCalls(t, calls, stopped, starting, started)
	if tr.n.Load() == before {
		t.Error("no call was made while Redis was down")
	}
	if down.Opens == 0 || opened.Load() == 0 || down.PrimaryErrors < 3 {
		t.Errorf("while down: %+v, %d openings reported; want the breaker opened after 3 primary errors", down, opened.Load())
	}
	if !backOK {
		t.Errorf("Redis did not decide again within %v of its return: %+v", recovery, lim.Stats())
	}
}

// checkCalls checks every call's duration and error, and that the calls
// made while Redis was down were decided by the fallback, and some after
// the restart by Redis.
func checkCalls(t *testing.T, calls []call, killed, restarting, restarted time.Time) {
	t.Helper()
	var slowest time.Duration
	var downCalls, downFallback, backPrimary int
	var firstBack time.Time
	for _, c := range calls {
		took := c.end.Sub(c.start)
		slowest = max(slowest, took)
		if took > deadline+margin {
			t.Errorf("a call took %v (from %v after the kill), past its deadline %v plus %v", took, c.start.Sub(killed), deadline, margin)
		}
		if c.err != nil {
			t.Errorf("a call failed (from %v after the kill): %v", c.start.Sub(killed), c.err)
			continue
		}
		if !c.start.Before(killed) && c.end.Before(restarting) {
			downCalls++
			if c.side == limitspec.Fallback {
				downFallback++
			}
		}
		if c.start.After(restarted) && c.side == limitspec.Primary {
			backPrimary++
			if firstBack.IsZero() || c.end.Before(firstBack) {
				firstBack = c.end
			}
		}
	}
	t.Logf("slowest call %v; %d calls while down, %d by the fallback; %d by Redis after its return, the first %v after it",
		slowest, downCalls, downFallback, backPrimary, firstBack.Sub(restarted))
	if downCalls == 0 || downFallback != downCalls {
		t.Errorf("%d of the %d calls made while Redis was down were decided by the fallback, want all", downFallback, downCalls)
	}
	if backPrimary == 0 {
		t.Error("no call after the restart was decided by Redis")
	}
}

// TestFaultKilledMidCalls kills a Redis that writes every change to its
// append-only file while 64 goroutines decide one key through the
// fallback (a fixed window far above the traffic: every call is
// admitted, whoever decides), restarts it with its data, and waits
// until Redis decides again, after which it has been told every local
// admission it is owed. The calls in flight at the kill, and those
// written to connections the kill had broken, fail with their outcome
// unknown (Stats.PrimarySlow): each was decided locally. Without
// request ids it is never told to Redis, which counted it once if it ran
// it: Redis's count is the admissions less those of them it never ran,
// at most the slow failures fewer, never more (docs/semantics.md, "A
// call whose outcome is unknown"), batched and not. With
// fallback.Options.RequestIDs each is sent again, forced, with its id,
// once Redis answers: Redis's count is the admissions, exactly (before,
// 48 and 55 fewer, of 124 and 77 slow failures).
func TestFaultKilledMidCalls(t *testing.T) {
	for _, tc := range []struct {
		name       string
		noBatching bool
		ids        bool
	}{{"batched", false, false}, {"unbatched", true, false}, {"batched, request ids", false, true}, {"unbatched, request ids", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.StartServer(t, "--appendonly", "yes", "--appendfsync", "always")
			rdb := newClientWithin(srv.Addr(), 50*time.Millisecond)
			defer rdb.Close()
			lim := onClient(t, rdb, redislimit.Options{NoBatching: tc.noBatching}, fallback.Options{Logger: quiet, RequestIDs: tc.ids})
			req := limitspec.Request{Key: "mid", Limit: limitspec.FixedWindow{Limit: 1_000_000_000, Window: time.Hour}, Cost: 1, Now: hourStart()}
			var admitted atomic.Int64
			decide := func() limitspec.Side {
				res, err := lim.Limit(t.Context(), req)
				if err != nil || !res.Allowed {
					t.Errorf("a decision: %+v, %v; want admitted", res, err)
				} else {
					admitted.Add(1)
				}
				return res.Side
			}
			var stop atomic.Bool
			var wg sync.WaitGroup
			for range 64 {
				wg.Go(func() {
					for !stop.Load() {
						decide()
					}
				})
			}
			time.Sleep(300 * time.Millisecond)
			srv.Kill()
			time.Sleep(300 * time.Millisecond)
			srv.Restart()
			stop.Store(true)
			wg.Wait()
			if !waitFor(10*time.Second, func() bool { return decide() == limitspec.Primary && lim.Stats().SettlesOwed == 0 }) {
				t.Fatalf("Redis did not decide again, or was not told what it is owed: %+v", lim.Stats())
			}
			st := lim.Stats()
			counted, slow := used(t, srv.Addr(), req), int64(st.PrimarySlow)
			t.Logf("%d admitted, %d counted by Redis, %d slow failures; %+v", admitted.Load(), counted, slow, st)
			if tc.ids {
				slow = 0 // every one told again, counted once
			}
			if st.Fallback == 0 || counted > admitted.Load() || counted < admitted.Load()-slow {
				t.Errorf("%d admitted (%d locally), %d counted by Redis; want the admissions, less at most the %d slow failures",
					admitted.Load(), st.Fallback, counted, slow)
			}
		})
	}
}

// TestFaultRefusedIsDown: once Redis is gone (killed, and its port
// refusing connections), a call finds its pooled connection dead (go-redis
// checks an idle connection before it uses it) and a new one refused: it
// never reached Redis, so that its error is ErrUnavailable without
// ErrOutcomeUnknown, and behind the fallback it counts as down (not
// slow), its local admission told to Redis once it is back.
func TestFaultRefusedIsDown(t *testing.T) {
	srv := redistest.StartServer(t)
	rdb := newClientWithin(srv.Addr(), 50*time.Millisecond)
	defer rdb.Close()
	rl, err := redislimit.New(t.Context(), rdb, redislimit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lim := onClient(t, rdb, redislimit.Options{}, fallback.Options{Logger: quiet})
	req := limitspec.Request{Key: "refused", Limit: limitspec.FixedWindow{Limit: 100, Window: time.Hour}, Cost: 1, Now: hourStart()}
	for range 3 {
		if res, err := lim.Limit(t.Context(), req); err != nil || res.Side != limitspec.Primary {
			t.Fatalf("before the kill: %+v, %v", res, err)
		}
	}
	srv.Kill()
	if _, err := rl.Limit(t.Context(), req); !errors.Is(err, limitspec.ErrUnavailable) || errors.Is(err, limitspec.ErrOutcomeUnknown) {
		t.Errorf("redislimit, Redis gone: %v; want ErrUnavailable without ErrOutcomeUnknown", err)
	}
	for range 10 {
		if res, err := lim.Limit(t.Context(), req); err != nil || res.Side != limitspec.Fallback || !res.Allowed {
			t.Fatalf("Redis gone: %+v, %v; want admitted locally", res, err)
		}
	}
	if st := lim.Stats(); st.PrimarySlow != 0 || st.PrimaryDown == 0 {
		t.Errorf("Redis gone: %d slow failures, %d down; want none slow", st.PrimarySlow, st.PrimaryDown)
	}
}
