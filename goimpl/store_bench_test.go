package goimpl

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkExpiredKeys fills a gcra limiter with many keys at t0, lets
// them all expire (a day passes on the caller's clock), then decides b.N
// requests for 200000 new keys in turn, timing every Allow. It reports the
// heap the filled limiter holds per key; the p99.9, p99.99 and largest
// Allow latency after expiry, how many calls took over a millisecond, and
// how many garbage collections ran during the calls; and the keys and heap
// the limiter still holds at the end. For comparison it then times, for as
// long again and with the same heap held, a loop that does nothing but
// read the clock, and reports its longest step and its steps over a
// millisecond: the pauses that the machine (the OS, other threads, a
// hypervisor) imposes on any code, which no Allow can stay under. One op
// is one decision; run it with a count that keeps it deciding for a few
// seconds, while the expired keys are reclaimed:
//
//	go test -run '^$' -bench ExpiredKeys -benchtime 8000000x ./goimpl
func BenchmarkExpiredKeys(b *testing.B) {
	for _, n := range []int{1_000_000, 4_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) { benchExpiredKeys(b, n) })
	}
}

func benchExpiredKeys(b *testing.B, n int) {
	lat := make([]time.Duration, b.N)
	keys := make([]string, 200000)
	for i := range keys {
		keys[i] = "new:" + strconv.Itoa(i)
	}
	base := heapAlloc()
	l, err := NewGCRA(GCRAParams{Burst: 10, Rate: 10, PeriodMs: 1000})
	if err != nil {
		b.Fatal(err)
	}
	if s, ok := any(l).(interface{ StopSweeper() }); ok {
		defer s.StopSweeper() // the next run's heap figures are its own
	}
	for i := range n {
		if _, err := l.Allow("user:"+strconv.Itoa(i), t0, 1); err != nil {
			b.Fatal(err)
		}
	}
	perKey := float64(heapAlloc()-base) / float64(n)
	later := int64(t0 + 24*3600*1000)
	gcs := gcCycles()
	b.ResetTimer()
	began := time.Now()
	for i := range b.N {
		start := time.Now()
		_, err := l.Allow(keys[i%len(keys)], later+int64(i/100), 1)
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
	b.ReportMetric(float64(l.states.len()), "keys-held")
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

// heapAlloc returns the bytes of live heap after a full collection.
func heapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
