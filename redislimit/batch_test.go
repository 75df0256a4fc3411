package redislimit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// holder is a go-redis hook that holds back, before it is sent, a script
// call of a key it was told to hold (alone, or the whole pipeline that
// holds it), until that key is released: a call in flight for as long
// as a test wants, as if its server or connection did not answer.
type holder struct {
	mu    sync.Mutex
	gates map[string]*gate
}

// A gate holds the calls of its keys: entered gets a token for each call
// or pipeline it holds, and closing release lets them go.
type gate struct {
	entered, release chan struct{}
}

func newHolder() *holder { return &holder{gates: map[string]*gate{}} }

// hold holds the calls of keys from now on, until the gate's release is
// closed (they then pass for good).
func (h *holder) hold(keys ...string) *gate {
	h.mu.Lock()
	defer h.mu.Unlock()
	g := &gate{entered: make(chan struct{}, 100), release: make(chan struct{})}
	for _, key := range keys {
		h.gates["{"+key+"}"] = g
	}
	return g
}

// wait holds the caller while one of cmds is a script call of a held key.
func (h *holder) wait(cmds ...redis.Cmder) {
	for _, cmd := range cmds {
		args := cmd.Args()
		if len(args) < 4 {
			continue
		}
		key := fmt.Sprint(args[3])
		h.mu.Lock()
		g := h.gates[key[:strings.IndexByte(key, '}')+1]]
		h.mu.Unlock()
		if g != nil {
			g.entered <- struct{}{}
			<-g.release
			return
		}
	}
}

func (h *holder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *holder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.wait(cmd)
		return next(ctx, cmd)
	}
}

func (h *holder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.wait(cmds...)
		return next(ctx, cmds)
	}
}

// entered waits until g holds n calls or pipelines, failing the test
// after 10 s.
func entered(t *testing.T, g *gate, n int, what string) {
	t.Helper()
	for range n {
		select {
		case <-g.entered:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not sent within 10 s", what)
		}
	}
}

// eventually waits until cond holds, failing the test after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
	}
}

// outcome is a call's result and error, from a goroutine.
type outcome struct {
	res limitspec.Result
	err error
}

// goAllow decides a request of cost 1 of key by burst in a goroutine and
// returns the channel of its outcome.
func goAllow(ctx context.Context, lim decider, key string) <-chan outcome {
	return goDecide(ctx, lim, key, burst)
}

// goDecide decides a request of cost 1 of key by limit in a goroutine
// and returns the channel of its outcome.
func goDecide(ctx context.Context, lim decider, key string, limit limitspec.Limit) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		res, err := lim.Limit(ctx, limitspec.Request{Key: key, Limit: limit, Cost: 1})
		ch <- outcome{res, err}
	}()
	return ch
}

// receive is the outcome on ch, failing the test after 10 s.
func receive(t *testing.T, ch <-chan outcome, what string) outcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return within 10 s", what)
		return outcome{}
	}
}

// admitted fails unless o is the first admission of a fresh key, by
// burst or another limit of 5 at once.
func admitted(t *testing.T, o outcome, what string) {
	t.Helper()
	if o.err != nil || !o.res.Allowed || o.res.Limits[0].Remaining != 4 {
		t.Errorf("%s: %+v, %v; want admitted, 4 remaining (decided once)", what, o.res, o.err)
	}
}

// warm decides a request of the key "warm", so that the server holds
// the script (a call answered NOSCRIPT ran nothing).
func warm(t *testing.T, lim *redislimit.Limiter) {
	t.Helper()
	if _, err := lim.Allow(t.Context(), "warm", burst); err != nil {
		t.Fatal(err)
	}
}

// TestFaultBatchDeadline holds two lone calls in flight (their server
// does not answer), so that the calls after them queue for the next
// batch, with a wait of an hour (no other batch takes them). A call
// whose deadline passes while it is queued returns at once with
// ErrUnavailable and the deadline's error, not ErrOutcomeUnknown, and is
// never sent; a call canceled while its batch is in flight (held in
// turn) returns at once with ErrOutcomeUnknown, and was applied once;
// the others are decided once each, and the limiter ends holding no
// lane. It runs through Limiter.Limit and through a bound handle.
func TestFaultBatchDeadline(t *testing.T) {
	t.Parallel()
	for _, way := range ways {
		t.Run(way.name, func(t *testing.T) {
			t.Parallel()
			batchDeadline(t, way.via)
		})
	}
}

