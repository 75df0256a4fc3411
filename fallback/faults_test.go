package fallback_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/internal/faultproxy"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// quiet is a logger that drops everything, for tests that open the
// breaker on purpose.
var quiet = slog.New(slog.DiscardHandler)

// onRedis is a fallback limiter of one process on the Redis at addr,
// with a local limiter of its own.
func onRedis(t *testing.T, addr string, opts fallback.Options) *fallback.Limiter {
	t.Helper()
	return onRedisWith(t, addr, opts, redislimit.Options{})
}

// onRedisWith is onRedis with a Redis limiter of redisOpts.
func onRedisWith(t *testing.T, addr string, opts fallback.Options, redisOpts redislimit.Options) *fallback.Limiter {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	opts.Logger = quiet
	return onClient(t, rdb, redisOpts, opts)
}

// onClient is a fallback with opts over a Redis limiter on rdb with
// redisOpts, and a local limiter of its own.
func onClient(t *testing.T, rdb *redis.Client, redisOpts redislimit.Options, opts fallback.Options) *fallback.Limiter {
	t.Helper()
	remote, err := redislimit.New(t.Context(), rdb, redisOpts)
	if err != nil {
		t.Fatal(err)
	}
	local, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	lim, err := fallback.New(remote, local, opts)
	if err != nil {
		t.Fatal(err)
	}
	return lim
}

// hourStart is a time one minute into an hour: a fixed window of an hour
// decided at it resets 59 minutes later, whatever time the test runs at.
func hourStart() time.Time { return time.Now().Truncate(time.Hour).Add(time.Minute) }

// TestFaultSlowRedis: a GCRA burst of 5 (one more per hour), 3 admitted
// by Redis, then Redis answers 3 s late, past the fallback's Timeout of
// a second (far above what a first call takes on a loaded machine),
// while 500 requests arrive at once. The local limiter starts from
// Redis's last word (3 used), so that it admits the 2 left: 5 in all,
// the burst. (It used to start from a full burst: 8.)
func TestFaultSlowRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	proxy := faultproxy.Start(t, srv.Addr())
	lim := onRedis(t, proxy.Addr(), fallback.Options{Timeout: time.Second})
	req := limitspec.Request{Key: "slow", Limit: limitspec.GCRA{Burst: 5, Rate: 1, Period: time.Hour}, Cost: 1}
	var admitted, slowSides atomic.Int64
	decide := func() {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		res, err := lim.Limit(ctx, req)
		if err != nil {
			t.Error(err)
		}
		if res.Allowed {
			admitted.Add(1)
		}
		if res.Side == limitspec.Fallback {
			slowSides.Add(1)
		}
	}
	for i := 0; i < 3; i++ {
		decide()
	}
	proxy.Delay(3 * time.Second)
	var wg sync.WaitGroup
	for i := 0; i < 500; i++ {
		wg.Go(decide)
	}
	wg.Wait()
	st := lim.Stats()
	// The 500 are decided locally (Redis answers 3 s late); the
	// primary's failures are timeouts, slow (how many depends on when the
	// breaker opens, and under load a wait for a pooled connection may
	// be among them).
	if admitted.Load() != 5 || slowSides.Load() != 500 || st.PrimarySlow == 0 {
		t.Errorf("admitted %d, %d decided locally, %d primary errors of which %d slow; want 5, 500, slow ones",
			admitted.Load(), slowSides.Load(), st.PrimaryErrors, st.PrimarySlow)
	}
}

// TestFaultDownBound works the bound of docs/semantics.md ("Fallback")
// on two processes sharing a fixed window of 10 (Processes: 2), all at
// one instant: process 1 has 4 admitted by Redis, then process 2 has 2
// (its last report: 6 used; process 1's: 4, D1 = 2 admitted since).
// Redis is killed. Process 1's local limiter starts from 4 and takes 2
// per request of its share: 3 more; process 2 from 6: 2 more. In all
// 6 + 3 + 2 = 11 = 10 + (D1 + D2) / 2, the bound; never the 16 of two
// local limiters starting from nothing.
func TestFaultDownBound(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	// A deadline of a second: the fault here is a killed server, refused at
	// once, and a loaded machine (the race detector) may take more than
	// the default 50 ms for a first call.
	opts := fallback.Options{Processes: 2, Timeout: time.Second}
	p1, p2 := onRedis(t, srv.Addr(), opts), onRedis(t, srv.Addr(), opts)
	req := limitspec.Request{Key: "down", Limit: limitspec.FixedWindow{Limit: 10, Window: time.Hour}, Cost: 1, Now: hourStart()}
	count := func(lim *fallback.Limiter, n int, side limitspec.Side) int {
		admitted := 0
		for i := 0; i < n; i++ {
			res, err := lim.Limit(t.Context(), req)
			if err != nil || res.Side != side {
				t.Fatalf("%v, side %v; want a decision by %v", err, res.Side, side)
			}
			if res.Allowed {
				admitted++
			}
		}
		return admitted
	}
	byRedis := count(p1, 4, limitspec.Primary) + count(p2, 2, limitspec.Primary)
	srv.Kill()
	local1, local2 := count(p1, 10, limitspec.Fallback), count(p2, 10, limitspec.Fallback)
	if byRedis != 6 || local1 != 3 || local2 != 2 {
		t.Errorf("admitted %d by Redis, %d and %d locally; want 6, 3 and 2 (11: the bound 10 + (2+0)/2)", byRedis, local1, local2)
	}
	if st := p1.Stats(); st.PrimaryErrors == 0 || st.Fallback != 10 {
		t.Errorf("process 1: %d primary errors, %d local decisions; want errors, 10", st.PrimaryErrors, st.Fallback)
	}
}

