package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// decisions is a run of decisions: decision i, for i in [From, To), is a
// request of IDs[i % len(IDs)] at Clock(i), sent by Clients goroutines,
// each in pipelines of Depth.
type decisions struct {
	IDs            []string
	From, To       int
	Clients, Depth int
	Clock          func(i int) time.Time
}

// wallClock is the time a decision is sent at.
func wallClock(int) time.Time { return time.Now() }

// fixedEpochMs is decision 0's time on fixedClock: a time in the past,
// as the conformance kit's instruction budgets use.
const fixedEpochMs = 1_700_000_000_000

// fixedClock is decision i at fixedEpochMs + i ms, the same at every
// run, so that every run sends the same arguments.
func fixedClock(i int) time.Time { return time.UnixMilli(fixedEpochMs + int64(i)) }

// drive runs the decisions of r by d through a go-redis pipeline per
// batch. Every decision must admit.
func drive(ctx context.Context, rdb *redis.Client, d *redisDecider, r decisions) error {
	next := atomic.Int64{}
	next.Store(int64(r.From))
	var wg sync.WaitGroup
	errs := make([]error, r.Clients)
	for c := range r.Clients {
		wg.Go(func() {
			for {
				start := int(next.Add(int64(r.Depth))) - r.Depth
				if start >= r.To {
					return
				}
				if err := batch(ctx, rdb, d, r, start, min(start+r.Depth, r.To)); err != nil {
					errs[c] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// batch sends decisions start to end-1 of r in one pipeline and checks
// that each admitted.
func batch(ctx context.Context, rdb *redis.Client, d *redisDecider, r decisions, start, end int) error {
	pipe := rdb.Pipeline()
	cmds := make([]*redis.Cmd, 0, end-start)
	for i := start; i < end; i++ {
		cmds = append(cmds, d.queue(ctx, pipe, r.IDs[i%len(r.IDs)], r.Clock(i)))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("%s: %w", d.Name, err)
	}
	for _, c := range cmds {
		ok, err := d.admitted(c.Val())
		if err != nil {
			return fmt.Errorf("%s: %w", d.Name, err)
		}
		if !ok {
			return fmt.Errorf("%s: a decision denied; the limit is meant to admit every one", d.Name)
		}
	}
	return nil
}

// commandStats is INFO commandstats: per command (lower case, as
// "evalsha"), its calls and total µs.
type commandStats map[string]struct {
	Calls int64
	Usec  float64
}

// readCommandStats reads INFO commandstats.
func readCommandStats(ctx context.Context, rdb *redis.Client) (commandStats, error) {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := commandStats{}
	for line := range strings.Lines(info) {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		st := out[strings.TrimPrefix(name, "cmdstat_")]
		for f := range strings.SplitSeq(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "calls":
				st.Calls, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				st.Usec, _ = strconv.ParseFloat(v, 64)
			}
		}
		out[strings.TrimPrefix(name, "cmdstat_")] = st
	}
	return out, nil
}

// serverCPU is the CPU time the server's main thread has used, in µs
// (INFO cpu: used_cpu_user_main_thread + used_cpu_sys_main_thread, or
// the process's used_cpu_user + used_cpu_sys before Redis 6).
func serverCPU(ctx context.Context, rdb *redis.Client) (float64, error) {
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	fields := map[string]float64{}
	for line := range strings.Lines(info) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok {
			fields[k], _ = strconv.ParseFloat(v, 64)
		}
	}
	if _, ok := fields["used_cpu_user_main_thread"]; ok {
		return (fields["used_cpu_user_main_thread"] + fields["used_cpu_sys_main_thread"]) * 1e6, nil
	}
	return (fields["used_cpu_user"] + fields["used_cpu_sys"]) * 1e6, nil
}

// redisVersion is the server's redis_version (INFO server).
func redisVersion(ctx context.Context, rdb *redis.Client) (string, error) {
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v, nil
		}
	}
	return "unknown", nil
}