// batchDeadline is TestFaultBatchDeadline, deciding by via's decider.
func batchDeadline(t *testing.T, via func(*redislimit.Limiter) decider) {
	_, rdb := newClient(t)
	h := newHolder()
	rdb.AddHook(h)
	lim := newLimiter(t, rdb, redislimit.Options{BatchSize: 64, BatchWait: time.Hour})
	d := via(lim)
	warm(t, lim)
	lone := h.hold("first", "second")
	firstDone, secondDone := goAllow(t.Context(), d, "first"), goAllow(t.Context(), d, "second")
	entered(t, lone, 2, "the two lone calls")

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err := d.Limit(ctx, limitspec.Request{Key: "never", Limit: burst, Cost: 1})
	if !errors.Is(err, limitspec.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, limitspec.ErrOutcomeUnknown) {
		t.Errorf("a call whose deadline passed in the queue: %v; want ErrUnavailable and context.DeadlineExceeded, not ErrOutcomeUnknown", err)
	}

	late := h.hold("late")
	lateCtx, lateCancel := context.WithCancel(t.Context())
	lateDone := goAllow(lateCtx, d, "late")
	otherDone := goAllow(t.Context(), d, "other")
	eventually(t, "two calls queued", func() bool { return redislimit.Queued(lim) == 2 })
	close(lone.release)
	entered(t, late, 1, "the batch of late and other")
	lateCancel()
	got := receive(t, lateDone, "the call canceled while its batch was in flight")
	if !errors.Is(got.err, limitspec.ErrUnavailable) || !errors.Is(got.err, limitspec.ErrOutcomeUnknown) || !errors.Is(got.err, context.Canceled) {
		t.Errorf("a call canceled while its batch was in flight: %v; want ErrUnavailable, ErrOutcomeUnknown and context.Canceled", got.err)
	}
	close(late.release)
	for what, ch := range map[string]<-chan outcome{"first": firstDone, "second": secondDone, "other": otherDone} {
		admitted(t, receive(t, ch, what), what)
	}
	eventually(t, "no lane left", func() bool { return redislimit.Lanes(lim) == 0 })
	if ks := strings.Join(keys(t, rdb), " "); ks != "{first}:gc:10:1000 {late}:gc:10:1000 {other}:gc:10:1000 {second}:gc:10:1000 {warm}:gc:10:1000" {
		t.Errorf("Redis holds %s; want the keys of first, late (sent, its reply unseen), other, second and warm, never the one whose deadline passed in the queue", ks)
	}
	peek, err := lim.Limit(t.Context(), limitspec.Request{Key: "late", Limit: burst, Peek: true})
	if err != nil || peek.Limits[0].Remaining != 4 {
		t.Errorf("late's state: %+v, %v; want 4 remaining (applied once)", peek, err)
	}
}

// TestFaultBatchStall holds every call in flight, as a connection that
// lost its packets would. Two lone calls are sent at once; a call queued
// behind two batches that do not come back is sent by another batch
// once it has waited for the wait (a millisecond here), one more batch
// each time, up to four in flight; a call queued then waits, and, its
// deadline passed, returns ErrUnavailable without ErrOutcomeUnknown,
// never sent. Released, the four are decided once each, and the limiter
// ends holding no lane. It runs through Limiter.Limit and through a
// bound handle.
func TestFaultBatchStall(t *testing.T) {
	t.Parallel()
	for _, way := range ways {
		t.Run(way.name, func(t *testing.T) {
			t.Parallel()
			batchStall(t, way.via)
		})
	}
}

