package redislimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// TestFaultSlotMoveNewKeys: while a slot migrates, Redis runs a call of
// several keys only on a node that holds them all, and answers TRYAGAIN
// (running nothing) while some exist there and others do not: a call
// with a new request key (a request id's), or whose policy's holds keys
// do not exist yet, is refused so until the move ends, however long it
// lasts. The slot of {mv} is marked migrating and importing, its keys
// still on the old master, and held so:
//
//   - a gcra limit's decision with a request id of the limiter's own
//     (Options.RequestIDs), each a new request key, is sent again
//     without its id after the first TRYAGAIN, and decided: one key,
//     which a move never delays (before, every such call waited for its
//     whole deadline and failed);
//   - burst_quota, a policy whose two keys exist, is decided;
//   - a reserve of a holding policy, whose holds keys do not exist,
//     fails at its deadline with ErrUnavailable, charging nothing.
//
// Once the keys have moved and the slot is the new master's, the
// reserve is admitted, and the policy finds nothing held or counted
// but that reserve.
func TestFaultSlotMoveNewKeys(t *testing.T) {
	t.Parallel()
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: redistest.StartCluster(t, 3), ContextTimeoutEnabled: true})
	t.Cleanup(func() { cluster.Close() })
	lim := newLimiter(t, cluster, redislimit.Options{})
	withIDs := newLimiter(t, cluster, redislimit.Options{RequestIDs: true})
	quota, err := limitspec.BurstQuotaPolicy(40)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := limitspec.NewPolicy("jobs",
		limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: 3}, Identity: "tenant"},
		limitspec.PolicyLimit{Name: "hour", Limit: limitspec.FixedWindow{Limit: 100, Window: time.Hour}, Identity: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	gcra := limitspec.Request{Key: "mv", Limit: limitspec.GCRA{Burst: 100, Rate: 1, Period: time.Hour}, Cost: 1}
	burst := limitspec.Request{Policy: quota, IDs: map[string]string{"user": "mv"}, Cost: 1}
	job := limitspec.Request{Policy: jobs.WithHolds(), IDs: map[string]string{"tenant": "mv"}, Cost: 1}
	const deadline = 500 * time.Millisecond
	within := func(f func(ctx context.Context) (limitspec.Result, error)) (limitspec.Result, error, time.Duration) {
		ctx, cancel := context.WithTimeout(t.Context(), deadline)
		defer cancel()
		start := time.Now()
		res, err := f(ctx)
		return res, err, time.Since(start)
	}
	decide := func(d *redislimit.Limiter, req limitspec.Request) func(context.Context) (limitspec.Result, error) {
		return func(ctx context.Context) (limitspec.Result, error) { return d.Limit(ctx, req) }
	}
	reserve := func(id string) func(context.Context) (limitspec.Result, error) {
		return func(ctx context.Context) (limitspec.Result, error) {
			return lim.Hold(ctx, job, limitspec.Hold{Op: limitspec.Reserve, ID: id, For: time.Minute})
		}
	}
	for _, f := range []func(context.Context) (limitspec.Result, error){decide(withIDs, gcra), decide(lim, burst)} {
		if res, err, _ := within(f); err != nil || !res.Allowed { // the keys exist before the move
			t.Fatalf("before the move: %+v, %v", res, err)
		}
	}
	m := startMove(t, cluster, "{mv}")
	for _, tc := range []struct {
		name string
		f    func(context.Context) (limitspec.Result, error)
	}{{"gcra, request ids of the limiter's", decide(withIDs, gcra)}, {"burst_quota", decide(lim, burst)}} {
		for i := range 4 { // burst_quota admits 5 at once: the first, and these
			if res, err, took := within(tc.f); err != nil || !res.Allowed {
				t.Errorf("%s, decision %d during the move: %+v, %v after %v; want admitted", tc.name, i, res, err, took)
			}
		}
	}
	res, err, took := within(reserve("a"))
	if !errors.Is(err, limitspec.ErrUnavailable) || took > deadline+time.Second {
		t.Errorf("a reserve during the move, its holds keys new: %+v, %v after %v; want ErrUnavailable (TRYAGAIN) at its deadline, %v", res, err, took, deadline)
	}
	m.finish(0)
	if res, err, _ := within(reserve("b")); err != nil || !res.Allowed {
		t.Fatalf("a reserve after the move: %+v, %v; want admitted", res, err)
	}
	peek := job
	peek.Cost, peek.Peek = 0, true
	res, err, _ = within(decide(lim, peek))
	if err != nil || res.Limits[0].Remaining != 2 || res.Limits[1].Remaining != 99 {
		t.Errorf("after the move: %+v, %v; want 2 slots and 99 of the hour left (b's hold alone: a's reserve charged nothing)", res, err)
	}
}
