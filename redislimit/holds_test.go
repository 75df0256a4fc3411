package redislimit_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
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

// The Redis limiter keeps holds.
var _ limitspec.Holder = (*redislimit.Limiter)(nil)

// workerPool is the holding policy of the fault tests: at most slots in
// flight per tenant, and perHour jobs an hour, held or done.
func workerPool(t *testing.T, slots, perHour int64) *limitspec.Policy {
	t.Helper()
	p, err := limitspec.NewPolicy("pool",
		limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: slots}, Identity: "tenant"},
		limitspec.PolicyLimit{Name: "hour", Limit: limitspec.FixedWindow{Limit: perHour, Window: time.Hour}, Identity: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	return p.WithHolds()
}

// TestFaultHoldsRacing: 64 clients, each with a connection of its own, reserve
// a slot of a pool of 10 (and 1 to 3 jobs of 500 an hour), hold it a
// moment, then commit what they spent (0 to what they held) or release
// it, 30 times each, on a Redis server and on a 3-master Cluster. The
// slots held, counted by the clients between an admitted reserve and its
// commit or release, never pass 10; every commit and release finds its
// hold; and the hour's count in Redis is exactly the sum of the amounts
// committed, so that what was held and released, or not spent, is given
// back.
func TestFaultHoldsRacing(t *testing.T) {
	t.Parallel()
	t.Run("server", func(t *testing.T) {
		t.Parallel()
		srv := redistest.StartServer(t)
		racingHolds(t, func() redis.UniversalClient {
			return redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
		})
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		addrs := redistest.StartCluster(t, 3)
		racingHolds(t, func() redis.UniversalClient {
			return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
		})
	})
}

