package redislimit_test

import (
	"context"
	"errors"
	"fmt"
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
	lim, err := redislimit.New(ctx, rdb, redislimit.Options{ServerClock: true})
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

// loginAttempts is the package doc's bound handle: a limit of 3 login
// attempts per user at once, then one every 10 s, bound once at
// start-up, then decided for each attempt, at the times given (a service
// leaves Now zero: the limiter's clock). It returns how each went.
func loginAttempts(ctx context.Context, rdb *redis.Client, user string, times []time.Time) ([]string, error) {
	lim, err := redislimit.New(ctx, rdb, redislimit.Options{})
	if err != nil {
		return nil, err
	}
	logins, err := lim.Bind(limitspec.GCRA{Burst: 3, Rate: 1, Period: 10 * time.Second})
	if err != nil {
		return nil, err // errors.Is(err, limitspec.ErrBadInput): a parameter out of its domain
	}
	var out []string
	for _, now := range times {
		res, err := logins.Limit(ctx, limitspec.Request{Key: user, Cost: 1, Now: now})
		if err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("allowed %v, %d left, retry after %v", res.Allowed, res.Remaining, res.RetryAfter))
	}
	return out, nil
}

// Example_bound decides four login attempts at one instant by a limit
// bound once. It needs a Redis on localhost:6379, so it has no output to
// check; TestExampleBound runs loginAttempts on a server of its own and
// checks that it prints
//
//	allowed true, 2 left, retry after 0s
//	allowed true, 1 left, retry after 0s
//	allowed true, 0 left, retry after 0s
//	allowed false, 0 left, retry after 10s
func Example_bound() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	now := time.Now()
	lines, err := loginAttempts(context.Background(), rdb, "alice", []time.Time{now, now, now, now})
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range lines {
		fmt.Println(l)
	}
}
