package fallback_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// outageLimit is the limit of TestFaultOutageCounts: a burst of 40, one
// more per hour, so that over the test each key admits 40 at most.
var outageLimit = limitspec.GCRA{Burst: 40, Rate: 1, Period: time.Hour}

// outageTimeout is the primary's deadline in TestFaultOutageCounts (and
// its client's timeouts; each call's own deadline is twice it): far above
// what a Redis that fsyncs every write takes on a loaded machine, so that
// the counts before the outage are all Redis's.
const outageTimeout = time.Second

// TestFaultOutageCounts counts admissions exactly across an outage of
// one process's Redis, killed then restarted (with appendfsync always,
// so that it forgets nothing), or paused then resumed. Four keys, each
// asked for 10 requests on Redis, then 60 from 8 goroutines while Redis
// is gone, then 60 more once it is back: each key admits its burst, 40,
// and no more (docs/semantics.md, "Faults": one process, L). A paused
// Redis runs, once resumed, the calls that waited for it, which the
// local limiter decided too and does not tell it of again; but a call
// that timed out on a new connection's handshake never reached it (an
// admission it does not count: one more), and a payment that timed out
// is told again (it may be counted twice: one less per request it
// carries, at most the slow failures in all). So a key admits 40, give
// or take the slow failures. Then no goroutine is left behind and every
// key Redis holds has a TTL.
func TestFaultOutageCounts(t *testing.T) {
	for _, tc := range []struct {
		name       string
		stop, back func(*redistest.Server)
	}{
		{"killed", (*redistest.Server).Kill, (*redistest.Server).Restart},
		{"paused", (*redistest.Server).Pause, (*redistest.Server).Resume},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.StartServer(t, "--appendonly", "yes", "--appendfsync", "always")
			goroutines := runtime.NumGoroutine()
			rdb := newClientWithin(srv.Addr(), outageTimeout)
			rl, err := redislimit.New(context.Background(), rdb, redislimit.Options{})
			if err != nil {
				t.Fatal(err)
			}
			local, err := goimpl.New(goimpl.Options{})
			if err != nil {
				t.Fatal(err)
			}
			lim, err := fallback.New(rl, local, fallback.Options{Failures: 3, OpenFor: 100 * time.Millisecond, Timeout: outageTimeout, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			keys := []string{"k0", "k1", "k2", "k3"}
			admitted := map[string]int{}
			burst(t, lim, keys, 10, admitted)
			if s := lim.Stats(); s.Primary != 40 {
				t.Fatalf("before the outage: %+v; want 40 decisions by Redis", s)
			}
			tc.stop(srv)
			burst(t, lim, keys, 60, admitted)
			down := lim.Stats()
			tc.back(srv)
			if !waitFor(5*time.Second, func() bool {
				burst(t, lim, keys, 1, admitted)
				return lim.Stats().Primary > down.Primary
			}) {
				t.Fatalf("Redis did not decide again: %+v", lim.Stats())
			}
			burst(t, lim, keys, 60, admitted)
			end := lim.Stats()
			t.Logf("while down: %+v; at the end: %+v; admitted %v", down, end, admitted)
			if down.Fallback == 0 || end.Errors != 0 {
				t.Errorf("stats %+v; want decisions by the fallback while Redis was gone, and no errors", end)
			}
			low, high := int(outageLimit.Burst), int(outageLimit.Burst)
			if tc.name == "paused" {
				low, high = low-int(end.PrimarySlow), high+int(end.PrimarySlow)
			}
			for _, k := range keys {
				if n := admitted[k]; n > high || n < low {
					t.Errorf("%s: %d admitted; want %d to %d", k, n, low, high)
				}
			}
			checkTTLs(t, rdb)
			rdb.Close()
			local.Close() // ends the local limiter's sweeper
			if !waitFor(2*time.Second, func() bool { runtime.GC(); return runtime.NumGoroutine() <= goroutines }) {
				buf := make([]byte, 1<<16)
				t.Errorf("%d goroutines after the test, %d before:\n%s", runtime.NumGoroutine(), goroutines, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}

// burst sends n requests for each key, from 8 goroutines, and adds the
// admissions to admitted. Every call must succeed.
func burst(t *testing.T, lim *fallback.Limiter, keys []string, n int, admitted map[string]int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Go(func() {
			for i := w; i < n*len(keys); i += 8 {
				key := keys[i%len(keys)]
				ctx, cancel := context.WithTimeout(context.Background(), 2*outageTimeout)
				res, err := lim.Limit(ctx, limitspec.Request{Key: key, Limit: outageLimit, Cost: 1})
				cancel()
				if err != nil {
					t.Errorf("%s: %v", key, err)
					continue
				}
				if res.Allowed {
					mu.Lock()
					admitted[key]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
}

// checkTTLs fails the test if a key of the Redis rdb talks to has no TTL.
func checkTTLs(t *testing.T, rdb *redis.Client) {
	t.Helper()
	keys, err := rdb.Keys(t.Context(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Error("Redis holds no key")
	}
	for _, k := range keys {
		if d := rdb.PTTL(t.Context(), k).Val(); d <= 0 {
			t.Errorf("%s: PTTL %v; want a TTL", k, d)
		}
	}
}
