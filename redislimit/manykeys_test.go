package redislimit_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// TestFaultManyKeys decides 100,000 keys (by 16 goroutines, in
// batches), twice: every key Redis then holds has a TTL, and the second
// round leaves the goroutines as they were once its last batch has
// landed (no lane left), and the heap within 8 MB of the first's (a
// limiter that kept something per key would grow by it). It does not
// run in parallel with the package's other tests: the heap is the
// process's, and theirs would count in it (on a busy host, where they
// last longer, it did: +13.6 MB).
func TestFaultManyKeys(t *testing.T) {
	_, rdb := newClient(t)
	lim := newLimiter(t, rdb, redislimit.Options{})
	limit := limitspec.GCRA{Burst: 5, Rate: 1, Period: time.Minute}
	round := func() {
		var wg sync.WaitGroup
		for g := 0; g < 16; g++ {
			wg.Go(func() {
				for i := g; i < 100_000; i += 16 {
					if _, err := lim.Allow(context.Background(), fmt.Sprintf("user%d", i), limit); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		eventually(t, "no lane left", func() bool { return redislimit.Lanes(lim) == 0 })
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	round()
	goroutines, before := runtime.NumGoroutine(), heap()
	round()
	g := runtime.NumGoroutine()
	for deadline := time.Now().Add(10 * time.Second); g > goroutines && time.Now().Before(deadline); g = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond) // a flight's goroutine returning after its last landing
	}
	if after := heap(); g > goroutines || after > before+8<<20 {
		t.Errorf("after a second round: %d goroutines (%d before), heap %d B (%d before)", g, goroutines, after, before)
	}
	if n := rdb.DBSize(t.Context()).Val(); n != 100_000 {
		t.Errorf("Redis holds %d keys; want 100000", n)
	}
	var cursor uint64
	for {
		keys, next, err := rdb.Scan(t.Context(), cursor, "*", 5000).Result()
		if err != nil {
			t.Fatal(err)
		}
		pipe := rdb.Pipeline()
		ttls := make([]*redis.DurationCmd, len(keys))
		for i, k := range keys {
			ttls[i] = pipe.PTTL(t.Context(), k)
		}
		if _, err := pipe.Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		for i, d := range ttls {
			if d.Val() <= 0 {
				t.Fatalf("%s: PTTL %v; want a TTL", keys[i], d.Val())
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
}
