package goimpl_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
)

// One limiter decides every limit, per call: here 20 at once and then 10
// a second per user, at the process clock.
func Example() {
	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer lim.Close()
	ctx := context.Background()
	res, err := lim.Allow(ctx, "alice", limitspec.GCRA{Burst: 20, Rate: 10, Period: time.Second})
	if err != nil {
		log.Fatal(err) // errors.Is(err, limitspec.ErrBadInput): a limit out of its domain, an empty key
	}
	if !res.Allowed {
		time.Sleep(res.RetryAfter)
	}
	fmt.Println(res.Allowed, res.Limits[0].Quota, res.Limits[0].Remaining)
	// Output: true 20 19
}

// Close stops the limiter's background sweepers; the limiter goes on
// deciding, on the states it holds, as one made with NoSweeper, and a
// second Close does nothing.
func ExampleLimiter_Close() {
	held := func() time.Time { return time.UnixMilli(1_700_000_000_000) }
	lim, err := goimpl.New(goimpl.Options{Now: held})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	perUser := limitspec.FixedWindow{Limit: 2, Window: time.Minute}
	before, _ := lim.Allow(ctx, "alice", perUser)
	fmt.Println(lim.Close())
	after, err := lim.Allow(ctx, "alice", perUser)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(before.Limits[0].Remaining, after.Limits[0].Remaining, after.Allowed)
	fmt.Println(lim.Close())
	// Output:
	// <nil>
	// 1 0 true
	// <nil>
}

// Allow decides a cost of 1 at the limiter's clock, here held at one
// instant: a burst of 2, then 1 a second. Each admission is 1 s of work
// queued; the third waits for the first's second to pass, and the full
// burst is whole again 2 s after it was spent.
func ExampleLimiter_Allow() {
	held := func() time.Time { return time.UnixMilli(1_700_000_000_000) }
	lim, err := goimpl.New(goimpl.Options{Now: held})
	if err != nil {
		log.Fatal(err)
	}
	defer lim.Close()
	gcra := limitspec.GCRA{Burst: 2, Rate: 1, Period: time.Second}
	for range 3 {
		res, err := lim.Allow(context.Background(), "alice", gcra)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Allowed, res.Limits[0].Remaining, res.RetryAfter, res.Limits[0].ResetAfter, res.Limits[0].Window())
	}
	// Output:
	// true 1 0s 1s 2s
	// true 0 0s 2s 2s
	// false 0 1s 2s 2s
}

// Bind checks a limit once and returns a handle that decides keys by it,
// here at a held clock: the same decisions as Allow's above, with no
// limit converted or validated per call, and no allocation on an
// existing key.
func ExampleLimiter_Bind() {
	held := func() time.Time { return time.UnixMilli(1_700_000_000_000) }
	lim, err := goimpl.New(goimpl.Options{Now: held})
	if err != nil {
		log.Fatal(err)
	}
	defer lim.Close()
	perUser, err := lim.Bind(limitspec.GCRA{Burst: 2, Rate: 1, Period: time.Second})
	if err != nil {
		log.Fatal(err) // errors.Is(err, limitspec.ErrBadInput): a limit out of its domain
	}
	for range 3 {
		res, err := perUser.Allow(context.Background(), "alice")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Allowed, res.Remaining, res.RetryAfter, res.ResetAfter, res.Window())
	}
	// Output:
	// true 1 0s 1s 2s
	// true 0 0s 2s 2s
	// false 0 1s 2s 2s
}

// A forced request charges work that has been served already, even when
// the limit would have denied it: after a burst of 16 spent at once, 4
// more are charged. Each costs T = 60000 / 30 = 2000 ms, so the next 4
// wait 4·T = 8 s past the debt of 4·T: 16 s instead of 8 s, and the burst
// is whole again after 20·T = 40 s.
func ExampleLimiter_Limit_force() {
	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer lim.Close()
	ctx := context.Background()
	gcra := limitspec.GCRA{Burst: 16, Rate: 30, Period: time.Minute}
	now := time.UnixMilli(1_700_000_000_000)
	spent, _ := lim.Limit(ctx, limitspec.Request{Key: "user123", Limit: gcra, Cost: 16, Now: now})
	forced, _ := lim.Limit(ctx, limitspec.Request{Key: "user123", Limit: gcra, Cost: 4, Now: now, Force: true})
	fmt.Println(spent.Allowed, spent.Limits[0].Remaining, spent.Limits[0].ResetAfter)
	fmt.Println(forced.Allowed, forced.Limits[0].Remaining, forced.RetryAfter, forced.Limits[0].ResetAfter)
	// Output:
	// true 0 32s
	// false 0 16s 40s
}

// A policy decides a request by all its limits at once. burst_quota
// (spec/policies.yaml) limits each user by a gcra burst of 5 and a daily
// quota, here 3: the daily quota binds (it has the least left), the
// fourth request is denied by it for a day, and the burst limit consumes
// nothing for that request.
func ExampleLimiter_Limit_policy() {
	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer lim.Close()
	policy, err := limitspec.BurstQuotaPolicy(3)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	alice := map[string]string{"user": "alice"}
	for range 4 {
		res, err := lim.Limit(ctx, limitspec.Request{Policy: policy, IDs: alice, Cost: 1, Now: now})
		if err != nil {
			log.Fatal(err)
		}
		b := res.Limits[res.Binding]
		fmt.Println(res.Allowed, "binding:", b.Name, "remaining:", b.Remaining, "retry:", res.RetryAfter,
			"burst remaining:", res.Limits[0].Remaining)
	}
	_, err = lim.Limit(ctx, limitspec.Request{Policy: policy, IDs: map[string]string{"user": ""}, Cost: 1, Now: now})
	fmt.Println(errors.Is(err, limitspec.ErrBadInput), err)
	// Output:
	// true binding: daily remaining: 2 retry: 0s burst remaining: 4
	// true binding: daily remaining: 1 retry: 0s burst remaining: 3
	// true binding: daily remaining: 0 retry: 0s burst remaining: 2
	// false binding: daily remaining: 0 retry: 24h0m0s burst remaining: 2
	// true burst_quota: identity user must not be empty
}
