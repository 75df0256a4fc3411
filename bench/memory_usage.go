package main

import (
	"context"
	"fmt"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/redis/go-redis/v9"
	"github.com/throttled/throttled/v2"
	goredisstore "github.com/throttled/throttled/v2/store/goredisstore.v9"
)

// memoryID is the identity whose keys are measured.
const memoryID = "user:12345"

// memoryUsage measures MEMORY USAGE of the keys of one admitted decision
// on a fresh identity, for limitspec's O(1) algorithms and their peers.
func memoryUsage(ctx context.Context, rdb *redis.Client) (Table, error) {
	t := Table{
		Title:   titleRedisMemory,
		Notes:   []string{fmt.Sprintf("MEMORY USAGE key SAMPLES 0 (the key's name included) after one admitted request of the identity %q on an emptied server, summed over the keys of its state (one key each here).", memoryID)},
		Columns: []Column{{"bytes", Lower}},
	}
	peers := map[string][]*redisDecider{"gcra": {redisRateDecider()}, "fixed_window": {incrDecider()}}
	for _, lim := range limits {
		if !constantSpace(lim) {
			continue
		}
		d, err := limitspecDecider(lim, false, byEvalSHA)
		if err != nil {
			return Table{}, err
		}
		for _, d := range append([]*redisDecider{d}, peers[d.Group]...) {
			row, err := keyBytes(ctx, rdb, d)
			if err != nil {
				return Table{}, err
			}
			t.Rows = append(t.Rows, row)
		}
		if d.Group == "gcra" {
			row, err := throttledKeyBytes(ctx, rdb)
			if err != nil {
				return Table{}, err
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t, nil
}

// constantSpace says whether lim's state is a few integers whatever its
// limit (README, "Choosing an algorithm").
func constantSpace(lim limitspec.Limit) bool {
	switch lim.Algorithm().Name {
	case "gcra", "token_bucket", "leaky_bucket", "fixed_window", "sliding_window":
		return true
	}
	return false
}

// keyBytes decides once for memoryID by d and sums its keys' memory.
func keyBytes(ctx context.Context, rdb *redis.Client, d *redisDecider) (Row, error) {
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return Row{}, err
	}
	if err := d.load(ctx, rdb); err != nil {
		return Row{}, err
	}
	now := time.Now()
	keys := d.keys(memoryID, now)
	if err := drive(ctx, rdb, d, decisions{IDs: []string{memoryID}, To: 1, Clients: 1, Depth: 1, Clock: func(int) time.Time { return now }}); err != nil {
		return Row{}, err
	}
	n, err := sumMemory(ctx, rdb, keys)
	return Row{Group: d.Group, Name: fmt.Sprintf("%s: `%s`", d.Name, keys[0]), Ours: d.Ours, Values: []float64{n}}, err
}

// throttledKeyBytes decides once for memoryID by throttled's GCRA on its
// go-redis v9 store and reads its key's memory.
func throttledKeyBytes(ctx context.Context, rdb *redis.Client) (Row, error) {
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return Row{}, err
	}
	store, err := goredisstore.NewCtx(rdb, "throttled:")
	if err != nil {
		return Row{}, err
	}
	rl, err := throttled.NewGCRARateLimiterCtx(store, throttledQuota)
	if err != nil {
		return Row{}, err
	}
	if limited, _, err := rl.RateLimitCtx(ctx, memoryID, 1); err != nil || limited {
		return Row{}, fmt.Errorf("throttled: limited %v, %v", limited, err)
	}
	key := "throttled:" + memoryID
	n, err := sumMemory(ctx, rdb, []string{key})
	return Row{Group: "gcra", Name: fmt.Sprintf("throttled v2 GCRA, goredisstore.v9: `%s`", key), Values: []float64{n}}, err
}

// sumMemory sums MEMORY USAGE ... SAMPLES 0 over keys; each must exist.
func sumMemory(ctx context.Context, rdb *redis.Client, keys []string) (float64, error) {
	var sum int64
	for _, k := range keys {
		n, err := rdb.MemoryUsage(ctx, k, 0).Result()
		if err != nil {
			return 0, fmt.Errorf("MEMORY USAGE %s: %w", k, err)
		}
		sum += n
	}
	return float64(sum), nil
}
