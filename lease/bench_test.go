package lease_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/lease"
	"github.com/limitspec/limitspec/redislimit"
)

// BenchmarkLimit decides requests of 1 on a fixed window of a large
// limit, with leases of 100 (99 of 100 decisions spent from a lease), on
// one key and on 10,000, against the same decisions by the in-process
// primary alone: the cost of a lease's bookkeeping, without a Redis
// round trip. (On a limit whole again sooner than For, such as a GCRA of
// a large burst, each lease ends sooner, and more decisions take one.)
func BenchmarkLimit(b *testing.B) {
	limit := limitspec.FixedWindow{Limit: 1_000_000_000_000, Window: 1000 * time.Hour}
	for _, keys := range []int{1, 10_000} {
		names := make([]string, keys)
		for i := range names {
			names[i] = "user" + strconv.Itoa(i)
		}
		primary, err := goimpl.New(goimpl.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { primary.Close() })
		lim, err := lease.New(primary, lease.Options{Size: 100})
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name string
			lim  limitspec.Limiter
		}{{"lease", lim}, {"primary", primary}} {
			b.Run(c.name+"/keys="+strconv.Itoa(keys), func(b *testing.B) {
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						i++
						if _, err := c.lim.Limit(b.Context(), limitspec.Request{Key: names[i%keys], Limit: limit, Cost: 1}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkRedis decides requests of 1 on 10,000 keys through one Redis
// (a throwaway redis-server), from 64 goroutines on one go-redis client:
// every request sent to Redis, against leases of 10 (one round trip per
// 10 decisions). The fixed window's limit is far above the demand.
func BenchmarkRedis(b *testing.B) {
	srv := redistest.StartServer(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true, PoolSize: 64})
	b.Cleanup(func() { rdb.Close() })
	remote, err := redislimit.New(b.Context(), rdb, redislimit.Options{})
	if err != nil {
		b.Fatal(err)
	}
	leased, err := lease.New(remote, lease.Options{Size: 10})
	if err != nil {
		b.Fatal(err)
	}
	limit := limitspec.FixedWindow{Limit: 1_000_000_000_000, Window: 1000 * time.Hour}
	for _, c := range []struct {
		name string
		lim  limitspec.Limiter
	}{{"redis", remote}, {"lease=10", leased}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetParallelism(32) // 64 goroutines on 2 cores
			var n atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					key := "user" + strconv.Itoa(int(n.Add(1)%10_000))
					if _, err := c.lim.Limit(b.Context(), limitspec.Request{Key: key, Limit: limit, Cost: 1}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}
