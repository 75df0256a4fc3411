package redislimit_test

import (
	"context"
	"errors"
	"fmt"
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

// TestFaultLostReply cuts the connection after Redis ran every tenth
// decision and before its reply reaches the client, whose options are
// go-redis's defaults (MaxRetries 3, which re-sends a command whose
// connection broke). 150 decisions of a fixed window of 100, at one
// instant, by EVALSHA and by FCALL: each reaches Redis exactly once (the
// proxy counts them), the 15 cut ones fail with ErrUnavailable and
// ErrOutcomeUnknown, and Redis has admitted exactly 100, of which the
// client saw 90 (the 10 cut among the first 100 were admitted unseen).
// Each runs through Limiter.Limit and through a bound handle.
func TestFaultLostReply(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		verb string
		opts redislimit.Options
	}{
		{"evalsha", "evalsha", redislimit.Options{}},
		{"functions", "fcall", redislimit.Options{Functions: true}},
	} {
		for _, way := range ways {
			t.Run(tc.name+"/"+way.name, func(t *testing.T) {
				t.Parallel()
				lostReply(t, tc.verb, way.via, tc.opts)
			})
		}
	}
}

// lostReply is TestFaultLostReply of verb with a limiter of opts,
// deciding by via's decider.
func lostReply(t *testing.T, verb string, via func(*redislimit.Limiter) decider, opts redislimit.Options) {
	srv := redistest.StartServer(t)
	proxy := faultproxy.Start(t, srv.Addr())
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	lim := newLimiter(t, rdb, opts)
	d := via(lim)
	var n atomic.Int64
	proxy.CutAfterReply(func(name string, _ []string) bool {
		return strings.EqualFold(name, verb) && n.Add(1)%10 == 0
	})
	req := limitspec.Request{Key: "lost", Limit: limitspec.FixedWindow{Limit: 100, Window: time.Hour}, Cost: 1, Now: time.Now()}
	before := proxy.Commands(verb) // New's check of the library's version
	seen, lost := 0, 0
	for i := 0; i < 150; i++ {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		res, err := d.Limit(ctx, req)
		cancel()
		switch {
		case err == nil && res.Allowed:
			seen++
		case err != nil && errors.Is(err, limitspec.ErrUnavailable) && errors.Is(err, limitspec.ErrOutcomeUnknown):
			lost++
		case err != nil:
			t.Fatalf("decision %d: %v; want ErrUnavailable and ErrOutcomeUnknown", i+1, err)
		}
	}
	proxy.CutAfterReply(nil)
	if got := proxy.Commands(verb) - before; got != 150 {
		t.Errorf("Redis received %d %s; want 150, one per decision", got, verb)
	}
	peek := req
	peek.Cost, peek.Peek = 0, true
	res, err := lim.Limit(t.Context(), peek)
	if err != nil {
		t.Fatal(err)
	}
	if used := res.Limits[0].Quota - res.Limits[0].Remaining; seen != 90 || lost != 15 || used != 100 {
		t.Errorf("admitted %d seen, %d lost, %d used in Redis; want 90, 15, 100", seen, lost, used)
	}
}

// TestFaultLostReplyBatched is TestFaultLostReply with batching on (the
// default): 32 goroutines decide 1,600 requests, each of a key of its
// own, by EVALSHA and by FCALL, through a proxy that cuts the connection
// after Redis ran every 50th call. A cut loses the replies the client
// had not read yet (the calls before it in its pipeline: the proxy's
// reset discards them) and the calls after it, which never reach Redis.
// Every decision is an admission or an error of ErrUnavailable and
// ErrOutcomeUnknown, and pipelines of several calls were sent. Redis ran
// each call at most once: every admission seen counted once, every lost
// call once or never; the counts add up to the calls Redis received, of
// which the cut ones were lost. Each runs through Limiter.Limit and
// through bound handles.
func TestFaultLostReplyBatched(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		verb string
		opts redislimit.Options
	}{
		{"evalsha", "evalsha", redislimit.Options{}},
		{"functions", "fcall", redislimit.Options{Functions: true}},
	} {
		for _, way := range ways {
			t.Run(tc.name+"/"+way.name, func(t *testing.T) {
				t.Parallel()
				lostReplyBatched(t, tc.verb, way.via, tc.opts)
			})
		}
	}
}

