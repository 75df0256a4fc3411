package redislimit_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// TestFaultSlotMigration moves the slot of one key from a master of a
// 3-master Cluster to another, one Redis key every 100 ms, while 16
// goroutines decide every algorithm's limit of that key (each one Redis
// key) and the burst_quota policy (two). Every decision is made at one
// instant, so each limit admits exactly its quota however many calls
// there are: 40 for each algorithm's (a burst or capacity of 40), 5 for
// burst_quota (its gcra admits 5 at once, spec/policies.yaml). Every
// call must succeed within its 3 s deadline, and each limit must admit
// exactly its quota: none lost, none counted twice. A single limit's call
// touches one key, which lies on one node or the other (go-redis
// follows ASK to the new one), so that Redis never answers it TRYAGAIN,
// which it gives a call whose keys lie on both; the policy's two keys
// may, for a while, and its calls answered TRYAGAIN are sent again by
// the limiter until its keys are together. Every key ends on the new
// master with a TTL. It runs with batching on (the default: the calls
// of a batch answered TRYAGAIN are sent again, each in a later batch)
// and off, and through handles bound to each limit and the policy
// (batched); and once more with the single limits alone, after which
// the masters' INFO errorstats must count no TRYAGAIN reply at all.
func TestFaultSlotMigration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		via     func(*redislimit.Limiter) decider
		opts    redislimit.Options
		singles bool
	}{
		{"batched", ways[0].via, redislimit.Options{}, false},
		{"unbatched", ways[0].via, redislimit.Options{NoBatching: true}, false},
		{"bound", ways[1].via, redislimit.Options{}, false},
		{"single limits alone", ways[0].via, redislimit.Options{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			slotMigration(t, tc.via, tc.singles, tc.opts)
		})
	}
}

// slotMigration is TestFaultSlotMigration with a limiter of opts,
// deciding by via's decider; with singles, the single limits alone.
func slotMigration(t *testing.T, via func(*redislimit.Limiter) decider, singles bool, opts redislimit.Options) {
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: redistest.StartCluster(t, 3), ContextTimeoutEnabled: true})
	t.Cleanup(func() { cluster.Close() })
	pipelines := &pipelineCounter{}
	cluster.AddHook(pipelines)
	reqs, want, keys := migrationRequests(t, singles)
	m := &migrationLoad{t: t, lim: via(newLimiter(t, cluster, opts)), reqs: reqs, now: time.Now()}
	for i := range reqs { // the keys exist before the move
		if err := m.decide(i); err != nil {
			t.Fatal(err)
		}
	}
	moved := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.decideUntil(moved)
		}()
	}
	dst := migrate(t, cluster, "{mig}", 100*time.Millisecond)
	close(moved)
	wg.Wait()
	for i, w := range want {
		if got := m.admitted[i].Load(); got != w {
			t.Errorf("%s admitted %d during the move; want exactly %d", name(reqs[i]), got, w)
		}
	}
	tryAgain := tryAgainReplies(t, cluster)
	t.Logf("%d calls, %d failed, %d pipelines of several calls, %d TRYAGAIN replies", m.calls.Load(), m.failures.Load(), pipelines.several.Load(), tryAgain)
	if singles && tryAgain != 0 {
		t.Errorf("the masters answered TRYAGAIN %d times to calls of single limits, each of one key, which a move never splits", tryAgain)
	}
	if batched := !opts.NoBatching; batched != (pipelines.several.Load() > 0) {
		t.Errorf("batching on: %v, and %d pipelines of several calls sent", batched, pipelines.several.Load())
	}
	keysWithTTL(t, dst, "{mig}", keys)
}

// migrationRequests are the requests of a slot migration, one per limit
// of the key mig and one of a policy (none with singles), with the
// admissions each must count and the number of keys they keep.
func migrationRequests(t *testing.T, singles bool) (reqs []limitspec.Request, want []int64, keys int) {
	quota, err := limitspec.BurstQuotaPolicy(40)
	if err != nil {
		t.Fatal(err)
	}
	reqs = []limitspec.Request{
		{Key: "mig", Limit: limitspec.FixedWindow{Limit: 40, Window: time.Hour}},
		{Key: "mig", Limit: limitspec.SlidingWindow{Limit: 40, Window: time.Hour}},
		{Key: "mig", Limit: limitspec.SlidingLog{Limit: 40, Window: time.Hour}},
		{Key: "mig", Limit: limitspec.BucketWindow{Limit: 40, Window: time.Hour, Bucket: time.Minute}},
		{Key: "mig", Limit: limitspec.MetaWindow{Limit: 40, Window: time.Hour}},
		{Key: "mig", Limit: limitspec.TokenBucket{Capacity: 40, RefillTokens: 1, Refill: time.Hour}},
		{Key: "mig", Limit: limitspec.GCRA{Burst: 40, Rate: 1, Period: time.Hour}},
		{Key: "mig", Limit: limitspec.LeakyBucket{Capacity: 40, Rate: 1, Period: time.Hour}},
		{Policy: quota, IDs: map[string]string{"user": "mig"}},
	}
	want = []int64{40, 40, 40, 40, 40, 40, 40, 40, 5}
	keys = len(reqs) - 1 + 2 // the policy's limits keep a key each
	if singles {
		reqs, want, keys = reqs[:len(reqs)-1], want[:len(want)-1], len(reqs)-1
	}
	return reqs, want, keys
}

