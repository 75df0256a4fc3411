package goimpl

import (
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestTmpMigrateCost(t *testing.T) {
	for _, n := range []int{62500, 250000} {
		for _, batch := range []int{8, 256} {
			var sh shard[expiresAt]
			sh.cur.m = map[string]*entry[expiresAt]{}
			for i := range n {
				sh.cur.add("user:"+strconv.Itoa(i), &entry[expiresAt]{expiresAt{t0}})
			}
			sh.begin()
			var d []time.Duration
			for sh.old.m != nil {
				s := time.Now()
				sh.migrate(batch, t0+1)
				d = append(d, time.Since(s))
			}
			slices.Sort(d)
			var sum time.Duration
			for _, x := range d {
				sum += x
			}
			t.Logf("n=%d batch=%d calls=%d total=%v p99=%v max=%v top5=%v", n, batch, len(d), sum, d[len(d)*99/100], d[len(d)-1], d[len(d)-5:])
		}
	}
}
