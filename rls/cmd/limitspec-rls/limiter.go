package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/redislimit"
)

// newLimiter is the limiter f names: in process, or on a Redis (behind
// the fallback with -fallback), with what closes it.
func newLimiter(ctx context.Context, f flags) (limitspec.Limiter, func(), error) {
	local, err := goimpl.New(goimpl.Options{})
	if err != nil {
		return nil, nil, err
	}
	rdb, err := redisClient(f)
	if err != nil || rdb == nil {
		return local, func() { local.Close() }, err
	}
	closeAll := func() { rdb.Close(); local.Close() }
	primary, err := redislimit.New(ctx, rdb, redislimit.Options{})
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	if !f.fallback {
		return primary, closeAll, nil
	}
	fb, err := fallback.New(primary, local, fallback.Options{RequestIDs: true})
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return fb, closeAll, nil
}

// redisClient is the client of the Redis f names, nil for none.
func redisClient(f flags) (redis.UniversalClient, error) {
	given := 0
	for _, s := range []string{f.redisURL, f.cluster, f.sent} {
		if s != "" {
			given++
		}
	}
	switch {
	case given > 1:
		return nil, errors.New("give one of -redis, -cluster and -sentinel")
	case f.redisURL != "":
		opt, err := redis.ParseURL(f.redisURL)
		if err != nil {
			return nil, fmt.Errorf("-redis: %w", err)
		}
		opt.ContextTimeoutEnabled = true
		return redis.NewClient(opt), nil
	case f.cluster != "":
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(f.cluster, ","), ContextTimeoutEnabled: true}), nil
	case f.sent != "":
		master, addrs, ok := strings.Cut(f.sent, "@")
		if !ok || master == "" || addrs == "" {
			return nil, fmt.Errorf("-sentinel %q: give MASTER@host:port[,host:port...]", f.sent)
		}
		return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: master, SentinelAddrs: strings.Split(addrs, ","), ContextTimeoutEnabled: true}), nil
	}
	return nil, nil
}

// describe says where f keeps its counters.
func describe(f flags) string {
	where := "in process"
	switch {
	case f.redisURL != "":
		where = "Redis " + redactURL(f.redisURL)
	case f.cluster != "":
		where = "Redis Cluster " + f.cluster
	case f.sent != "":
		where = "Redis by Sentinel " + f.sent
	}
	if f.fallback && where != "in process" {
		where += ", in process while it cannot decide"
	}
	return where
}

// redactURL is u without its password.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if at := strings.LastIndex(rest, "@"); ok && at >= 0 {
		return scheme + "://***@" + rest[at+1:]
	}
	return u
}
