// Command quotademo is a service's program in a module of its own, built
// by cmd/gen's end-to-end test: it decides the limits of the package
// that cmd/gen compiled from the service's spec (package quota) on a
// real Redis, by the scripts and by the Functions library beside the
// catalogue's, and prints what each decision says.
//
//	go run ./quotademo redis://127.0.0.1:6379
package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"

	"example.com/svc/quota"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "quotademo:", err)
		os.Exit(1)
	}
}

func run(url string) error {
	ctx := context.Background()
	opt, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	opt.ContextTimeoutEnabled = true
	rdb := redis.NewClient(opt)
	defer rdb.Close()

	scripts, err := redislimit.New(ctx, rdb, redislimit.Options{})
	if err != nil {
		return err
	}
	daily := quota.DailyQuota{Limit: 3, Offset: 5 * time.Hour}
	at := time.Date(2026, 11, 25, 4, 59, 59, 0, time.UTC)
	fmt.Println("scripts:")
	for _, now := range []time.Time{at, at, at, at, at.Add(time.Second), time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)} {
		if err := show(scripts, limitspec.Request{Key: "acme", Limit: daily, Cost: 1, Now: now}); err != nil {
			return err
		}
	}

	functions, err := redislimit.New(ctx, rdb, redislimit.Options{Functions: true})
	if err != nil {
		return err
	}
	api, err := quota.APIPolicy(2)
	if err != nil {
		return err
	}
	noon := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	fmt.Println("functions:")
	for range 3 {
		if err := show(functions, limitspec.Request{Policy: api, IDs: map[string]string{"key": "globex"}, Cost: 1, Now: noon}); err != nil {
			return err
		}
	}
	burst := limitspec.GCRA{Burst: 2, Rate: 1, Period: time.Second}
	if err := show(functions, limitspec.Request{Key: "initech", Limit: burst, Cost: 1, Now: noon}); err != nil {
		return err
	}
	libs, err := rdb.FunctionList(ctx, redis.FunctionListQuery{}).Result()
	if err != nil {
		return err
	}
	var names []string
	for _, l := range libs {
		names = append(names, l.Name)
	}
	slices.Sort(names)
	fmt.Println("libraries:", names)
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		return err
	}
	slices.Sort(keys)
	fmt.Println("keys:", keys)
	return nil
}

// show decides req and prints its time, the decision, the binding
// limit's name and remaining, the wait and the reset.
func show(lim limitspec.Limiter, req limitspec.Request) error {
	res, err := lim.Limit(context.Background(), req)
	if err != nil {
		return err
	}
	b := res.Limits[res.Binding]
	fmt.Println(req.Now.Format("2006-01-02 15:04:05"), res.Allowed, b.Name, b.Remaining, res.RetryAfter, b.ResetAfter)
	return nil
}
