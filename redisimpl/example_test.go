package redisimpl_test

import (
	"context"
	"errors"
	"log"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/redisimpl"
	"github.com/redis/go-redis/v9"
)

// decide is the README's Redis example: the burst_quota policy for one
// user, at the Redis server's clock.
func decide(ctx context.Context) error {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	lim, err := redisimpl.NewBurstQuota(rdb, redisimpl.BurstQuotaParams{DailyLimit: 1000}, redisimpl.WithServerClock())
	if err != nil {
		return err // errors.Is(err, limitspec.ErrBadInput): a parameter out of its domain
	}
	res, err := lim.Limit(ctx, limitspec.Request{IDs: map[string]string{"user": "alice"}, Cost: 1})
	switch {
	case errors.Is(err, limitspec.ErrUnavailable):
		// Redis down or slow: package fallback decides locally meanwhile
	case err != nil:
		return err
	case !res.Allowed:
		log.Printf("denied by %s; retry in %v", res.Limits[res.Index-1].Name, res.RetryAfter())
	}
	return nil
}

// Example_policy decides a policy on Redis (it needs a Redis on
// localhost:6379, so it has no output to check; the tests of this package
// run the same calls on servers of their own).
func Example_policy() {
	if err := decide(context.Background()); err != nil {
		log.Fatal(err)
	}
}