// lostReplyBatched is TestFaultLostReplyBatched of verb with a limiter
// of opts, deciding by via's decider.
func lostReplyBatched(t *testing.T, verb string, via func(*redislimit.Limiter) decider, opts redislimit.Options) {
	srv := redistest.StartServer(t)
	proxy := faultproxy.Start(t, srv.Addr())
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	pipelines := &pipelineCounter{}
	rdb.AddHook(pipelines)
	lim := newLimiter(t, rdb, opts)
	req := func(i int) limitspec.Request {
		return limitspec.Request{Key: fmt.Sprintf("d%d", i), Limit: limitspec.FixedWindow{Limit: 10, Window: time.Hour}, Cost: 1, Now: t0Time}
	}
	if _, err := lim.Limit(t.Context(), req(-1)); err != nil { // the script loaded
		t.Fatal(err)
	}
	before := proxy.Commands(verb)
	var n, cut atomic.Int64
	proxy.CutAfterReply(func(name string, _ []string) bool {
		if strings.EqualFold(name, verb) && n.Add(1)%50 == 0 {
			cut.Add(1)
			return true
		}
		return false
	})
	lost := decideAll(t, via(lim), req, 32, 50)
	proxy.CutAfterReply(nil)
	received := proxy.Commands(verb) - before
	if pipelines.several.Load() == 0 {
		t.Fatal("no pipeline of several calls was sent")
	}
	var ran, lostRan int64
	for i, l := range lost {
		peek := req(i)
		peek.Cost, peek.Peek = 0, true
		res, err := lim.Limit(t.Context(), peek)
		if err != nil {
			t.Fatal(err)
		}
		used := res.Limits[0].Quota - res.Limits[0].Remaining
		if used > 1 || !l && used != 1 {
			t.Fatalf("decision %d (lost: %v): Redis counted %d; want 1 for an admission seen, 0 or 1 for a lost one", i, l, used)
		}
		ran += used
		if l {
			lostRan += used
		}
	}
	if ran != received || lostRan < cut.Load() {
		t.Errorf("Redis counted %d admissions, %d of them lost, and received %d %s, %d cut; want as many admissions as calls received, at least the cut ones lost",
			ran, lostRan, received, verb, cut.Load())
	}
	t.Logf("%d calls received, %d cut; %d lost, %d of them run", received, cut.Load(), count(lost), lostRan)
}

// t0Time is t0 as a time.
var t0Time = time.UnixMilli(t0)

// count is how many of bs are true.
func count(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// decideAll decides the requests req(0) to req(g*per-1), from g
// goroutines, and reports which were lost (ErrUnavailable and
// ErrOutcomeUnknown), failing the test on a denial or another error.
func decideAll(t *testing.T, lim decider, req func(int) limitspec.Request, g, per int) (lost []bool) {
	lost = make([]bool, g*per)
	var wg sync.WaitGroup
	for w := range g {
		wg.Go(func() {
			for i := w; i < len(lost); i += g {
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
				res, err := lim.Limit(ctx, req(i))
				cancel()
				switch {
				case err == nil && res.Allowed:
				case errors.Is(err, limitspec.ErrUnavailable) && errors.Is(err, limitspec.ErrOutcomeUnknown):
					lost[i] = true
				default:
					t.Errorf("decision %d: %+v, %v; want an admission, or ErrUnavailable and ErrOutcomeUnknown", i, res, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return lost
}

// pipelineCounter is a go-redis hook that counts the pipelines of
// several commands.
type pipelineCounter struct{ several atomic.Int64 }

func (*pipelineCounter) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (*pipelineCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (p *pipelineCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 1 {
			p.several.Add(1)
		}
		return next(ctx, cmds)
	}
}