// batchStall is TestFaultBatchStall, deciding by via's decider.
func batchStall(t *testing.T, via func(*redislimit.Limiter) decider) {
	_, rdb := newClient(t)
	h := newHolder()
	rdb.AddHook(h)
	lim := newLimiter(t, rdb, redislimit.Options{BatchSize: 64, BatchWait: time.Millisecond})
	d := via(lim)
	warm(t, lim)
	var gates []*gate
	var done []<-chan outcome
	for _, key := range []string{"a", "b", "c", "d"} {
		g := h.hold(key)
		gates, done = append(gates, g), append(done, goAllow(t.Context(), d, key))
		entered(t, g, 1, "the call of "+key+", after the calls held before it")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := d.Limit(ctx, limitspec.Request{Key: "e", Limit: burst, Cost: 1})
	if !errors.Is(err, limitspec.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, limitspec.ErrOutcomeUnknown) {
		t.Errorf("a call queued behind four batches held: %v; want ErrUnavailable and context.DeadlineExceeded, not ErrOutcomeUnknown", err)
	}
	for i, g := range gates {
		close(g.release)
		admitted(t, receive(t, done[i], "a held call"), "a held call")
	}
	eventually(t, "no lane left", func() bool { return redislimit.Lanes(lim) == 0 })
	if ks := strings.Join(keys(t, rdb), " "); ks != "{a}:gc:10:1000 {b}:gc:10:1000 {c}:gc:10:1000 {d}:gc:10:1000 {warm}:gc:10:1000" {
		t.Errorf("Redis holds %s; want the keys of a, b, c, d and warm, never e's", ks)
	}
}

// TestBatchLostScripts empties the server's scripts (SCRIPT FLUSH) or
// libraries (FUNCTION FLUSH) while ten GCRA calls are queued behind two
// held calls, of a fixed and a sliding window (whose EVALs do not bring
// GCRA's script back): the batch that takes the ten is answered NOSCRIPT
// (or "function not found", unless a held call loaded the library again
// first) call by call, and each call is sent again by EVAL (or after the
// library is loaded again) and decided once: all twelve admitted, 4
// remaining of 5, and by EVALSHA twelve NOSCRIPT replies, one per call.
// It runs through Limiter.Limit and through bound handles.
func TestBatchLostScripts(t *testing.T) {
	t.Parallel()
	for _, way := range ways {
		t.Run(way.name, func(t *testing.T) {
			t.Parallel()
			batchLostScripts(t, way.via)
		})
	}
}

// batchLostScripts is TestBatchLostScripts, deciding by via's decider.
func batchLostScripts(t *testing.T, via func(*redislimit.Limiter) decider) {
	for _, tc := range []struct {
		name  string
		opts  redislimit.Options
		flush func(context.Context, *redis.Client) error
		// noscript: the NOSCRIPT replies to count, -1 not to.
		noscript int
	}{
		{"evalsha", redislimit.Options{}, func(ctx context.Context, c *redis.Client) error { return c.ScriptFlush(ctx).Err() }, 12},
		{"functions", redislimit.Options{Functions: true}, func(ctx context.Context, c *redis.Client) error { return c.FunctionFlush(ctx).Err() }, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, rdb := newClient(t)
			h := newHolder()
			rdb.AddHook(h)
			opts := tc.opts
			opts.BatchSize, opts.BatchWait = 64, time.Hour
			lim := newLimiter(t, rdb, opts)
			d := via(lim)
			warm(t, lim)
			lone := h.hold("first", "second")
			done := []<-chan outcome{goDecide(t.Context(), d, "first", limitspec.FixedWindow{Limit: 5, Window: time.Hour}),
				goDecide(t.Context(), d, "second", limitspec.SlidingWindow{Limit: 5, Window: time.Hour})}
			entered(t, lone, 2, "the two lone calls")
			for i := range 10 {
				done = append(done, goAllow(t.Context(), d, fmt.Sprintf("user%d", i)))
			}
			eventually(t, "ten calls queued", func() bool { return redislimit.Queued(lim) == 10 })
			if err := tc.flush(t.Context(), rdb); err != nil {
				t.Fatal(err)
			}
			before := errorCount(t, rdb, "NOSCRIPT")
			close(lone.release)
			for i, ch := range done {
				admitted(t, receive(t, ch, fmt.Sprintf("call %d", i)), fmt.Sprintf("call %d", i))
			}
			if n := errorCount(t, rdb, "NOSCRIPT") - before; tc.noscript >= 0 && n != tc.noscript {
				t.Errorf("%d NOSCRIPT replies; want %d, one per call", n, tc.noscript)
			}
		})
	}
}

// TestBatchLanesReused runs rounds of 16 goroutines deciding 20 keys
// each, with a wait of 50 µs, so that late batches are sent by the
// lane's timer while calls land, and the lane is forgotten after each
// round and made again (from the one kept) at the next, by
// Limiter.Limit and through a bound handle: every call is decided once
// (each key, of a fixed window of 2, admitted and counted once), and no
// lane is left after a round.
func TestBatchLanesReused(t *testing.T) {
	t.Parallel()
	for _, way := range ways {
		t.Run(way.name, func(t *testing.T) {
			t.Parallel()
			_, rdb := newClient(t)
			lim := newLimiter(t, rdb, redislimit.Options{BatchSize: 8, BatchWait: 50 * time.Microsecond})
			d := way.via(lim)
			limit := limitspec.FixedWindow{Limit: 2, Window: time.Hour}
			for round := range 5 {
				req := func(i int) limitspec.Request {
					return limitspec.Request{Key: fmt.Sprintf("r%d-%d", round, i), Limit: limit, Cost: 1, Now: t0Time}
				}
				if lost := decideAll(t, d, req, 16, 20); count(lost) != 0 {
					t.Fatalf("round %d: %d calls lost", round, count(lost))
				}
				eventually(t, "no lane left", func() bool { return redislimit.Lanes(lim) == 0 })
				for i := range 16 * 20 {
					peek := req(i)
					peek.Cost, peek.Peek = 0, true
					res, err := lim.Limit(t.Context(), peek)
					if err != nil || res.Limits[0].Remaining != 1 {
						t.Fatalf("round %d, key %d: %+v, %v; want 1 remaining (counted once)", round, i, res, err)
					}
				}
			}
		})
	}
}
