package redislimit_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/faultproxy"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// TestFaultLostReplyRetriedByID is TestFaultLostReply with a request id on
// every decision (docs/semantics.md, "Request ids"): the proxy cuts the
// connection after Redis ran every tenth call, and the limiter sends a
// call whose reply was lost again with the same id. 150 decisions of a
// fixed window of 100 at one instant, by EVALSHA and by FCALL, through
// Limiter.Limit and a bound handle: none fails, exactly 100 are admitted
// and 50 denied, Redis counts exactly 100, and it received one call more
// for each cut.
func TestFaultLostReplyRetriedByID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, verb string
		opts       redislimit.Options
	}{
		{"evalsha", "evalsha", redislimit.Options{}},
		{"functions", "fcall", redislimit.Options{Functions: true}},
	} {
		for _, way := range ways {
			t.Run(tc.name+"/"+way.name, func(t *testing.T) {
				t.Parallel()
				srv := redistest.StartServer(t)
				proxy := faultproxy.Start(t, srv.Addr())
				rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
				t.Cleanup(func() { rdb.Close() })
				lim := newLimiter(t, rdb, tc.opts)
				d := way.via(lim)
				var n, cut atomic.Int64
				proxy.CutAfterReply(func(name string, _ []string) bool {
					if strings.EqualFold(name, tc.verb) && n.Add(1)%10 == 0 {
						cut.Add(1)
						return true
					}
					return false
				})
				before := proxy.Commands(tc.verb)
				req := limitspec.Request{Key: "retried", Limit: limitspec.FixedWindow{Limit: 100, Window: time.Hour}, Cost: 1, Now: t0Time}
				admitted := 0
				for i := range 150 {
					req.ID = fmt.Sprintf("req-%d", i)
					ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
					res, err := d.Limit(ctx, req)
					cancel()
					if err != nil {
						t.Fatalf("decision %d: %v; want a decision (its lost reply sent again)", i, err)
					}
					if res.Allowed {
						admitted++
					}
				}
				proxy.CutAfterReply(nil)
				received := proxy.Commands(tc.verb) - before
				if used := usedOf(t, lim, req); admitted != 100 || used != 100 {
					t.Errorf("admitted %d, Redis counted %d; want 100 and 100", admitted, used)
				}
				if cut.Load() < 15 || received != 150+cut.Load() {
					t.Errorf("Redis received %d calls, %d cut; want 150 and one per cut, at least 15 cut", received, cut.Load())
				}
			})
		}
	}
}

// TestFaultLostReplyBatchedRetriedByID is TestFaultLostReplyBatched with a
// request id on every decision: 32 goroutines decide 1,600 requests, each
// of a key of its own (a fixed window of 10), batched, through a proxy
// that cuts the connection after Redis ran every 50th call, which loses
// every unread reply of its pipeline. Every call is sent again with its
// id: none fails, every one is admitted, and Redis counts each exactly
// once. The ids are the caller's, or (Options.RequestIDs) the limiter's own.
func TestFaultLostReplyBatchedRetriedByID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		opts   redislimit.Options
		callID bool
	}{
		{"Request.ID", redislimit.Options{}, true},
		{"Options.RequestIDs", redislimit.Options{RequestIDs: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lostBatchRetried(t, tc.callID, tc.opts)
		})
	}
}

// lostBatchRetried is TestFaultLostReplyBatchedRetriedByID with a limiter
// of opts, each request carrying an id when callID is set.
func lostBatchRetried(t *testing.T, callID bool, opts redislimit.Options) {
	srv := redistest.StartServer(t)
	proxy := faultproxy.Start(t, srv.Addr())
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	pipelines := &pipelineCounter{}
	rdb.AddHook(pipelines)
	lim := newLimiter(t, rdb, opts)
	req := func(i int) limitspec.Request {
		r := limitspec.Request{Key: fmt.Sprintf("d%d", i), Limit: limitspec.FixedWindow{Limit: 10, Window: time.Hour}, Cost: 1, Now: t0Time}
		if callID {
			r.ID = fmt.Sprint("r", i)
		}
		return r
	}
	var n, cut atomic.Int64
	proxy.CutAfterReply(func(name string, _ []string) bool {
		if strings.EqualFold(name, "evalsha") && n.Add(1)%50 == 0 {
			cut.Add(1)
			return true
		}
		return false
	})
	const total = 1600
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Go(func() {
			for i := w; i < total; i += 32 {
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
				res, err := lim.Limit(ctx, req(i))
				cancel()
				if err != nil || !res.Allowed {
					t.Errorf("decision %d: %+v, %v; want an admission", i, res, err)
					return
				}
			}
		})
	}
	wg.Wait()
	proxy.CutAfterReply(nil)
	if pipelines.several.Load() == 0 || cut.Load() == 0 {
		t.Fatalf("%d pipelines of several calls, %d cuts; want some of each", pipelines.several.Load(), cut.Load())
	}
	plain := newLimiter(t, rdb, redislimit.Options{}) // its peeks carry no id
	for i := range total {
		if used := usedOf(t, plain, req(i)); used != 1 {
			t.Fatalf("decision %d: Redis counted %d; want 1", i, used)
		}
	}
	t.Logf("%d cuts", cut.Load())
}

