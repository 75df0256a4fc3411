package goimpl

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
)

// BenchmarkExistingKey measures one gcra decision on an existing key
// among 10000, from one goroutine and from GOMAXPROCS goroutines, by
// Limit (a new Result.Limits each time) and by LimitInto (each goroutine
// deciding into one Result: no allocation):
//
//	go test -run '^$' -bench ExistingKey -benchmem ./goimpl
//
// The limit is held as a limitspec.Limit, as a service holds its plans: a
// GCRA struct converted at each call would be copied to the heap, since
// the result refers to it.
func BenchmarkExistingKey(b *testing.B) {
	var gcra limitspec.Limit = limitspec.GCRA{Burst: 1_000_000, Rate: 7, Period: time.Second}
	l := newLimiter(b, Options{NoSweeper: true})
	keys := make([]string, 10000)
	for i := range keys {
		keys[i] = "user" + strconv.Itoa(i)
		decide(b, l, limitspec.Request{Key: keys[i], Limit: gcra, Cost: 1, Now: at(t0)})
	}
	ctx := context.Background()
	req := func(i int, now int64) limitspec.Request {
		return limitspec.Request{Key: keys[i%len(keys)], Limit: gcra, Cost: 1, Now: at(now)}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if _, err := l.Limit(ctx, req(i, t0+int64(i)/1000)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		var clock atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				i++
				if _, err := l.Limit(ctx, req(i, t0+clock.Add(1)/1000)); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("serial-into", func(b *testing.B) {
		b.ReportAllocs()
		var res limitspec.Result
		i := 0
		for b.Loop() {
			i++
			if err := l.LimitInto(ctx, req(i, t0+int64(i)/1000), &res); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel-into", func(b *testing.B) {
		b.ReportAllocs()
		var clock atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			var res limitspec.Result
			i := 0
			for pb.Next() {
				i++
				if err := l.LimitInto(ctx, req(i, t0+clock.Add(1)/1000), &res); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkBound measures one gcra decision on an existing key among
// 10000 through a Bound, the limit bound once: by Allow at the limiter's
// clock (its own, as New makes it), from one goroutine and from
// GOMAXPROCS goroutines, and by Limit at a given time, as
// BenchmarkExistingKey decides (no allocation in any):
//
//	go test -run '^$' -bench 'Bound|ExistingKey' -benchmem ./goimpl
func BenchmarkBound(b *testing.B) {
	l := newLimiter(b, Options{NoSweeper: true})
	bound := bind(b, l, limitspec.GCRA{Burst: 1_000_000, Rate: 7, Period: time.Second})
	keys := make([]string, 10000)
	ctx := context.Background()
	for i := range keys {
		keys[i] = "user" + strconv.Itoa(i)
		if _, err := bound.Allow(ctx, keys[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if _, err := bound.Allow(ctx, keys[i%len(keys)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		var offset atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			i := int(offset.Add(7919))
			for pb.Next() {
				i++
				if _, err := bound.Allow(ctx, keys[i%len(keys)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("serial-limit", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			req := limitspec.Request{Key: keys[i%len(keys)], Cost: 1, Now: at(t0 + int64(i)/1000)}
			if _, err := bound.Limit(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAllow measures one decision on an existing key of every
// algorithm, from GOMAXPROCS goroutines over 1024 keys.
func BenchmarkAllow(b *testing.B) {
	for _, alg := range algorithms {
		b.Run(alg, func(b *testing.B) {
			lim := limitOf(alg, largeParams[alg])
			l := newLimiter(b, Options{NoSweeper: true})
			keys := make([]string, 1024)
			for i := range keys {
				keys[i] = fmt.Sprint("user", i)
			}
			var clock atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					i++
					now := t0 + clock.Add(1)/1000
					if _, err := l.Limit(context.Background(), limitspec.Request{Key: keys[i%len(keys)], Limit: lim, Cost: 1, Now: at(now)}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkPolicy measures one decision of each spec policy on existing
// keys (1024 identity values), from GOMAXPROCS goroutines:
//
//	go test -run '^$' -bench Policy -benchmem ./goimpl
func BenchmarkPolicy(b *testing.B) {
	ipUser, err := limitspec.IPUserPolicy()
	if err != nil {
		b.Fatal(err)
	}
	burstQuota, err := limitspec.BurstQuotaPolicy(100_000)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []*limitspec.Policy{ipUser, burstQuota} {
		b.Run(p.Name(), func(b *testing.B) {
			l := newLimiter(b, Options{NoSweeper: true})
			ids := make([]map[string]string, 1024)
			for i := range ids {
				ids[i] = map[string]string{}
				for _, name := range p.Identities() {
					ids[i][name] = fmt.Sprint(name, i)
				}
			}
			var clock atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					i++
					now := t0 + clock.Add(1)*10 // 100 decisions a second in all: within every limit
					if _, err := l.Limit(context.Background(), limitspec.Request{Policy: p, IDs: ids[i%len(ids)], Cost: 1, Now: at(now)}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkHeapPerKey reports the heap a limiter holds per tracked key:
// n gcra keys ("user:0" to "user:999999", the caller's strings, live
// throughout and not counted), each decided once; the live heap after a
// collection, less the heap before the limiter was made, over n. It
// counts the limiter's whole store: each key's copy of its name, its
// state, and the maps and chunks that find them.
//
//	go test -run '^$' -bench HeapPerKey -benchtime 1x ./goimpl
func BenchmarkHeapPerKey(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			keys := make([]string, n)
			for i := range keys {
				keys[i] = "user:" + strconv.Itoa(i)
			}
			gcra := limitspec.GCRA{Burst: 10, Rate: 10, Period: time.Second}
			var perKey float64
			for b.Loop() {
				base := heapAlloc()
				l := newLimiter(b, Options{NoSweeper: true})
				for _, k := range keys {
					decide(b, l, limitspec.Request{Key: k, Limit: gcra, Cost: 1, Now: at(t0)})
				}
				perKey = float64(heapAlloc()-base) / float64(n)
				runtime.KeepAlive(l)
			}
			b.ReportMetric(perKey, "heap-B/key")
		})
	}
}

// BenchmarkExpiredKeys fills a limiter with many gcra keys at t0, lets
// them all expire (a day passes on the caller's clock), then decides b.N
// requests for 200000 new keys in turn, timing every decision. It reports
// the heap the filled limiter holds per key; the p99.9, p99.99 and
// largest latency after expiry, how many calls took over a millisecond,
// and how many garbage collections ran during the calls; and the keys and
// heap the limiter still holds at the end. For comparison it then times,
// for as long again and with the same heap held, a loop that does nothing
// but read the clock, and reports its longest step and its steps over a
// millisecond: the pauses that the machine (the OS, other threads, a
// hypervisor) imposes on any code, which no decision can stay under. One
// op is one decision; run it with a count that keeps it deciding for a
// few seconds, while the expired keys are reclaimed:
//
//	go test -run '^$' -bench ExpiredKeys -benchtime 8000000x ./goimpl
func BenchmarkExpiredKeys(b *testing.B) {
	for _, n := range []int{1_000_000, 4_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) { benchExpiredKeys(b, n) })
	}
}

// benchExpiredKeys is BenchmarkExpiredKeys with n keys to expire.
func benchExpiredKeys(b *testing.B, n int) {
	lat := make([]time.Duration, b.N)
	keys := make([]string, 200000)
	for i := range keys {
		keys[i] = "new:" + strconv.Itoa(i)
	}
	gcra := limitspec.GCRA{Burst: 10, Rate: 10, Period: time.Second}
	ctx := context.Background()
	base := heapAlloc()
	l := newLimiter(b, Options{})
	store := probeOf(b, l, gcra)
	defer store.StopSweeper() // the next run's heap figures are its own
	for i := range n {
		decide(b, l, limitspec.Request{Key: "user:" + strconv.Itoa(i), Limit: gcra, Cost: 1, Now: at(t0)})
	}
	perKey := float64(heapAlloc()-base) / float64(n)
	later := int64(t0 + 24*3600*1000)
	gcs := gcCycles()
	b.ResetTimer()
	began := time.Now()
	for i := range b.N {
		req := limitspec.Request{Key: keys[i%len(keys)], Limit: gcra, Cost: 1, Now: at(later + int64(i/100))}
		start := time.Now()
		_, err := l.Limit(ctx, req)
		lat[i] = time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	gcs = gcCycles() - gcs
	idleMax, idleSlow := clockSteps(time.Since(began))
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*999/1000].Nanoseconds()), "p99.9-ns")
	b.ReportMetric(float64(lat[len(lat)*9999/10000].Nanoseconds()), "p99.99-ns")
	b.ReportMetric(float64(lat[len(lat)-1].Nanoseconds()), "max-ns")
	slow, _ := slices.BinarySearch(lat, time.Millisecond+1)
	b.ReportMetric(float64(len(lat)-slow), "calls>1ms")
	b.ReportMetric(float64(gcs), "gc-cycles")
	b.ReportMetric(float64(idleMax.Nanoseconds()), "idle-max-ns")
	b.ReportMetric(float64(idleSlow), "idle-steps>1ms")
	b.ReportMetric(perKey, "heap-B/key")
	b.ReportMetric(float64(store.Len()), "keys-held")
	b.ReportMetric(float64(int64(heapAlloc())-int64(base))/(1<<20), "end-heap-MB")
	runtime.KeepAlive(l)
	runtime.KeepAlive(keys)
	runtime.KeepAlive(lat)
}

// clockSteps reads the clock back to back for d and returns the longest
// step between two readings and how many steps took over a millisecond.
func clockSteps(d time.Duration) (longest time.Duration, slow int) {
	start := time.Now()
	for prev := start; prev.Sub(start) < d; {
		now := time.Now()
		step := now.Sub(prev)
		longest = max(longest, step)
		if step > time.Millisecond {
			slow++
		}
		prev = now
	}
	return longest, slow
}

// gcCycles returns the number of garbage collections completed so far.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// BenchmarkRequestID is the price in process of a request id
// (docs/semantics.md, "Request ids"): gcra on existing keys as
// BenchmarkExistingKey/serial decides it, without an id and with a new
// id on every call (its result remembered for REQUEST_MS), and the
// retries of one remembered id on one key, answered from memory.
//
//	go test -run '^$' -bench RequestID -benchmem ./goimpl
func BenchmarkRequestID(b *testing.B) {
	var gcra limitspec.Limit = limitspec.GCRA{Burst: 1_000_000, Rate: 7, Period: time.Second}
	l := newLimiter(b, Options{NoSweeper: true})
	keys := make([]string, 10000)
	ids := make([]string, 1<<16)
	for i := range keys {
		keys[i] = "user" + strconv.Itoa(i)
		decide(b, l, limitspec.Request{Key: keys[i], Limit: gcra, Cost: 1, Now: at(t0)})
	}
	for i := range ids {
		ids[i] = "req-" + strconv.Itoa(i)
	}
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		id   func(i int) string
	}{
		{"none", func(int) string { return "" }},
		{"new", func(i int) string { return ids[i%len(ids)] }}, // with key i%10000: new until i passes 40,960,000
		{"retried", func(int) string { return ids[0] }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				key := keys[i%len(keys)]
				if bc.name == "retried" {
					key = keys[0]
				}
				req := limitspec.Request{Key: key, Limit: gcra, Cost: 1, Now: at(t0 + int64(i)/1000), ID: bc.id(i)}
				if _, err := l.Limit(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The price of a policy, of holds and of their operations, beside the
// reference, gcra decided alone by a bound handle on existing keys
// (BenchmarkBoundGCRA): every benchmark below decides on the same 10000
// keys, in turn, at the same times, from one goroutine, through handles
// bound once (Limiter.BindPolicy), into one Result (LimitInto, HoldInto):
//
//	go test -run '^$' -bench 'BoundGCRA|Policy|Hold|Reserve' -benchmem ./goimpl

// benchGCRA is the limit of the benchmarks of policies and holds: it
// admits every request they make.
var benchGCRA limitspec.Limit = limitspec.GCRA{Burst: 1_000_000, Rate: 7, Period: time.Second}

// benchKeys are the keys the benchmarks of policies and holds decide, in
// turn, and benchIDs their identity values.
func benchKeys() ([]string, []map[string]string) {
	keys := make([]string, benchN)
	ids := make([]map[string]string, len(keys))
	for i := range keys {
		keys[i] = "user" + strconv.Itoa(i)
		ids[i] = map[string]string{"user": keys[i]}
	}
	return keys, ids
}

var benchN = 10000

// benchAt is the time of the benchmarks' i-th call.
func benchAt(i int) time.Time { return at(t0 + int64(i)/1000) }

// BenchmarkBoundGCRA is the reference: one gcra decision on an existing
// key through a Bound, by Limit at a given time.
func BenchmarkBoundGCRA(b *testing.B) {
	l := newLimiter(b, Options{NoSweeper: true})
	bound := bind(b, l, benchGCRA)
	keys, _ := benchKeys()
	ctx := context.Background()
	for i, k := range keys {
		if _, err := bound.Limit(ctx, limitspec.Request{Key: k, Cost: 1, Now: benchAt(i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := bound.Limit(ctx, limitspec.Request{Key: keys[i%len(keys)], Cost: 1, Now: benchAt(i)}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPolicy is a policy of the one limit benchGCRA per user, a holding
// one with holds, bound to a new limiter, its keys decided once.
func benchPolicy(tb testing.TB, holds bool) (*BoundPolicy, []map[string]string) {
	p, err := limitspec.NewPolicy("one", limitspec.PolicyLimit{Name: "g", Limit: benchGCRA, Identity: "user"})
	if err != nil {
		tb.Fatal(err)
	}
	if holds {
		p = p.WithHolds()
	}
	l := newLimiter(tb, Options{NoSweeper: true})
	bp, err := l.BindPolicy(p)
	if err != nil {
		tb.Fatal(err)
	}
	_, ids := benchKeys()
	var res limitspec.Result
	for i := range ids {
		if err := bp.LimitInto(context.Background(), limitspec.Request{IDs: ids[i], Cost: 1, Now: benchAt(i)}, &res); err != nil {
			tb.Fatal(err)
		}
	}
	return bp, ids
}

// BenchmarkBoundPolicyOneGCRA decides a policy of one gcra limit through
// its bound handle, as BenchmarkBoundGCRA decides the limit alone.
func BenchmarkBoundPolicyOneGCRA(b *testing.B) {
	bp, ids := benchPolicy(b, false)
	ctx := context.Background()
	var res limitspec.Result
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := bp.LimitInto(ctx, limitspec.Request{IDs: ids[i%len(ids)], Cost: 1, Now: benchAt(i)}, &res); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHoldingDecision decides the same policy with holds, none
// live: the price of counting them.
func BenchmarkHoldingDecision(b *testing.B) {
	bp, ids := benchPolicy(b, true)
	ctx := context.Background()
	var res limitspec.Result
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := bp.LimitInto(ctx, limitspec.Request{IDs: ids[i%len(ids)], Cost: 1, Now: benchAt(i)}, &res); err != nil {
			b.Fatal(err)
		}
	}
}

// benchHoldIDs are the hold ids of the benchmarks, used in turn.
func benchHoldIDs() []string {
	ids := make([]string, 1<<16)
	for i := range ids {
		ids[i] = "job-" + strconv.Itoa(i)
	}
	return ids
}

// BenchmarkReserveCommit runs one reserve of 1 and its commit of 1 on
// the same policy with holds: one op is the pair. Its clock moves 1 ms a
// pair, so that each commit remembered for its retries leaves its reach
// after 120,000 pairs (each key keeps about a dozen): a steady state, as
// a service keeps the commits of its last two minutes.
func BenchmarkReserveCommit(b *testing.B) {
	bp, ids := benchPolicy(b, true)
	holdIDs := benchHoldIDs()
	ctx := context.Background()
	var res limitspec.Result
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		req := limitspec.Request{IDs: ids[i%len(ids)], Cost: 1, Now: at(t0 + int64(i))}
		h := limitspec.Hold{Op: limitspec.Reserve, ID: holdIDs[i%len(holdIDs)], For: time.Minute}
		if err := bp.HoldInto(ctx, req, h, &res); err != nil || !res.Allowed {
			b.Fatal(err, res.Allowed)
		}
		h.Op, h.For = limitspec.Commit, 0
		if err := bp.HoldInto(ctx, req, h, &res); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReserveRelease runs one reserve of 1 and its release on one
// key that holds n other holds live, far from their end (made before
// the timer): one op is the pair, whose price must not grow with n.
func BenchmarkReserveRelease(b *testing.B) {
	for _, n := range []int{10, 1000, 20000} {
		b.Run(fmt.Sprintf("live=%d", n), func(b *testing.B) {
			bp, _ := benchPolicy(b, true)
			ids := map[string]string{"user": "busy"}
			ctx := context.Background()
			var res limitspec.Result
			for i := range n {
				h := limitspec.Hold{Op: limitspec.Reserve, ID: "live-" + strconv.Itoa(i), For: 24 * time.Hour}
				if err := bp.HoldInto(ctx, limitspec.Request{IDs: ids, Cost: 1, Now: at(t0 + int64(i))}, h, &res); err != nil || !res.Allowed {
					b.Fatal(err, res.Allowed)
				}
			}
			holdIDs := benchHoldIDs()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				req := limitspec.Request{IDs: ids, Cost: 1, Now: at(t0 + int64(n) + int64(i)/1000)}
				h := limitspec.Hold{Op: limitspec.Reserve, ID: holdIDs[i%len(holdIDs)], For: time.Minute}
				if err := bp.HoldInto(ctx, req, h, &res); err != nil || !res.Allowed {
					b.Fatal(err, res.Allowed)
				}
				h.Op, h.For, req.Cost = limitspec.Release, 0, 0
				if err := bp.HoldInto(ctx, req, h, &res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
