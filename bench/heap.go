package main

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"strconv"
)

// heapPerKeyTable measures the heap each in-process limiter holds per
// tracked key.
func heapPerKeyTable(n int) (Table, error) {
	t := Table{
		Title: titleHeap,
		Notes: []string{fmt.Sprintf("Per limiter, a fresh one: the live heap after a full GC (runtime/metrics /gc/heap/live:bytes) before and after one admitted request for each of %s new keys (\"user:0000000\" on, 12 bytes, made for each request and kept by nothing but the limiter), divided by the keys: the key's state, its map entry and the key itself as the limiter keeps it.",
			groupThousands(int64(n)))},
		Columns: []Column{{"bytes per key", Lower}},
	}
	for _, l := range localLimiters {
		if l.Handle {
			continue // the states of the row above
		}
		b, err := heapPerKey(l, n)
		if err != nil {
			return Table{}, err
		}
		t.Rows = append(t.Rows, Row{Group: l.Group, Name: l.Name, Ours: l.Ours, Values: []float64{b}})
	}
	return t, nil
}

// heapPerKey is the live heap l holds per key after n keys (see
// heapPerKeyTable).
func heapPerKey(l localLimiter, n int) (float64, error) {
	allow, stop := l.New()
	defer stop()
	if !allow("warm-up") { // the limiter's own tables, made on first use
		return 0, fmt.Errorf("%s: denied", l.Name)
	}
	before := liveHeap()
	for i := range n {
		if !allow("user:" + pad7(i)) {
			return 0, fmt.Errorf("%s: a decision denied; the limit is meant to admit every one", l.Name)
		}
	}
	after := liveHeap()
	runtime.KeepAlive(allow)
	return (float64(after) - float64(before)) / float64(n), nil
}

// pad7 writes i in seven digits.
func pad7(i int) string {
	s := strconv.Itoa(i)
	for len(s) < 7 {
		s = "0" + s
	}
	return s
}

// liveHeap is the heap held by live objects after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
