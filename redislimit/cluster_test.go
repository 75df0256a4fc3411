package redislimit_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/oracle"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// TestCluster, on a Redis Cluster of three masters: New with
// Options.Functions loads the library on every master; a policy over several
// identities, or with a constant, is refused by Check, by Limit and by
// BindPolicy with an error that says why, and writes nothing; a policy
// over one identity (burst_quota) is decided as the oracle decides it,
// by EVALSHA and by FCALL, through Limit and through a bound handle, its
// keys in one slot.
func TestCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: redistest.StartCluster(t, 3), ContextTimeoutEnabled: true})
	t.Cleanup(func() { cluster.Close() })
	scripts, functions := newLimiter(t, cluster, redislimit.Options{}), newLimiter(t, cluster, redislimit.Options{Functions: true})
	var masters atomic.Int32
	source := catalogue(t).Source
	err := cluster.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		masters.Add(1)
		libs, err := c.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: limitspec.Catalogue, WithCode: true}).Result()
		if err != nil || len(libs) != 1 || libs[0].Code != source {
			return fmt.Errorf("the master %s does not hold the library after New (%v)", c.Options().Addr, err)
		}
		return nil
	})
	if err != nil || masters.Load() != 3 {
		t.Fatalf("%d masters: %v; want 3, each with the library", masters.Load(), err)
	}
	clusterRefusals(t, cluster, scripts)
	var want []string
	for i, lim := range []*redislimit.Limiter{scripts, functions, scripts, functions} {
		user := fmt.Sprintf("user%d", i)
		clusterBurstQuota(t, lim, ways[i/2].via(lim), user)
		want = append(want, "{"+user+"}:burst:gc:10:1000", "{"+user+"}:daily:sl:86400000")
	}
	if ks := clusterKeys(t, cluster); !slices.Equal(ks, want) {
		t.Errorf("the cluster holds %v; want burst_quota's keys of user0 to user3", ks)
	}
}

// clusterRefusals: ip_user (two identities) and user_global (a
// constant) are refused on a cluster, by Check, by Limit and by
// BindPolicy.
func clusterRefusals(t *testing.T, cluster *redis.ClusterClient, lim *redislimit.Limiter) {
	ipUser, err := limitspec.IPUserPolicy()
	if err != nil {
		t.Fatal(err)
	}
	userGlobal, err := limitspec.UserGlobalPolicy(100)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []limitspec.Request{
		{Policy: ipUser, IDs: map[string]string{"ip": "10.0.0.1", "user": "alice"}, Cost: 1},
		{Policy: userGlobal, IDs: map[string]string{"user": "alice"}, Cost: 1},
	} {
		name := req.Policy.Name()
		checked := lim.Check(req)
		_, decided := lim.Limit(t.Context(), req)
		_, bound := lim.BindPolicy(req.Policy)
		for what, err := range map[string]error{"Check": checked, "Limit": decided, "BindPolicy": bound} {
			if !errors.Is(err, limitspec.ErrBadInput) || !strings.Contains(err.Error(), "policy "+name+" counts several identities or a constant") ||
				!strings.Contains(err.Error(), "Redis Cluster") {
				t.Errorf("%s of %s on a cluster: %v; want ErrBadInput saying it spans several identities on a cluster", what, name, err)
			}
		}
	}
	if ks := clusterKeys(t, cluster); len(ks) != 0 {
		t.Errorf("refused policies wrote %v", ks)
	}
}

// clusterBurstQuota decides burst_quota (daily limit 8) for user by d, a
// decider of lim, 12 requests 40 ms apart, as the oracle does: the burst
// and then the daily quota deny.
func clusterBurstQuota(t *testing.T, lim *redislimit.Limiter, d decider, user string) {
	quota, err := limitspec.BurstQuotaPolicy(8)
	if err != nil {
		t.Fatal(err)
	}
	req := limitspec.Request{Policy: quota, IDs: map[string]string{"user": user}, Cost: 1}
	if err := lim.Check(req); err != nil {
		t.Fatalf("Check of burst_quota on a cluster: %v", err)
	}
	m, err := oracle.NewPolicy("burst_quota", []oracle.PolicyLimit{
		{Name: "burst", Algorithm: "gcra", Identity: "user", Params: map[string]int64{"burst": 5, "rate": 10, "period_ms": 1000}},
		{Name: "daily", Algorithm: "sliding_log", Identity: "user", Params: map[string]int64{"limit": 8, "window_ms": 86_400_000}},
	})
	if err != nil {
		t.Fatal(err)
	}
	binding := map[int]int{}
	for i := range 12 {
		req.Now = at(40 * int64(i))
		res, err := d.Limit(t.Context(), req)
		if err != nil {
			t.Fatalf("%s, request %d: %v", user, i, err)
		}
		want, err := m.Decide(req.IDs, t0+40*int64(i), 1)
		if err != nil {
			t.Fatal(err)
		}
		checkPolicy(t, fmt.Sprintf("%s, request %d", user, i), res, []string{"burst", "daily"}, want)
		if !res.Allowed {
			binding[res.Binding]++
		}
	}
	if binding[0] == 0 || binding[1] == 0 {
		t.Errorf("%s: denials bound by burst %d times, by daily %d times; want both", user, binding[0], binding[1])
	}
}

