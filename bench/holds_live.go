package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/redis/go-redis/v9"
)

// The rows of live holds measure whether a call's cost grows with the
// holds live on its key: a reserve 1 + release pair of a slot of
// slotPolicy (Amount slots, so that every reserve fits) on a key that
// already holds n holds of its own ids, for each n of liveHoldCounts,
// on Redis and in process. The holds are made before the measurement,
// on each of a few keys (the -hold-keys flag), and last liveHoldFor,
// so that none ends during a run; a key keeps n live holds through the
// run, each pair releasing what it reserved, which is checked after.

// liveHoldCounts are the live holds on a key of those rows; the rows'
// values are compared with the first's.
var liveHoldCounts = []int{10, 1_000, 20_000}

// liveHoldFor is how long each of those holds lasts: longer than any
// run.
const liveHoldFor = time.Hour

// liveBatch is how many reserves making the live holds of a key are
// sent in one pipeline on Redis.
const liveBatch = 1_000

// liveRow names the row of n live holds.
func liveRow(n int) string {
	return fmt.Sprintf("a slot of a holding policy of one concurrency limit, acquire (reserve 1) + release: a pair, %s live holds on its key", groupThousands(int64(n)))
}

// groupLive is the group of the rows of live holds, compared with the
// row of the fewest.
var groupLive = fmt.Sprintf("with %s live holds", groupThousands(int64(liveHoldCounts[0])))

// liveKeys are the identity values of the rows of live holds: k keys.
func liveKeys(k int) []string {
	out := make([]string, k)
	for i := range out {
		out[i] = fmt.Sprintf("held:%03d", i)
	}
	return out
}

// liveHoldIDs are the ids of the live holds, each of 36 bytes as
// member's, made once: the first n are a key's n holds (the same ids
// on every key, each key's holds its own).
var liveHoldIDs = func() []string {
	out := make([]string, slices.Max(liveHoldCounts))
	for i := range out {
		out[i] = member()
	}
	return out
}()

// liveDeciders are the Redis rows of live holds, by the composed script
// of slotPolicy (composedCall), each on keys: before each round's
// measurement, every key is given its n live holds (holdOnRedis), and
// after it, checked to hold them still.
func liveDeciders(keys []string) ([]*redisDecider, error) {
	cc, err := newComposedCall(slotPolicy)
	if err != nil {
		return nil, err
	}
	var out []*redisDecider
	for _, n := range liveHoldCounts {
		d := cc.decider(liveRow(n)+": "+viaComposedPair, acquireRelease)
		d.Group, d.Ours, d.IDs = groupLive, n != liveHoldCounts[0], keys
		d.prepare = func(ctx context.Context, rdb *redis.Client, ids []string) error {
			return holdOnRedis(ctx, rdb, cc, ids, n)
		}
		d.verify = func(ctx context.Context, rdb *redis.Client, ids []string) error {
			return checkLiveOnRedis(ctx, rdb, cc, ids, n)
		}
		out = append(out, d)
	}
	return out, nil
}

