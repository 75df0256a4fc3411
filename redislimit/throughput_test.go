package redislimit_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// BenchmarkThroughput decides GCRA requests of 1 over 10,000 keys
// through one Redis (a throwaway redis-server) on one go-redis client
// (PoolSize 64), from 64, 8 and 2 goroutines, each call sent by itself
// (unbatched) and in batches (the default), by Limiter.Allow and by a
// handle bound to the limit (Bound.Allow), and reports decisions/s, the
// calls per pipeline, and the CPU time per decision of the server (INFO
// cpu) and of this process (the client, getrusage):
//
//	go test -run '^$' -bench Throughput -benchtime 200000x -count 5 ./redislimit
func BenchmarkThroughput(b *testing.B) {
	srv := redistest.StartServer(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true, PoolSize: 64})
	b.Cleanup(func() { rdb.Close() })
	pipelines := &pipelineSizes{}
	rdb.AddHook(pipelines)
	limit := limitspec.GCRA{Burst: 1_000_000, Rate: 1_000_000, Period: time.Second}
	for _, goroutines := range []int{64, 8, 2} {
		for _, bc := range []struct {
			name string
			opts redislimit.Options
		}{
			{"unbatched", redislimit.Options{NoBatching: true}},
			{"batched", redislimit.Options{}},
		} {
			for _, way := range []string{"Limiter", "Bound"} {
				b.Run(fmt.Sprintf("goroutines=%d/%s/%s", goroutines, bc.name, way), func(b *testing.B) {
					allow := allower(b, newLimiter(b, rdb, bc.opts), way, limit)
					throughput(b, rdb, pipelines, goroutines, allow)
				})
			}
		}
	}
}

// allower is the Allow of lim (way "Limiter") or of a handle of lim
// bound to limit ("Bound").
func allower(b *testing.B, lim *redislimit.Limiter, way string, limit limitspec.Limit) func(ctx context.Context, key string) error {
	if way == "Limiter" {
		return func(ctx context.Context, key string) error { _, err := lim.Allow(ctx, key, limit); return err }
	}
	bound, err := lim.Bind(limit)
	if err != nil {
		b.Fatal(err)
	}
	return func(ctx context.Context, key string) error { _, err := bound.Allow(ctx, key); return err }
}

// throughput runs one case of BenchmarkThroughput: allow from goroutines
// goroutines over 10,000 keys.
func throughput(b *testing.B, rdb *redis.Client, pipelines *pipelineSizes, goroutines int, allow func(ctx context.Context, key string) error) {
	b.SetParallelism(goroutines / 2) // on 2 cores
	var n atomic.Int64
	pipelines.reset()
	redisCPU, selfCPU := serverCPU(b, rdb), processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			key := "user" + strconv.Itoa(int(n.Add(1)%10_000))
			if err := allow(context.Background(), key); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	b.ReportMetric(float64((serverCPU(b, rdb)-redisCPU).Nanoseconds())/float64(b.N), "redis-ns/op")
	b.ReportMetric(float64((processCPU()-selfCPU).Nanoseconds())/float64(b.N), "client-ns/op")
	if p := pipelines.pipelines.Load(); p > 0 {
		b.ReportMetric(float64(pipelines.cmds.Load())/float64(p), "calls/pipeline")
	}
}

// pipelineSizes is a go-redis hook that counts the pipelines of script
// calls and their commands (not those go-redis sends to set up a
// connection).
type pipelineSizes struct{ pipelines, cmds atomic.Int64 }

func (p *pipelineSizes) reset() { p.pipelines.Store(0); p.cmds.Store(0) }

func (*pipelineSizes) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (*pipelineSizes) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (p *pipelineSizes) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if name := cmds[0].Name(); name == "evalsha" || name == "eval" || name == "fcall" {
			p.pipelines.Add(1)
			p.cmds.Add(int64(len(cmds)))
		}
		return next(ctx, cmds)
	}
}

// serverCPU is the CPU time the server of rdb has used (INFO cpu).
func serverCPU(b *testing.B, rdb *redis.Client) time.Duration {
	info, err := rdb.Info(b.Context(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for _, f := range []string{"used_cpu_sys", "used_cpu_user"} {
		m := regexp.MustCompile(f + `:([0-9.]+)`).FindStringSubmatch(info)
		if m == nil {
			b.Fatalf("INFO cpu has no %s", f)
		}
		s, _ := strconv.ParseFloat(m[1], 64)
		total += time.Duration(s * float64(time.Second))
	}
	return total
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCall decides requests one at a time, each a whole call to a
// Redis of its own (a throwaway redis-server), by Limiter.Limit and by a
// handle bound to the limit or the policy (BoundPolicy.LimitInto into one
// Result), batched (the default: a lone call is sent at once) and not,
// for one GCRA limit over 10,000 keys and for the ip_user policy (a
// peek, so that it never denies), and reports the client's time and
// allocations per decision, go-redis's included (the server's time is
// in ns/op too):
//
//	go test -run '^$' -bench Call -benchmem ./redislimit
func BenchmarkCall(b *testing.B) {
	srv := redistest.StartServer(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	b.Cleanup(func() { rdb.Close() })
	ipUser, err := limitspec.IPUserPolicy()
	if err != nil {
		b.Fatal(err)
	}
	gcra := limitspec.GCRA{Burst: 1_000_000, Rate: 1_000_000, Period: time.Second}
	ids := map[string]string{"ip": "10.0.0.1", "user": "alice"}
	for _, batching := range []string{"batched", "unbatched"} {
		lim := newLimiter(b, rdb, redislimit.Options{NoBatching: batching == "unbatched"})
		bound, err := lim.Bind(gcra)
		if err != nil {
			b.Fatal(err)
		}
		boundPolicy, err := lim.BindPolicy(ipUser)
		if err != nil {
			b.Fatal(err)
		}
		var res limitspec.Result
		for _, bc := range []struct {
			name   string
			decide func(ctx context.Context, i int) error
		}{
			{"gcra/Limiter", func(ctx context.Context, i int) error {
				_, err := lim.Limit(ctx, limitspec.Request{Key: keyOf(i), Limit: gcra, Cost: 1})
				return err
			}},
			{"gcra/Bound", func(ctx context.Context, i int) error { _, err := bound.Allow(ctx, keyOf(i)); return err }},
			{"ip_user/Limiter", func(ctx context.Context, _ int) error {
				_, err := lim.Limit(ctx, limitspec.Request{Policy: ipUser, IDs: ids})
				return err
			}},
			{"ip_user/Bound", func(ctx context.Context, _ int) error {
				return boundPolicy.LimitInto(ctx, limitspec.Request{IDs: ids}, &res)
			}},
		} {
			b.Run(bc.name+"/"+batching, func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if err := bc.decide(b.Context(), i); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// callKeys are the keys of BenchmarkCall, made before it runs.
var callKeys = func() []string {
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = "user" + strconv.Itoa(i)
	}
	return keys
}()

// keyOf is the key of BenchmarkCall's decision i.
func keyOf(i int) string { return callKeys[i%len(callKeys)] }