func racingHolds(t *testing.T, client func() redis.UniversalClient) {
	const clients, rounds, slots, perHour = 64, 30, 10, 500
	pool := workerPool(t, slots, perHour)
	ids := map[string]string{"tenant": "acme"}
	var inFlight, most, admitted, committed atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rdb := client()
			defer rdb.Close()
			lim, err := redislimit.New(context.Background(), rdb, redislimit.Options{Functions: c%2 == 1})
			if err != nil {
				errs <- err
				return
			}
			rng := rand.New(rand.NewSource(int64(c)))
			for r := range rounds {
				amount := 1 + rng.Int63n(3)
				h := limitspec.Hold{Op: limitspec.Reserve, ID: fmt.Sprintf("c%d-r%d", c, r), For: time.Minute}
				res, err := lim.Hold(context.Background(), limitspec.Request{Policy: pool, IDs: ids, Cost: amount, Peek: amount == 0}, h)
				if err != nil {
					errs <- fmt.Errorf("reserve: %w", err)
					return
				}
				if !res.Allowed {
					continue
				}
				admitted.Add(1)
				n := inFlight.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(time.Duration(rng.Intn(500)) * time.Microsecond)
				inFlight.Add(-1) // before the call that ends the hold: the count never trails Redis's
				spent := rng.Int63n(amount + 1)
				h.Op, h.For = limitspec.Commit, 0
				if rng.Intn(4) == 0 {
					h.Op, spent = limitspec.Release, 0
				}
				if _, err := lim.Hold(context.Background(), limitspec.Request{Policy: pool, IDs: ids, Cost: spent, Peek: spent == 0}, h); err != nil {
					errs <- fmt.Errorf("%s: %w", h.Op, err)
					return
				}
				committed.Add(spent)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if most.Load() > slots || admitted.Load() < slots {
		t.Errorf("%d slots held at most, %d reserves admitted; want at most %d held, and at least %d admitted", most.Load(), admitted.Load(), slots, slots)
	}
	rdb := client()
	defer rdb.Close()
	res, err := newLimiter(t, rdb, redislimit.Options{}).Limit(t.Context(), limitspec.Request{Policy: pool, IDs: ids, Peek: true})
	if err != nil {
		t.Fatal(err)
	}
	hour := res.Limits[1]
	if used := hour.Quota - hour.Remaining; used != committed.Load() || res.Limits[0].Remaining != slots {
		t.Errorf("the hour counts %d and %d slots are free; want %d, the amounts committed, and all %d", used, res.Limits[0].Remaining, committed.Load(), slots)
	}
}

// TestFaultHoldLostCommit cuts the connection after Redis ran every
// third commit and before its reply reaches the client. 60 jobs reserve
// 2 and commit 1 of a window of 100: a commit whose reply was lost is
// sent again (an operation on a hold is idempotent by its id), and the
// retry, finding the commit remembered, gets its first reply and charges
// nothing: no caller sees ErrNoHold. Redis received 80 commits (60 and
// the 20 retries), and its window counts exactly 60, one per job, with
// nothing left held.
func TestFaultHoldLostCommit(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	proxy := faultproxy.Start(t, srv.Addr())
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	lim := newLimiter(t, rdb, redislimit.Options{})
	pool := workerPool(t, 100, 100)
	ids := map[string]string{"tenant": "acme"}
	var commits atomic.Int64
	proxy.CutAfterReply(func(name string, args []string) bool {
		return strings.EqualFold(name, "evalsha") && scriptOp(args) == "commit" && commits.Add(1)%4 == 3
	})
	noHold := 0
	for i := range 60 {
		h := limitspec.Hold{Op: limitspec.Reserve, ID: fmt.Sprint("job", i), For: time.Minute}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		res, err := lim.Hold(ctx, limitspec.Request{Policy: pool, IDs: ids, Cost: 2, Now: at(int64(i))}, h)
		if err != nil || !res.Allowed {
			t.Fatalf("reserve %d: %+v, %v", i, res, err)
		}
		h.Op, h.For = limitspec.Commit, 0
		res, err = lim.Hold(ctx, limitspec.Request{Policy: pool, IDs: ids, Cost: 1, Now: at(int64(i))}, h)
		cancel()
		switch {
		case errors.Is(err, limitspec.ErrNoHold):
			noHold++
		case err != nil:
			t.Fatalf("commit %d: %v", i, err)
		case res.Limits[1].Quota-res.Limits[1].Remaining != int64(i+1):
			t.Errorf("commit %d: the window counts %d after it; want %d", i, res.Limits[1].Quota-res.Limits[1].Remaining, i+1)
		}
	}
	proxy.CutAfterReply(nil)
	if got := commits.Load(); got != 80 || noHold != 0 {
		t.Errorf("Redis received %d commits, %d answered ErrNoHold; want 80 and none", got, noHold)
	}
	res, err := lim.Limit(t.Context(), limitspec.Request{Policy: pool, IDs: ids, Peek: true, Now: at(60)})
	if err != nil {
		t.Fatal(err)
	}
	if hour := res.Limits[1]; hour.Quota-hour.Remaining != 60 || res.Limits[0].Remaining != 100 {
		t.Errorf("the window counts %d, %d slots free; want 60 and 100", hour.Quota-hour.Remaining, res.Limits[0].Remaining)
	}
}

// scriptOp is the op of a holding policy's script call, EVALSHA's
// arguments args (sha, the number of keys, the keys, then now_ms, the
// costs, the op, ...), or "" when args are not such a call.
func scriptOp(args []string) string {
	if len(args) < 2 {
		return ""
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || len(args) <= 2+n+2 {
		return ""
	}
	return args[2+n+2]
}

// TestFaultHoldKilledHolder: a holder takes the last slot for 300 ms,
// then its process dies (its client closed, its hold never released).
// Another client is denied, told to retry after 300 ms; at 299 ms it is
// still denied, at 300 ms it gets the slot: the hold freed itself when
// it ended, with no key expiring. The holds key's TTL is the hold's end
// plus the margin, rounded up by REQUEST_MS (so that most writes need
// not set it). On a Redis server and on a 3-master Cluster.
func TestFaultHoldKilledHolder(t *testing.T) {
	t.Parallel()
	t.Run("server", func(t *testing.T) {
		t.Parallel()
		srv := redistest.StartServer(t)
		killedHolder(t, func() redis.UniversalClient {
			return redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
		})
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		addrs := redistest.StartCluster(t, 3)
		killedHolder(t, func() redis.UniversalClient {
			return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
		})
	})
}

func killedHolder(t *testing.T, client func() redis.UniversalClient) {
	pool := workerPool(t, 1, 100)
	ids := map[string]string{"tenant": "acme"}
	reserve := func(lim *redislimit.Limiter, id string, ms int64) limitspec.Result {
		t.Helper()
		res, err := lim.Hold(t.Context(), limitspec.Request{Policy: pool, IDs: ids, Cost: 1, Now: at(ms)},
			limitspec.Hold{Op: limitspec.Reserve, ID: id, For: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	holder := client()
	if res := reserve(newLimiter(t, holder, redislimit.Options{}), "dead", 0); !res.Allowed {
		t.Fatalf("the holder's reserve was denied: %+v", res)
	}
	holder.Close()
	rdb := client()
	t.Cleanup(func() { rdb.Close() })
	if ttl := rdb.PTTL(t.Context(), "{acme}:slots:hz").Val(); ttl <= 0 || ttl > (300+60000+60000)*time.Millisecond {
		t.Errorf("the holds key's TTL is %v; want at most the hold's 300 ms plus the margin, rounded up by REQUEST_MS", ttl)
	}
	lim := newLimiter(t, rdb, redislimit.Options{})
	if res := reserve(lim, "next", 0); res.Allowed || res.RetryAfter != 300*time.Millisecond {
		t.Errorf("at 0 ms: %+v; want denied, retry after 300 ms", res)
	}
	if res := reserve(lim, "next", 299); res.Allowed {
		t.Errorf("at 299 ms: admitted; want denied until the hold ends")
	}
	if res := reserve(lim, "next", 300); !res.Allowed {
		t.Errorf("at 300 ms: %+v; want admitted, the dead holder's hold ended", res)
	}
}

// TestHoldsBadStateWritesNothing: a limit's key holding a value the
// scripts did not write refuses every operation of the holding policy
// with ErrBadState, the other limit's holds included, and nothing is
// written: a commit of a hold taken before leaves both holds keys as
// they were.
func TestHoldsBadStateWritesNothing(t *testing.T) {
	t.Parallel()
	_, rdb := newClient(t)
	lim := newLimiter(t, rdb, redislimit.Options{})
	pool := workerPool(t, 2, 100)
	req := limitspec.Request{Policy: pool, IDs: map[string]string{"tenant": "acme"}, Cost: 1, Now: at(0)}
	if _, err := lim.Hold(t.Context(), req, limitspec.Hold{Op: limitspec.Reserve, ID: "job-1", For: time.Minute}); err != nil {
		t.Fatal(err)
	}
	before := func() string {
		a := rdb.HGetAll(t.Context(), "{acme}:slots:hd").Val()
		b := rdb.HGetAll(t.Context(), "{acme}:hour:hd").Val()
		return fmt.Sprint(a, b)
	}
	held := before()
	rdb.Set(t.Context(), "{acme}:hour:fw:3600000", "garbage", time.Minute)
	for _, h := range []limitspec.Hold{{Op: limitspec.Commit, ID: "job-1"}, {Op: limitspec.Reserve, ID: "job-2", For: time.Minute}, {Op: limitspec.Release, ID: "job-1"}} {
		r := req
		if h.Op == limitspec.Release {
			r.Cost, r.Peek = 0, true
		}
		if _, err := lim.Hold(t.Context(), r, h); !errors.Is(err, limitspec.ErrBadState) {
			t.Errorf("%s on a bad state: %v; want ErrBadState", h.Op, err)
		}
	}
	if got := before(); got != held {
		t.Errorf("the holds became %s; want %s, unchanged", got, held)
	}
}

// TestHoldRefusesNoHoldingPolicy: Hold on a request of a Limit, or of a
// policy made without WithHolds, is refused as bad input before any call,
// not a panic.
func TestHoldRefusesNoHoldingPolicy(t *testing.T) {
	t.Parallel()
	_, rdb := newClient(t)
	lim := newLimiter(t, rdb, redislimit.Options{})
	plain, err := limitspec.NewPolicy("pool", limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: 1}, Identity: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	h := limitspec.Hold{Op: limitspec.Reserve, ID: "job", For: time.Second}
	for _, req := range []limitspec.Request{
		{Key: "acme", Limit: limitspec.Concurrency{Limit: 1}, Cost: 1},
		{Policy: plain, IDs: map[string]string{"tenant": "acme"}, Cost: 1},
	} {
		if _, err := lim.Hold(t.Context(), req, h); !errors.Is(err, limitspec.ErrBadInput) || !strings.Contains(err.Error(), "holding policy") {
			t.Errorf("%+v: %v; want a refusal naming the holding policy", req, err)
		}
	}
}