// usedOf is what req's limit has counted for its key, by a peek without
// an id.
func usedOf(t *testing.T, lim *redislimit.Limiter, req limitspec.Request) int64 {
	t.Helper()
	req.Cost, req.ID, req.Peek = 0, "", true
	res, err := lim.Limit(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res.Limits[0].Quota - res.Limits[0].Remaining
}

// TestRequestKeyBadState: a request key holding a value the scripts did
// not write, or another Redis type, refuses the request with
// ErrBadState, a limit's and a policy's, and nothing is written: the
// limit's state stays as it was.
func TestRequestKeyBadState(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	lim := newLimiter(t, rdb, redislimit.Options{})
	ctx := t.Context()
	quota, err := limitspec.BurstQuotaPolicy(6)
	if err != nil {
		t.Fatal(err)
	}
	limit := limitspec.Request{Key: "k", Limit: limitspec.FixedWindow{Limit: 10, Window: time.Hour}, Cost: 1, Now: t0Time}
	policy := limitspec.Request{Policy: quota, IDs: map[string]string{"user": "k"}, Cost: 1, Now: t0Time}
	for _, req := range []limitspec.Request{limit, policy} {
		for _, plant := range []func(key string) error{
			func(key string) error { return rdb.Set(ctx, key, "1:2:0:0:garbage", time.Minute).Err() },
			func(key string) error { return rdb.HSet(ctx, key, "a", "b").Err() },
		} {
			if _, err := lim.Limit(ctx, req); err != nil { // a state to keep
				t.Fatal(err)
			}
			before, err := rdb.Keys(ctx, "{k}:*").Result()
			if err != nil {
				t.Fatal(err)
			}
			req.ID = fmt.Sprint("planted-", len(before))
			if err := plant("{k}:rq:" + req.ID); err != nil {
				t.Fatal(err)
			}
			dump := func() map[string]string {
				out := map[string]string{}
				for _, k := range before {
					v, _ := rdb.Dump(ctx, k).Result()
					out[k] = v
				}
				return out
			}
			was := dump()
			if _, err := lim.Limit(ctx, req); !errors.Is(err, limitspec.ErrBadState) {
				t.Errorf("%s over a planted request key: %v; want ErrBadState", req.ID, err)
			}
			if now := dump(); fmt.Sprint(now) != fmt.Sprint(was) {
				t.Errorf("%s: a refused request changed the state", req.ID)
			}
			req.ID = ""
		}
	}
}

// failoverErr is a Redis error reply, as a server that is failing over
// answers (READONLY, LOADING, ...).
type failoverErr string

func (e failoverErr) Error() string { return string(e) }
func (e failoverErr) RedisError()   {}

// lostThenRefused is a go-redis hook: the first script call that runs
// on the server has its reply lost; every call after it is answered with
// a Redis error without running.
type lostThenRefused struct{ lost, refused atomic.Int64 }

func (h *lostThenRefused) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *lostThenRefused) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *lostThenRefused) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name != "evalsha" && name != "eval" {
			return next(ctx, cmd)
		}
		if h.lost.Load() > 0 {
			h.refused.Add(1)
			cmd.SetErr(failoverErr("READONLY You can't write against a read only replica."))
			return cmd.Err()
		}
		if err := next(ctx, cmd); err != nil {
			return err // NOSCRIPT, say: not run
		}
		h.lost.Add(1)
		cmd.SetErr(&net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")})
		return cmd.Err()
	}
}

// TestLostReplyThenRefusedStaysUnknown: a call with a request id whose
// reply is lost, and whose retry a failing-over server refuses, reports
// that its outcome is unknown (ErrOutcomeUnknown), not the refusal: the
// first call ran and charged, as Redis counts.
func TestLostReplyThenRefusedStaysUnknown(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	lim := newLimiter(t, rdb, redislimit.Options{NoBatching: true})
	hook := &lostThenRefused{}
	rdb.AddHook(hook)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fw := limitspec.FixedWindow{Limit: 10, Window: time.Minute}
	_, err := lim.Limit(ctx, limitspec.Request{Key: "k", Limit: fw, Cost: 1, ID: "r1", Now: time.UnixMilli(1_700_000_000_000)})
	if !errors.Is(err, limitspec.ErrOutcomeUnknown) {
		t.Fatalf("err = %v; want one matching ErrOutcomeUnknown", err)
	}
	if lost, refused := hook.lost.Load(), hook.refused.Load(); lost != 1 || refused < 1 {
		t.Fatalf("%d calls lost and %d refused; want the lost one and a refused retry", lost, refused)
	}
	keys, err := rdb.Keys(ctx, "{k}:fw:*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %v, %v; want the window's key", keys, err)
	}
	if n, err := rdb.Get(ctx, keys[0]).Result(); err != nil || !strings.Contains(n, "1") {
		t.Errorf("the window holds %q, %v; want the first call's charge of 1", n, err)
	}
}
