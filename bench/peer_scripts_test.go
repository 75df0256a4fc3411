package main

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/redis/go-redis/v9"
)

// TestPeerScripts checks that each hand-written script given a limit
// decides it: on a fresh key, a limit of 3 admits 3 requests at once and
// denies the fourth, as the contract says every limit of 3 does and as
// limitspec's script of the same limit decides (run beside it).
func TestPeerScripts(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	srv, err := startServer("redis-server")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	rdb := redis.NewClient(&redis.Options{Addr: srv.addr})
	defer rdb.Close()
	ctx := context.Background()
	want := []bool{true, true, true, false}
	for _, lim := range []limitspec.Limit{
		limitspec.SlidingWindow{Limit: 3, Window: time.Hour},
		limitspec.TokenBucket{Capacity: 3, RefillTokens: 1, Refill: time.Hour},
		limitspec.LeakyBucket{Capacity: 3, Rate: 1, Period: time.Hour},
		limitspec.BucketWindow{Limit: 3, Window: 10 * time.Second, Bucket: time.Second},
		limitspec.MetaWindow{Limit: 3, Window: time.Hour},
	} {
		ours, err := limitspecDecider(lim, false, byEvalSHA)
		if err != nil {
			t.Fatal(err)
		}
		peers := peersOf(lim)
		if len(peers) == 0 {
			t.Errorf("%s: no peer", lim.Algorithm().Name)
		}
		for _, d := range append(peers, ours) {
			if got := decideInTurn(ctx, t, rdb, d, len(want)); !slices.Equal(got, want) {
				t.Errorf("%s: admitted %v, want %v", d.Name, got, want)
			}
		}
	}
}

// decideInTurn decides n requests of one fresh key by d, one after the
// other, on an emptied server, and returns whether each was admitted.
func decideInTurn(ctx context.Context, t *testing.T, rdb *redis.Client, d *redisDecider, n int) []bool {
	t.Helper()
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := d.load(ctx, rdb); err != nil {
		t.Fatal(err)
	}
	var out []bool
	for range n {
		p := rdb.Pipeline()
		c := d.queue(ctx, p, "user:1", time.Now())
		if _, err := p.Exec(ctx); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		ok, err := d.admitted(c.Val())
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		out = append(out, ok)
	}
	return out
}
