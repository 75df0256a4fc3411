package main

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

// inProcess measures one decision on an existing key among keys, from
// one goroutine and from GOMAXPROCS goroutines, with testing.Benchmark:
// ns/op (the median of rounds, a round measuring every limiter in
// turn), and allocs/op and B/op from one goroutine.
func inProcess(keys, rounds int, benchtime string) (Table, error) {
	t := Table{
		Title: titleInProcess,
		Notes: []string{fmt.Sprintf("testing.Benchmark (benchtime %s; every limiter in turn, %d rounds, the median of each row's ns/op) of a request of cost 1 for one of %s keys, each key decided once before the timer starts, the keys in turn; from one goroutine, and from GOMAXPROCS (%d) goroutines (b.RunParallel, each starting at another key). Every decision admits; each limiter reads the clock itself. The goimpl.Bound rows decide through a handle bound to the limit once (Limiter.Bind), the goimpl.Limiter rows take the limit with each call (Allow). "+
			"x/time/rate is used as its users do: a rate.Limiter per key in a map under a mutex. ulule/limiter's memory store counts fixed windows, so it is compared with limitspec's fixed_window.",
			benchtime, rounds, groupThousands(int64(keys)), runtime.GOMAXPROCS(0))},
		Columns: localColumns,
	}
	rows, err := benchLocal(localLimiters, ids(keys), rounds)
	t.Rows = rows
	return t, err
}

// localColumns are the columns of the in-process figures (benchLocal's
// values).
var localColumns = []Column{{"ns/op, 1 goroutine", Lower}, {"ns/op, GOMAXPROCS goroutines", Lower}, {"allocs/op", Lower}, {"B/op", Lower}}

// benchLocal measures ls on keys, every limiter in turn, rounds rounds:
// a row per limiter of its median ns/op from one goroutine and from
// GOMAXPROCS goroutines, and its allocs/op and B/op from one goroutine
// (the last round's). A limiter's error noted by fail fails it.
func benchLocal(ls []localLimiter, keys []string, rounds int) ([]Row, error) {
	serial, par := make([][]float64, len(ls)), make([][]float64, len(ls))
	allocs := make([]testing.BenchmarkResult, len(ls))
	for range rounds {
		for i, l := range ls {
			var failed atomic.Bool
			s := testing.Benchmark(func(b *testing.B) { benchSerial(b, l, keys, &failed) })
			p := testing.Benchmark(func(b *testing.B) { benchParallel(b, l, keys, &failed) })
			if err := takeFailure(); err != nil {
				return nil, fmt.Errorf("%s: %w", l.Name, err)
			}
			if failed.Load() || s.N == 0 || p.N == 0 {
				return nil, fmt.Errorf("%s: a decision denied; the limit is meant to admit every one", l.Name)
			}
			serial[i], par[i], allocs[i] = append(serial[i], float64(s.NsPerOp())), append(par[i], float64(p.NsPerOp())), s
		}
	}
	var rows []Row
	for i, l := range ls {
		rows = append(rows, Row{Group: l.Group, Name: l.Name, Ours: l.Ours, Values: []float64{
			median(serial[i]), median(par[i]), float64(allocs[i].AllocsPerOp()), float64(allocs[i].AllocedBytesPerOp())}})
	}
	return rows, nil
}

// benchSerial decides b.N requests from one goroutine, the keys in turn,
// after one decision per key.
func benchSerial(b *testing.B, l localLimiter, keys []string, failed *atomic.Bool) {
	allow, stop := l.New()
	defer stop()
	if !touch(allow, keys, failed) {
		return
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if !allow(keys[i%len(keys)]) {
			failed.Store(true)
			return
		}
	}
}

// benchParallel decides b.N requests from GOMAXPROCS goroutines, each
// taking the keys in turn from a key of its own, after one decision per
// key.
func benchParallel(b *testing.B, l localLimiter, keys []string, failed *atomic.Bool) {
	allow, stop := l.New()
	defer stop()
	if !touch(allow, keys, failed) {
		return
	}
	var offset atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(offset.Add(7919))
		for pb.Next() {
			i++
			if !allow(keys[i%len(keys)]) {
				failed.Store(true)
				return
			}
		}
	})
}

// touch decides once for every key; it reports whether all admitted,
// and sets failed when one did not.
func touch(allow func(string) bool, keys []string, failed *atomic.Bool) bool {
	for _, k := range keys {
		if !allow(k) {
			failed.Store(true)
			return false
		}
	}
	return true
}