// switchable is a primary that fails while down is set.
type switchable struct {
	limitspec.Limiter
	down atomic.Bool
}

var errOff = errors.New("switched off")

func (s *switchable) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	if s.down.Load() {
		return limitspec.Result{}, errOff
	}
	return s.Limiter.Limit(ctx, req)
}

// TestFaultFlapping: a fixed window of 10 on a primary that fails and
// comes back twice. 4 admitted by the primary; down: the local limiter
// starts from 4 and admits 6; back: the primary is first told the 6
// (forced), so that it admits none; down again: the local limiter kept
// its count (and the primary's admissions since, mirrored), and admits
// none. 10 in all, the limit, however often it flaps.
func TestFaultFlapping(t *testing.T) {
	store, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	local, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	primary := &switchable{Limiter: store}
	lim, err := fallback.New(primary, local, fallback.Options{Failures: 1000, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	req := limitspec.Request{Key: "flap", Limit: limitspec.FixedWindow{Limit: 10, Window: time.Hour}, Cost: 1, Now: hourStart()}
	phase := func(down bool, n int) (admitted int) {
		primary.down.Store(down)
		for i := 0; i < n; i++ {
			res, err := lim.Limit(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Allowed {
				admitted++
			}
		}
		return admitted
	}
	got := []int{phase(false, 4), phase(true, 20), phase(false, 20), phase(true, 20), phase(false, 20)}
	if want := []int{4, 6, 0, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("admitted per phase %v; want %v", got, want)
	}
	res, err := store.Limit(t.Context(), limitspec.Request{Key: req.Key, Limit: req.Limit, Peek: true, Now: req.Now})
	if err != nil || res.Limits[0].Remaining != 0 {
		t.Errorf("the primary has %d remaining (%v); want 0: told of the local admissions", res.Limits[0].Remaining, err)
	}
}

// TestFaultLostRepliesChargedOnce drops the reply of every 20th decision
// after Redis ran it, behind the README's setup (a fallback over
// redislimit, batched by default, and unbatched). The fallback decides
// each such request locally and never tells Redis of it again, for Redis
// counted it when it ran it: Redis's count equals the admissions, and a
// tight limit admits exactly its limit. (Told again, each was charged
// twice: 1,050 counted for 1,000 admitted, and 95 of a limit of 100.)
func TestFaultLostRepliesChargedOnce(t *testing.T) {
	t.Parallel()
	ways := []struct {
		name string
		opts redislimit.Options
	}{{"batched", redislimit.Options{}}, {"unbatched", redislimit.Options{NoBatching: true}}}
	cases := []struct {
		name            string
		limit, requests int64
	}{{"loose", 1_000_000, 1000}, {"tight", 100, 140}}
	for _, way := range ways {
		for _, tc := range cases {
			t.Run(way.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				lostReplies(t, tc.limit, tc.requests, way.opts)
			})
		}
	}
}

// lostReplies decides requests of a fixed window of limit through a
// fallback over a proxy that cuts every 20th decision's reply, and
// checks the admissions against Redis's count.
func lostReplies(t *testing.T, limit, requests int64, opts redislimit.Options) {
	srv := redistest.StartServer(t)
	proxy := faultproxy.Start(t, srv.Addr())
	// The fault is a lost reply: a deadline of seconds, so that a slow
	// call on a loaded machine is not another.
	lim := onRedisWith(t, proxy.Addr(), fallback.Options{Timeout: 5 * time.Second}, opts)
	var n atomic.Int64
	proxy.CutAfterReply(func(name string, _ []string) bool {
		return name == "EVALSHA" && n.Add(1)%20 == 0
	})
	req := limitspec.Request{Key: "lost", Limit: limitspec.FixedWindow{Limit: limit, Window: time.Hour}, Cost: 1, Now: hourStart()}
	var admitted, local int64
	for range requests {
		res, err := lim.Limit(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Allowed {
			admitted++
		}
		if res.Side == limitspec.Fallback {
			local++
		}
	}
	proxy.CutAfterReply(nil)
	counted := used(t, srv.Addr(), req)
	want := min(limit, requests)
	if admitted != want || counted != want || local != requests/20 {
		t.Errorf("%d admitted, %d decided locally, %d counted by Redis; want %d, %d (the lost replies), %d",
			admitted, local, counted, want, requests/20, want)
	}
}

// used is what Redis at addr counts of req's limit for req's key.
func used(t *testing.T, addr string, req limitspec.Request) int64 {
	t.Helper()
	l := onRedisAlone(t, addr, req).Limits[0]
	return l.Quota - l.Remaining
}

// onRedisAlone is req as a peek straight to Redis at addr.
func onRedisAlone(t *testing.T, addr string, req limitspec.Request) limitspec.Result {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	remote, err := redislimit.New(t.Context(), rdb, redislimit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	req.Cost, req.Costs, req.Peek = 0, nil, true
	res, err := remote.Limit(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
