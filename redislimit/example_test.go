package redislimit_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// plans are the limits of a service's plans: a tenant's plan is chosen
// per call.
var plans = map[string]limitspec.Limit{
	"free": limitspec.GCRA{Burst: 5, Rate: 1, Period: time.Second},
	"pro":  limitspec.GCRA{Burst: 50, Rate: 20, Period: time.Second},
}

// decide is the README's Redis example: one limiter for the client
// decides a limit per call, the user's plan's, and a policy, a burst
// limit and a daily quota at once, at the Redis server's clock.
func decide(ctx context.Context, rdb *redis.Client, user, plan string) error {
	lim, err := redislimit.New(ctx, rdb, redislimit.WithServerClock())
	if err != nil {
		return err
	}
	res, err := lim.Allow(ctx, user, plans[plan])
	if err != nil {
		return err
	}
	if !res.Allowed {
		log.Printf("%s (%s plan) denied; retry in %v", user, plan, res.RetryAfter)
	}

	quota, err := limitspec.BurstQuotaPolicy(1000)
	if err != nil {
		return err // errors.Is(err, limitspec.ErrBadInput): a parameter out of its domain
	}
	res, err = lim.Limit(ctx, limitspec.Request{Policy: quota, IDs: map[string]string{"user": user}, Cost: 1})
	switch {
	case errors.Is(err, limitspec.ErrUnavailable):
		// Redis down or slow: package fallback decides locally meanwhile
	case err != nil:
		return err
	case !res.Allowed:
		log.Printf("%s denied by %s; retry in %v", user, res.Limits[res.Binding].Name, res.RetryAfter)
	}
	return nil
}

// Example_policy decides a user's plan's limit and a policy on Redis (it
// needs a Redis on localhost:6379, so it has no output to check;
// TestExample runs decide on a server of its own).
func Example_policy() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	if err := decide(context.Background(), rdb, "alice", "pro"); err != nil {
		log.Fatal(err)
	}
}