// clusterKeys lists the keys of every master, sorted.
func clusterKeys(t *testing.T, cluster *redis.ClusterClient) []string {
	var mu sync.Mutex
	var all []string
	err := cluster.ForEachMaster(context.Background(), func(ctx context.Context, c *redis.Client) error {
		ks, err := c.Keys(ctx, "*").Result()
		mu.Lock()
		all = append(all, ks...)
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(all)
	return all
}

// TestClusterBatchLanes: on a Cluster of three masters, calls are
// queued per master. With two calls held in flight on a master (it does
// not answer) and a wait of an hour, a call of another key on that
// master queues behind them, while a call of a key on another master is
// decided at once; released, the calls of the first master are decided,
// once each.
func TestClusterBatchLanes(t *testing.T) {
	t.Parallel()
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: redistest.StartCluster(t, 3), ContextTimeoutEnabled: true})
	t.Cleanup(func() { cluster.Close() })
	h := newHolder()
	cluster.AddHook(h)
	lim := newLimiter(t, cluster, redislimit.Options{BatchSize: 64, BatchWait: time.Hour})
	first := masterOf(t, cluster, "k0")
	var same []string
	other := ""
	for i := 0; len(same) < 3 || other == ""; i++ {
		key := fmt.Sprintf("k%d", i)
		switch m := masterOf(t, cluster, key); {
		case m == first:
			same = append(same, key)
		case other == "":
			other = key
		}
	}
	g := h.hold(same[0], same[1])
	done := []<-chan outcome{goAllow(t.Context(), lim, same[0]), goAllow(t.Context(), lim, same[1])}
	entered(t, g, 2, "the two held calls")
	done = append(done, goAllow(t.Context(), lim, same[2]))
	eventually(t, "the call of the same master queued", func() bool { return redislimit.Queued(lim) == 1 })
	admitted(t, receive(t, goAllow(t.Context(), lim, other), "the call of another master"), "the call of another master")
	close(g.release)
	for i, ch := range done {
		admitted(t, receive(t, ch, same[i]), same[i])
	}
	eventually(t, "no lane left", func() bool { return redislimit.Lanes(lim) == 0 })
}

// masterOf is the address of the master of key's hash tag.
func masterOf(t *testing.T, cluster *redis.ClusterClient, key string) string {
	c, err := cluster.MasterForKey(t.Context(), "{"+key+"}")
	if err != nil {
		t.Fatal(err)
	}
	return c.Options().Addr
}

// TestRingBatched: on a Ring of two shards, 16 goroutines decide 50
// requests each of 20 keys, a fixed window of 10 at one instant, in
// batches per shard: each key admits exactly 10, and pipelines of
// several calls were sent; through Limiter.Limit and through a bound
// handle.
func TestRingBatched(t *testing.T) {
	t.Parallel()
	for _, way := range ways {
		t.Run(way.name, func(t *testing.T) {
			t.Parallel()
			ringBatched(t, way.via)
		})
	}
}

// ringBatched is TestRingBatched, deciding by via's decider.
func ringBatched(t *testing.T, via func(*redislimit.Limiter) decider) {
	ring := redis.NewRing(&redis.RingOptions{ContextTimeoutEnabled: true, Addrs: map[string]string{
		"a": redistest.StartServer(t).Addr(), "b": redistest.StartServer(t).Addr()}})
	t.Cleanup(func() { ring.Close() })
	pipelines := &pipelineCounter{}
	ring.AddHook(pipelines)
	lim := via(newLimiter(t, ring, redislimit.Options{}))
	limit := limitspec.FixedWindow{Limit: 10, Window: time.Hour}
	var admissions [20]atomic.Int64
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				k := (g + i) % 20
				res, err := lim.Limit(t.Context(), limitspec.Request{Key: fmt.Sprintf("r%d", k), Limit: limit, Cost: 1, Now: t0Time})
				if err != nil {
					t.Error(err)
					return
				}
				if res.Allowed {
					admissions[k].Add(1)
				}
			}
		})
	}
	wg.Wait()
	for k := range admissions {
		if n := admissions[k].Load(); n != 10 {
			t.Errorf("key r%d: %d admitted; want 10", k, n)
		}
	}
	if pipelines.several.Load() == 0 {
		t.Error("no pipeline of several calls was sent")
	}
}