// holdOnRedis gives each of ids n live holds (liveHoldIDs), by reserves
// of 1 for liveHoldFor sent in pipelines of liveBatch, the keys at once;
// each must admit. It then checks them (checkLiveOnRedis).
func holdOnRedis(ctx context.Context, rdb *redis.Client, cc *composedCall, ids []string, n int) error {
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { errs[i] = holdKeyOnRedis(ctx, rdb, cc, id, n) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return checkLiveOnRedis(ctx, rdb, cc, ids, n)
}

// holdKeyOnRedis gives id's key its n live holds (see holdOnRedis).
func holdKeyOnRedis(ctx context.Context, rdb *redis.Client, cc *composedCall, id string, n int) error {
	ks, reserve := cc.keys(id), holdCall{Op: limitspec.Reserve.String(), Cost: 1, For: liveHoldFor}
	for start := 0; start < n; start += liveBatch {
		pipe := rdb.Pipeline()
		ms := strconv.FormatInt(time.Now().UnixMilli(), 10)
		var cmds []*redis.Cmd
		for _, hold := range liveHoldIDs[start:min(start+liveBatch, n)] {
			cmds = append(cmds, cc.queue(ctx, pipe, ks, ms, hold, reserve))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("making %d live holds on %s: %w", n, id, err)
		}
		for _, c := range cmds {
			if ok, err := policyAdmits(c.Val()); err != nil || !ok {
				return fmt.Errorf("making %d live holds on %s: a reserve not admitted (%v): %v", n, id, err, c.Val())
			}
		}
	}
	return nil
}

// checkLiveOnRedis checks that each of ids holds n live holds: a
// decision of cost 1 finds Amount - n - 1 slots left.
func checkLiveOnRedis(ctx context.Context, rdb *redis.Client, cc *composedCall, ids []string, n int) error {
	decide := holdCall{Op: "decide", Cost: 1}
	for _, id := range ids {
		ms := strconv.FormatInt(time.Now().UnixMilli(), 10)
		reply, err := rdb.EvalSha(ctx, cc.script.SHA1, cc.keys(id), decide.argv(ms, "")...).Result()
		if err != nil {
			return fmt.Errorf("checking the live holds of %s: %w", id, err)
		}
		ints, err := policyReply(reply)
		if err != nil {
			return fmt.Errorf("checking the live holds of %s: %w", id, err)
		}
		if err := slotsLeft(id, ints[3], n); err != nil {
			return err
		}
	}
	return nil
}

// slotsLeft checks that a decision of cost 1 on id's key, which left
// remaining slots, found n live holds there.
func slotsLeft(id string, remaining int64, n int) error {
	if want := int64(Amount - n - 1); remaining != want {
		return fmt.Errorf("%s: a decision of cost 1 finds %d slots left, want %d (%d live holds)", id, remaining, want, n)
	}
	return nil
}

// liveHoldLimiters are the in-process rows of live holds, by
// goimpl.Limiter.Hold on keys (memoryLiveHolds).
func liveHoldLimiters(keys []string) []localLimiter {
	var out []localLimiter
	for _, n := range liveHoldCounts {
		out = append(out, localLimiter{groupLive, liveRow(n) + ": " + viaLimiterHold, n != liveHoldCounts[0], memoryLiveHolds(keys, n), false})
	}
	return out
}

// memoryLiveHolds runs memoryHoldPair's pairs of a slot of slotPolicy,
// released, on a goimpl.Limiter whose keys each first hold n live holds
// (reserves of 1 for liveHoldFor, liveHoldIDs); each must admit, and a
// key must hold n still when the limiter is stopped. A failure is noted
// (fail): the figure's.
func memoryLiveHolds(keys []string, n int) func() (func(string) bool, func()) {
	return func() (func(string) bool, func()) {
		l := newMemory()
		pair := holdPair(l.Hold, slotPolicy, limitspec.Release, 0)
		if err := holdInMemory(l, keys, n); err != nil {
			return func(string) bool { return fail(err) }, func() { l.Close() }
		}
		return pair, func() {
			if err := checkLiveInMemory(l, keys, n); err != nil {
				fail(err)
			}
			l.Close()
		}
	}
}

// holdInMemory gives each of keys n live holds on l (see
// memoryLiveHolds), and checks them.
func holdInMemory(l *goimpl.Limiter, keys []string, n int) error {
	ctx := context.Background()
	for _, k := range keys {
		req := limitspec.Request{Policy: slotPolicy, IDs: idsOf(k), Cost: 1}
		for _, id := range liveHoldIDs[:n] {
			res, err := l.Hold(ctx, req, limitspec.Hold{Op: limitspec.Reserve, ID: id, For: liveHoldFor})
			if err != nil || !res.Allowed {
				return fmt.Errorf("making %d live holds on %s: a reserve not admitted (%v)", n, k, err)
			}
		}
	}
	return checkLiveInMemory(l, keys, n)
}

// checkLiveInMemory checks that each of keys holds n live holds on l: a
// decision of cost 1 finds Amount - n - 1 slots left.
func checkLiveInMemory(l *goimpl.Limiter, keys []string, n int) error {
	for _, k := range keys {
		res, err := l.Limit(context.Background(), limitspec.Request{Policy: slotPolicy, IDs: idsOf(k), Cost: 1})
		if err != nil {
			return fmt.Errorf("checking the live holds of %s: %w", k, err)
		}
		if err := slotsLeft(k, res.Limits[0].Remaining, n); err != nil {
			return err
		}
	}
	return nil
}
