package lease_test

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/internal/faultproxy"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/lease"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// onRedis is a process's limiter on the Redis at addr: leases of size
// taken through a fallback that fails closed.
func onRedis(t *testing.T, addr string, size int64) (*lease.Limiter, *redislimit.Limiter) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	remote, err := redislimit.New(t.Context(), rdb, redislimit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	safe, err := fallback.New(remote, nil, fallback.Options{Mode: fallback.FailClosed, OpenFor: 100 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return newLease(t, safe, lease.Options{Size: size, For: 500 * time.Millisecond}), remote
}

// The phases of TestFaultLeasePartition.
const beforeCut, duringCut, afterCut = 0, 1, 2

// partitionLoad is the demand of TestFaultLeasePartition: req decided
// again and again until stop is closed, counting the admissions by
// process and phase, and the denials failing closed.
type partitionLoad struct {
	t          *testing.T
	req        limitspec.Request
	stop       chan struct{}
	phase      atomic.Int32
	admitted   [2][3]atomic.Int64 // by process, by phase
	failClosed atomic.Int64
}

// run decides the requests of one goroutine of the process p, through
// lim, one a ms; a call must not fail.
func (l *partitionLoad) run(p int, lim *lease.Limiter) {
	for {
		select {
		case <-l.stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(l.t.Context(), time.Second)
		res, err := lim.Limit(ctx, l.req)
		cancel()
		if err != nil {
			l.t.Errorf("process %d: %v", p, err)
			return
		}
		if res.Allowed {
			l.admitted[p][l.phase.Load()].Add(1)
		}
		if res.Side == limitspec.FailClosed {
			l.failClosed.Add(1)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFaultLeasePartition: two processes on one Redis, leases of 10
// through a fallback failing closed, 8 goroutines each, on a fixed
// window of 3000; process A is cut off from Redis (its requests dropped
// on the way) for a second, then joins again, while B goes on. The
// demand is above the limit. Redis counts exactly 3000, and what the
// processes admitted is that less what their leases let lapse or still
// hold: the partition under-admits, never over. While cut off, A admits
// only from the leases it held or was being granted (two of 10 at
// most), and denies the rest; no call fails.
func TestFaultLeasePartition(t *testing.T) {
	const L, size = 3000, 10
	srv := redistest.StartServer(t)
	proxy := faultproxy.Start(t, srv.Addr())
	a, _ := onRedis(t, proxy.Addr(), size)
	b, remote := onRedis(t, srv.Addr(), size)
	limit := limitspec.FixedWindow{Limit: L, Window: 1000 * time.Hour}
	req := limitspec.Request{Key: "partition", Limit: limit, Cost: 1}

	load := &partitionLoad{t: t, req: req, stop: make(chan struct{})}
	var wg sync.WaitGroup
	for p, lim := range []*lease.Limiter{a, b} {
		for range 8 {
			wg.Go(func() { load.run(p, lim) })
		}
	}
	time.Sleep(100 * time.Millisecond)
	proxy.Blackhole(true)
	load.phase.Store(duringCut)
	time.Sleep(time.Second)
	proxy.Blackhole(false)
	load.phase.Store(afterCut)
	time.Sleep(300 * time.Millisecond)
	close(load.stop)
	wg.Wait()
	admitted, failClosed := &load.admitted, &load.failClosed

	peek, err := remote.Limit(t.Context(), limitspec.Request{Key: req.Key, Limit: limit, Peek: true})
	if err != nil {
		t.Fatal(err)
	}
	used := L - peek.Limits[0].Remaining
	var total, lapsed, holding int64
	for p, lim := range []*lease.Limiter{a, b} {
		for ph := range admitted[p] {
			total += admitted[p][ph].Load()
		}
		lapsed += int64(lim.Stats().Lapsed)
		holding += held(lim)
	}
	t.Logf("admitted: A %d/%d/%d, B %d/%d/%d (before/cut/after); Redis counts %d; %d lapsed, %d held; %d denied failing closed",
		admitted[0][beforeCut].Load(), admitted[0][duringCut].Load(), admitted[0][afterCut].Load(),
		admitted[1][beforeCut].Load(), admitted[1][duringCut].Load(), admitted[1][afterCut].Load(), used, lapsed, holding, failClosed.Load())
	if used != L {
		t.Errorf("Redis counts %d, want the limit, %d (the demand is above it)", used, L)
	}
	if total != used-lapsed-holding {
		t.Errorf("admitted %d, want Redis's %d less %d lapsed and %d held", total, used, lapsed, holding)
	}
	if got := admitted[0][duringCut].Load(); got > 2*size {
		t.Errorf("A admitted %d while cut off, above the two leases of %d it could hold", got, size)
	}
	if admitted[1][duringCut].Load() == 0 || failClosed.Load() == 0 {
		t.Errorf("B admitted %d while A was cut off, %d denied failing closed: the partition did not happen as planned",
			admitted[1][duringCut].Load(), failClosed.Load())
	}
}
