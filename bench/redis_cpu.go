package main

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"

	"github.com/limitspec/limitspec"
	"github.com/redis/go-redis/v9"
)

// cpuOptions shape the Redis CPU figure's load.
type cpuOptions struct {
	Keys, Decisions, Clients, Depth, Rounds int
}

// redisCPUDeciders are the rows of the Redis CPU figure: every algorithm
// of limitspec, on the caller's clock and on the server's, each followed
// by its hand-written peers.
func redisCPUDeciders() ([]*redisDecider, error) {
	var out []*redisDecider
	for _, lim := range limits {
		for _, serverClock := range []bool{false, true} {
			d, err := limitspecDecider(lim, serverClock)
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
		out = append(out, peersOf(lim)...)
	}
	return out, nil
}

// peersOf are the hand-written scripts that decide lim's algorithm, each
// given lim's limit.
func peersOf(lim limitspec.Limit) []*redisDecider {
	switch l := lim.(type) {
	case limitspec.GCRA:
		return []*redisDecider{redisRateDecider()}
	case limitspec.FixedWindow:
		return []*redisDecider{incrDecider()}
	case limitspec.SlidingLog:
		return []*redisDecider{rollingDecider(), zcardDecider()}
	case limitspec.SlidingWindow:
		return []*redisDecider{weightedWindowsDecider(l)}
	case limitspec.TokenBucket:
		return []*redisDecider{tokenHashDecider(l)}
	case limitspec.LeakyBucket:
		return []*redisDecider{queueLevelDecider(l)}
	case limitspec.BucketWindow:
		return []*redisDecider{bucketKeysDecider(l)}
	case limitspec.MetaWindow:
		return []*redisDecider{metaListDecider(l)}
	}
	return nil
}

// redisCPU measures the Redis-side CPU of admitted decisions: per
// decider, on an emptied server, one decision per key to create every
// key, then CONFIG RESETSTAT and o.Decisions decisions, pipelined; it
// reads EVALSHA's usec per call (INFO commandstats) and the server's
// main-thread CPU per decision (INFO cpu). Each row is the least of
// o.Rounds rounds, a round measuring every decider in turn: on a busy
// machine other processes only add to a round's time. The driver
// runs on one core fewer than the machine has, so that it takes less
// of redis-server's.
func redisCPU(ctx context.Context, rdb *redis.Client, o cpuOptions) (Table, error) {
	ds, err := redisCPUDeciders()
	if err != nil {
		return Table{}, err
	}
	procs := max(1, runtime.NumCPU()-1)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	t := Table{
		Title: titleRedisCPU,
		Notes: []string{fmt.Sprintf("Each script on an emptied server: one decision per key on %s keys (creating them; not measured), then CONFIG RESETSTAT and %s decisions spread evenly over the keys, from %d goroutines each sending pipelines of %d (the driver on GOMAXPROCS %d); every script in turn, %d rounds, the least of each row's (a busy machine only adds to a round's time). Every decision admits; the logs hold %d entries per key at the end of a round. limitspec's scripts run twice: given now_ms from the caller's clock, and given an empty now_ms, reading the server's TIME (redislimit's WithServerClock; redis_rate's script always reads it). "+
			"EVALSHA µs: INFO commandstats usec_per_call of EVALSHA, the time Redis spends running the script, the commands it calls included (wall time: a server that loses its core mid-script is billed for the wait). Server CPU µs: the redis-server main thread's CPU time (INFO cpu, user + sys) over the run, divided by the decisions: the script plus reading, parsing and answering the call.",
			groupThousands(int64(o.Keys)), groupThousands(int64(o.Decisions)), o.Clients, o.Depth, procs, o.Rounds, 1+o.Decisions/o.Keys)},
		Columns: []Column{{"EVALSHA µs per call", Lower}, {"server CPU µs per decision", Lower}},
	}
	keys := ids(o.Keys)
	usec, cpu := make([][]float64, len(ds)), make([][]float64, len(ds))
	for range o.Rounds {
		for i, d := range ds {
			u, c, err := cpuOf(ctx, rdb, d, keys, o)
			if err != nil {
				return Table{}, err
			}
			usec[i], cpu[i] = append(usec[i], u), append(cpu[i], c)
		}
	}
	for i, d := range ds {
		t.Rows = append(t.Rows, Row{Group: d.Group, Name: d.Name, Ours: d.Ours, Values: []float64{slices.Min(usec[i]), slices.Min(cpu[i])}})
	}
	return t, nil
}

// cpuOf measures one decider (see redisCPU).
func cpuOf(ctx context.Context, rdb *redis.Client, d *redisDecider, keys []string, o cpuOptions) (usecPerCall, cpuPerDecision float64, err error) {
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return 0, 0, err
	}
	if err := d.load(ctx, rdb); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", d.Name, err)
	}
	if err := drive(ctx, rdb, d, keys, len(keys), o.Clients, o.Depth); err != nil {
		return 0, 0, err
	}
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		return 0, 0, err
	}
	cpu0, err := serverCPU(ctx, rdb)
	if err != nil {
		return 0, 0, err
	}
	if err := drive(ctx, rdb, d, keys, o.Decisions, o.Clients, o.Depth); err != nil {
		return 0, 0, err
	}
	cpu1, err := serverCPU(ctx, rdb)
	if err != nil {
		return 0, 0, err
	}
	st, err := readCommandStats(ctx, rdb)
	if err != nil {
		return 0, 0, err
	}
	ev := st["evalsha"]
	if ev.Calls != int64(o.Decisions) {
		return 0, 0, fmt.Errorf("%s: %d EVALSHA calls for %d decisions", d.Name, ev.Calls, o.Decisions)
	}
	return ev.Usec / float64(ev.Calls), math.Max(0, cpu1-cpu0) / float64(o.Decisions), nil
}
