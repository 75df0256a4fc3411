package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// drive runs n decisions of d from clients goroutines, each sending them
// in batches of depth through a go-redis pipeline; decision i is for
// ids[i % len(ids)]. Every decision must admit.
func drive(ctx context.Context, rdb *redis.Client, d *redisDecider, ids []string, n, clients, depth int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, clients)
	for c := range clients {
		wg.Go(func() {
			for {
				start := int(next.Add(int64(depth))) - depth
				if start >= n {
					return
				}
				if err := batch(ctx, rdb, d, ids, start, min(start+depth, n)); err != nil {
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

// batch sends decisions start to end-1 in one pipeline and checks that
// each admitted.
func batch(ctx context.Context, rdb *redis.Client, d *redisDecider, ids []string, start, end int) error {
	pipe := rdb.Pipeline()
	cmds := make([]*redis.Cmd, 0, end-start)
	for i := start; i < end; i++ {
		cmds = append(cmds, d.queue(ctx, pipe, ids[i%len(ids)]))
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
