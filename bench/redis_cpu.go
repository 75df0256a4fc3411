package main

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"

	"github.com/limitspec/limitspec"
	"github.com/redis/go-redis/v9"
)

// cpuOptions shape the Redis CPU figure's load.
type cpuOptions struct {
	Keys, Decisions, Clients, Depth, Rounds int
}

// redisCPUDeciders are the rows of the Redis CPU figure: every algorithm
// of limitspec, by EVALSHA of its script and by FCALL of its function in
// the Functions library, each on the caller's clock and on the server's,
// followed by its hand-written peers.
func redisCPUDeciders() ([]*redisDecider, error) {
	var out []*redisDecider
	for _, lim := range limits {
		for _, functions := range []bool{byEvalSHA, byFCall} {
			for _, serverClock := range []bool{false, true} {
				d, err := limitspecDecider(lim, serverClock, functions)
				if err != nil {
					return nil, err
				}
				out = append(out, d)
			}
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
// reads the usec per call of the command the decider runs (EVALSHA or
// FCALL: INFO commandstats) and the server's
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
		Notes: []string{fmt.Sprintf("Each script on an emptied server: one decision per key on %s keys (creating them; not measured), then CONFIG RESETSTAT and %s decisions spread evenly over the keys, from %d goroutines each sending pipelines of %d (the driver on GOMAXPROCS %d); every script in turn, %d rounds, the least of each row's (a busy machine only adds to a round's time). Every decision admits; the logs hold %d entries per key at the end of a round. limitspec's scripts run four times: by EVALSHA of lua/<algorithm>.lua and by FCALL of the function limitspec_<algorithm> of the Functions library (lua/library.lua, loaded by redislimit.LoadLibrary), each given now_ms from the caller's clock and given an empty now_ms, reading the server's TIME (redislimit's Options.ServerClock; redis_rate's script always reads it). The token hash and queue level scripts give a key a TTL of their own reckoning, about 1 ms at this limit, so that their keys expire between two of their decisions and their rows decide mostly fresh keys. "+
			"Script µs: INFO commandstats usec_per_call of the command the row runs (EVALSHA, or FCALL), the time Redis spends running the script, the commands it calls included (wall time: a server that loses its core mid-script is billed for the wait). Server CPU µs: the redis-server main thread's CPU time (INFO cpu, user + sys) over the run, divided by the decisions: the script plus reading, parsing and answering the call.",
			groupThousands(int64(o.Keys)), groupThousands(int64(o.Decisions)), o.Clients, o.Depth, procs, o.Rounds, 1+o.Decisions/o.Keys)},
		Columns: []Column{{"script µs per call", Lower}, {"server CPU µs per decision", Lower}},
	}
	usec, cpu, err := leastCPU(ctx, rdb, ds, o)
	if err != nil {
		return Table{}, err
	}
	for i, d := range ds {
		t.Rows = append(t.Rows, Row{Group: d.Group, Name: d.Name, Ours: d.Ours, Values: []float64{usec[i], cpu[i]}})
	}
	return t, nil
}

// leastCPU measures every decider of ds in turn, o.Rounds rounds, on
// o.Keys keys, or the decider's IDs (cpuOf), and returns each one's
// least script µs per call and least server CPU µs per decision.
func leastCPU(ctx context.Context, rdb *redis.Client, ds []*redisDecider, o cpuOptions) (usec, cpu []float64, err error) {
	keys := ids(o.Keys)
	us, cs := make([][]float64, len(ds)), make([][]float64, len(ds))
	for range o.Rounds {
		for i, d := range ds {
			ks := keys
			if d.IDs != nil {
				ks = d.IDs
			}
			u, c, err := cpuOf(ctx, rdb, d, ks, o)
			if err != nil {
				return nil, nil, err
			}
			us[i], cs[i] = append(us[i], u), append(cs[i], c)
		}
	}
	for i := range ds {
		usec, cpu = append(usec, slices.Min(us[i])), append(cpu, slices.Min(cs[i]))
	}
	return usec, cpu, nil
}

// cpuOf measures one decider (see redisCPU) on keys: its script µs per
// call and the server's CPU µs per decision, which is per pair of calls
// for a decider that sends two (Calls); its prepare runs before the
// measurement and its verify after.
func cpuOf(ctx context.Context, rdb *redis.Client, d *redisDecider, keys []string, o cpuOptions) (usecPerCall, cpuPerDecision float64, err error) {
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return 0, 0, err
	}
	if err := d.load(ctx, rdb); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", d.Name, err)
	}
	create := decisions{IDs: keys, To: len(keys), Clients: o.Clients, Depth: o.Depth, Clock: wallClock}
	if err := drive(ctx, rdb, d, create); err != nil {
		return 0, 0, err
	}
	if d.prepare != nil {
		if err := d.prepare(ctx, rdb, keys); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", d.Name, err)
		}
	}
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		return 0, 0, err
	}
	cpu0, err := serverCPU(ctx, rdb)
	if err != nil {
		return 0, 0, err
	}
	measured := decisions{IDs: keys, To: o.Decisions, Clients: o.Clients, Depth: o.Depth, Clock: wallClock}
	if err := drive(ctx, rdb, d, measured); err != nil {
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
	cmd := st[d.Command]
	if cmd.Calls != int64(o.Decisions*d.calls()) {
		return 0, 0, fmt.Errorf("%s: %d %s calls for %d decisions of %d calls each", d.Name, cmd.Calls, strings.ToUpper(d.Command), o.Decisions, d.calls())
	}
	if d.verify != nil {
		if err := d.verify(ctx, rdb, keys); err != nil {
			return 0, 0, fmt.Errorf("%s: after the measurement: %w", d.Name, err)
		}
	}
	return cmd.Usec / float64(cmd.Calls), math.Max(0, cpu1-cpu0) / float64(o.Decisions), nil
}
