package redislimit_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// scaleHolds is how many holds TestHoldsAtScale keeps live on one key.
const scaleHolds = 20_000

// TestHoldsAtScale: 20,000 live holds on one tenant's keys, on a Redis
// server and on a 3-master Cluster, break no call (docs/semantics.md,
// "Holds", "Scale"): 32 clients reserve them (a slot of 25,000 and a job
// of 1,000,000 an hour each, for 10 minutes), and every reserve is
// admitted; a peek counts them all; reserve + release pairs of other ids
// go through beside them; 1,000 are released and 1,000 committed, and
// the peek counts exactly what is left; 11 minutes on, when every hold
// has ended, one peek drops them all, the hour counts the 1,000
// committed alone, and no holds key is left in Redis.
func TestHoldsAtScale(t *testing.T) {
	t.Parallel()
	t.Run("server", func(t *testing.T) {
		t.Parallel()
		srv := redistest.StartServer(t)
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
		t.Cleanup(func() { rdb.Close() })
		holdsAtScale(t, rdb, func() []string { return rdb.Keys(t.Context(), "*").Val() })
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: redistest.StartCluster(t, 3), ContextTimeoutEnabled: true})
		t.Cleanup(func() { cluster.Close() })
		holdsAtScale(t, cluster, func() []string { return clusterKeys(t, cluster) })
	})
}

func holdsAtScale(t *testing.T, rdb redis.UniversalClient, keys func() []string) {
	lim := newLimiter(t, rdb, redislimit.Options{})
	pool := workerPool(t, 25_000, 1_000_000)
	ids := map[string]string{"tenant": "acme"}
	hold := func(op limitspec.HoldOp, id string, cost, ms int64) (limitspec.Result, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		h := limitspec.Hold{Op: op, ID: id}
		if op == limitspec.Reserve {
			h.For = 10 * time.Minute
		}
		return lim.Hold(ctx, limitspec.Request{Policy: pool, IDs: ids, Cost: cost, Peek: cost == 0, Now: at(ms)}, h)
	}
	peek := func(ms int64, slots, hour int64) {
		t.Helper()
		res, err := lim.Limit(t.Context(), limitspec.Request{Policy: pool, IDs: ids, Peek: true, Now: at(ms)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Limits[0].Remaining != slots || res.Limits[1].Remaining != hour {
			t.Fatalf("at %d ms: %d slots and %d jobs left; want %d and %d", ms, res.Limits[0].Remaining, res.Limits[1].Remaining, slots, hour)
		}
	}
	reserveAll(t, func(i int) (limitspec.Result, error) {
		return hold(limitspec.Reserve, fmt.Sprint("h", i), 1, int64(i/100))
	})
	peek(1000, 25_000-scaleHolds, 1_000_000-scaleHolds)
	for j := range 100 {
		id, ms := fmt.Sprint("pair", j), int64(1000+j)
		if res, err := hold(limitspec.Reserve, id, 1, ms); err != nil || !res.Allowed {
			t.Fatalf("pair %d's reserve beside %d holds: %+v, %v", j, scaleHolds, res, err)
		}
		if _, err := hold(limitspec.Release, id, 0, ms); err != nil {
			t.Fatalf("pair %d's release beside %d holds: %v", j, scaleHolds, err)
		}
	}
	for i := range 2000 {
		op, cost := limitspec.Release, int64(0)
		if i >= 1000 {
			op, cost = limitspec.Commit, 1
		}
		if _, err := hold(op, fmt.Sprint("h", i), cost, 2000); err != nil {
			t.Fatalf("%s of h%d: %v", op, i, err)
		}
	}
	// 18,000 held; the hour counts them and the 1,000 committed.
	peek(2001, 25_000-18_000, 1_000_000-19_000)
	peek(11*60_000, 25_000, 1_000_000-1_000)
	for _, k := range keys() {
		if strings.HasSuffix(k, ":hh") || strings.HasSuffix(k, ":hz") {
			t.Errorf("holds key %s left after every hold ended", k)
		}
	}
}

// reserveAll runs reserve for 0 to scaleHolds-1 from 32 clients; each
// must be admitted.
func reserveAll(t *testing.T, reserve func(i int) (limitspec.Result, error)) {
	t.Helper()
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < scaleHolds; i = int(next.Add(1) - 1) {
				if res, err := reserve(i); err != nil || !res.Allowed {
					if failed.Add(1) == 1 {
						t.Errorf("reserve %d of %d: %+v, %v", i, scaleHolds, res, err)
					}
				}
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d of %d reserves failed", n, scaleHolds)
	}
}
