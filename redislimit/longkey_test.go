package redislimit_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/redislimit"
)

// TestFaultLongKeys: a 500 KB key and a 500 KB identity value are stored as
// their SHA-256 (kit.StoredKey): no Redis key name is longer than 200
// bytes, one long key keeps its state across calls and another long key
// has its own, in Redis as in memory (a fixed window of 2: the third
// call of one key is denied, the first of the other admitted).
func TestFaultLongKeys(t *testing.T) {
	t.Parallel()
	_, rdb := newClient(t)
	lim := newLimiter(t, rdb, redislimit.Options{})
	mem, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	quota, err := limitspec.BurstQuotaPolicy(2)
	if err != nil {
		t.Fatal(err)
	}
	long, other := strings.Repeat("k", 500_000), strings.Repeat("k", 499_999)+"j"
	now := time.Now()
	for _, l := range []limitspec.Limiter{lim, mem} {
		for _, tc := range []struct {
			req  func(key string) limitspec.Request
			what string
		}{
			{func(k string) limitspec.Request {
				return limitspec.Request{Key: k, Limit: limitspec.FixedWindow{Limit: 2, Window: time.Hour}, Cost: 1, Now: now}
			}, "fixed_window"},
			{func(k string) limitspec.Request {
				return limitspec.Request{Policy: quota, IDs: map[string]string{"user": k}, Cost: 1, Now: now}
			}, "burst_quota"},
		} {
			var got []bool
			for _, k := range []string{long, long, long, other} {
				res, err := l.Limit(t.Context(), tc.req(k))
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, res.Allowed)
			}
			if want := []bool{true, true, false, true}; !slices.Equal(got, want) {
				t.Errorf("%T %s: admitted %v; want %v", l, tc.what, got, want)
			}
		}
	}
	for _, k := range keys(t, rdb) {
		if len(k) > 200 {
			t.Errorf("Redis holds a key of %d bytes (%.60s...); want every key short", len(k), k)
		}
	}
}
