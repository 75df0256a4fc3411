package rls_test

import (
	"context"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/limitspec/limitspec/rls"
)

// BenchmarkShouldRateLimit measures ShouldRateLimit over loopback gRPC,
// from 16 goroutines per CPU, on a fixed window per client address (as the
// reference counts), in process and on a Redis: decisions/s, and the
// p50 and p99 latency of a call.
//
//	cd rls && go test -run '^$' -bench ShouldRateLimit -benchtime 20000x
func BenchmarkShouldRateLimit(b *testing.B) {
	cfg := `
domain: bench
descriptors:
  - key: remote_address
    rate_limit: {unit: second, requests_per_unit: 1000000}
`
	for _, tg := range targets()[:2] {
		b.Run(tg.name, func(b *testing.B) {
			c := newService(b, tg.new(b, newClock()), loadYAML(b, cfg), rls.Options{})
			var next atomic.Int64
			lat := make([]time.Duration, b.N+64)
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb_ *testing.PB) {
				for pb_.Next() {
					i := next.Add(1) - 1
					req := &pb.RateLimitRequest{Domain: "bench", Descriptors: []*rlv3.RateLimitDescriptor{desc("remote_address", "10.0.0."+strconv.Itoa(int(i%256)))}}
					start := time.Now()
					if _, err := c.ShouldRateLimit(context.Background(), req); err != nil {
						b.Error(err)
						return
					}
					lat[i] = time.Since(start)
				}
			})
			b.StopTimer()
			lat = lat[:next.Load()]
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