// migrationLoad decides a slot migration's requests, all at one time,
// and counts the calls, their failures and each request's admissions.
type migrationLoad struct {
	t               *testing.T
	lim             decider
	reqs            []limitspec.Request
	now             time.Time
	admitted        [9]atomic.Int64
	calls, failures atomic.Int64
}

// decide decides the request i at cost 1 within a deadline of 3 s.
func (m *migrationLoad) decide(i int) error {
	req := m.reqs[i]
	req.Cost, req.Now = 1, m.now
	cctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	res, err := m.lim.Limit(cctx, req)
	// Past its deadline by a second: a call that waited for the move
	// rather than return at its deadline (a busy machine may be late
	// by some ms to wake it, not by a second).
	if took := time.Since(start); took > 4*time.Second {
		m.t.Errorf("a call took %v, past its 3 s deadline", took)
	}
	m.calls.Add(1)
	if res.Allowed {
		m.admitted[i].Add(1)
	}
	return err
}

// decideUntil decides the requests in turn until moved is closed and
// the calls number eight times the quotas, reporting the first few
// failures.
func (m *migrationLoad) decideUntil(moved <-chan struct{}) {
	for n := 0; ; n++ {
		select {
		case <-moved:
			if m.calls.Load() > 8*int64(len(m.reqs))*40 {
				return
			}
		default:
		}
		if err := m.decide(n % len(m.reqs)); err != nil {
			if m.failures.Add(1) <= 3 {
				m.t.Errorf("a decision during the move: %v", err)
			}
		}
	}
}

// tryAgainReplies is the number of TRYAGAIN replies the cluster's masters
// have given, by their INFO errorstats.
func tryAgainReplies(t *testing.T, cluster *redis.ClusterClient) int64 {
	var n atomic.Int64
	must(t, cluster.ForEachMaster(t.Context(), func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "errorstats").Result()
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "errorstat_TRYAGAIN:count="); ok {
				count, _ := strconv.ParseInt(v, 10, 64)
				n.Add(count)
			}
		}
		return err
	}))
	return n.Load()
}

// name is a request's limit's or policy's name, for messages.
func name(req limitspec.Request) string {
	if req.Policy != nil {
		return req.Policy.Name()
	}
	return req.Limit.Algorithm().String()
}

// migrate moves the slot of key from its master to another, as
// redis-cli --cluster reshard does (IMPORTING, MIGRATING, MIGRATE each
// key, then SETSLOT NODE everywhere), pausing each between keys; it
// returns the client of the new master.
func migrate(t *testing.T, cluster *redis.ClusterClient, key string, each time.Duration) *redis.Client {
	return startMove(t, cluster, key).finish(each)
}

// move is a slot's move from one master to another, started.
type move struct {
	t            *testing.T
	slot         int64
	src, dst     *redis.Client
	all          []*redis.Client // every master
	srcID, dstID string
}

// startMove marks the slot of key IMPORTING on another master than its
// own and MIGRATING on its own, moving no key yet.
func startMove(t *testing.T, cluster *redis.ClusterClient, key string) *move {
	ctx := t.Context()
	m := &move{t: t}
	var err error
	if m.slot, err = cluster.ClusterKeySlot(ctx, key).Result(); err != nil {
		t.Fatal(err)
	}
	if m.src, err = cluster.MasterForKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	if err := cluster.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		m.all = append(m.all, c)
		if m.dst == nil && c.Options().Addr != m.src.Options().Addr {
			m.dst = c
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	m.srcID, m.dstID = m.src.ClusterMyID(ctx).Val(), m.dst.ClusterMyID(ctx).Val()
	must(t, m.dst.Do(ctx, "cluster", "setslot", m.slot, "importing", m.srcID).Err())
	must(t, m.src.Do(ctx, "cluster", "setslot", m.slot, "migrating", m.dstID).Err())
	return m
}

// finish moves the slot's keys one by one, pausing each between them,
// then gives the slot to the new master everywhere, and returns it.
func (m *move) finish(each time.Duration) *redis.Client {
	t, ctx := m.t, m.t.Context()
	host, port, _ := strings.Cut(m.dst.Options().Addr, ":")
	for moved := 0; ; moved++ {
		keys, err := m.src.ClusterGetKeysInSlot(ctx, int(m.slot), 1).Result()
		must(t, err)
		if len(keys) == 0 {
			t.Logf("moved %d keys of slot %d from %s to %s", moved, m.slot, m.src.Options().Addr, m.dst.Options().Addr)
			break
		}
		must(t, m.src.Do(ctx, "migrate", host, port, "", 0, 5000, "keys", keys[0]).Err())
		time.Sleep(each)
	}
	must(t, m.dst.Do(ctx, "cluster", "setslot", m.slot, "node", m.dstID).Err())
	for _, c := range m.all {
		if c != m.dst {
			must(t, c.Do(ctx, "cluster", "setslot", m.slot, "node", m.dstID).Err())
		}
	}
	return m.dst
}

// keysWithTTL fails unless rdb holds at least min keys with key's hash
// tag, each with a TTL.
func keysWithTTL(t *testing.T, rdb *redis.Client, tag string, min int) {
	keys, err := rdb.Keys(t.Context(), tag+"*").Result()
	must(t, err)
	if len(keys) < min {
		t.Errorf("%s holds %d keys of %s (%v); want at least %d", rdb.Options().Addr, len(keys), tag, keys, min)
	}
	for _, k := range keys {
		if ttl := rdb.PTTL(t.Context(), k).Val(); ttl <= 0 {
			t.Errorf("%s: PTTL %v; want a TTL", k, ttl)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, redis.Nil) {
		t.Fatal(err)
	}
}
