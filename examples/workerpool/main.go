// Command workerpool is a worker pool that takes its slots from a
// limiter, played as a short simulation: each tenant may run 5 jobs at
// once and start 100 a minute, however many workers (goroutines, or
// processes sharing a Redis) take its jobs.
//
// The limits are the holding policy pool (Policy.WithHolds) over the
// identity tenant: slots, a concurrency limit of 5, and minute, a fixed
// window of 100 jobs a minute. A worker that takes a job reserves 1 on
// both (limitspec.Holder), with the job's id as the hold's id and a For
// longer than the job should take; a denied worker waits, for a job of
// its pool to end or for Result.RetryAfter. A job that may outlast its
// hold renews it (Renew) before the end. When the job is done, the
// worker commits 1: its slot is free again and the minute counts the
// job. When the job fails, the worker releases the hold: the slot is
// free and the minute counts nothing. A worker that crashes never does
// either; its hold ends by itself at its For, and so frees its slot, no
// matter who holds the rest.
//
// It plays two parts. In the first, 8 workers share 20 jobs of tenant
// acme, and count the jobs in flight at once: never more than the 5
// slots, and 5 at times. In the second, tenant globex's jobs take holds
// of 300 ms, one step at a time, and the worker of one of them crashes:
// with the other four slots held (and renewed), a reserve is denied at
// +299 ms and admitted at +300 ms, when the crashed worker's hold ends.
//
//	go run ./examples/workerpool [-redis redis://127.0.0.1:6379]
//
// By default it decides in process (package goimpl); with -redis, on
// that Redis (package redislimit), under key names of the run's own
// (redislimit.Options.Prefix), which expire by themselves. Every request
// carries its time (Request.Now) from a fixed start: the first part's
// calls all at the start, as if the jobs took no time (their holds never
// end, and the minute is one), the second's at offsets from it, so that
// the lines it prints are the same on every run and on either limiter;
// testdata/output.txt holds them.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/redislimit"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "workerpool:", err)
		os.Exit(1)
	}
}

// run parses args, plays both parts on the limiter they choose and
// prints what they show to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("workerpool", flag.ContinueOnError)
	fs.SetOutput(out)
	redisURL := fs.String("redis", "", "decide on this Redis (redis://host:port); empty: in process")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	lim, closeLimiter, err := open(ctx, *redisURL)
	if err != nil {
		return err
	}
	defer closeLimiter()
	policy, err := poolPolicy()
	if err != nil {
		return err
	}
	if _, err := runPool(ctx, lim, policy, out); err != nil {
		return err
	}
	fmt.Fprintln(out)
	_, err = playCrash(ctx, lim, policy, out)
	return err
}

// holdingLimiter is what the pool needs of a limiter: decisions (its
// peeks) and holds. goimpl's and redislimit's Limiters are both.
type holdingLimiter interface {
	limitspec.Limiter
	limitspec.Holder
}

// open returns the limiter: in process when redisURL is empty, else on
// that Redis; the function returned releases it.
func open(ctx context.Context, redisURL string) (holdingLimiter, func(), error) {
	if redisURL == "" {
		// The requests' times start in the past: no background sweeper
		// may reckon them from the wall clock (goimpl.Options.NoSweeper).
		lim, err := goimpl.New(goimpl.Options{NoSweeper: true})
		if err != nil {
			return nil, nil, err
		}
		return lim, func() { lim.Close() }, nil
	}
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, nil, fmt.Errorf("-redis: %w", err)
	}
	opt.ContextTimeoutEnabled = true // redislimit bounds each call by its context
	rdb := redis.NewClient(opt)
	// Keys of this run's own: a run repeated within their TTLs (a
	// minute or two) starts afresh, as its fixed times require.
	lim, err := redislimit.New(ctx, rdb, redislimit.Options{Prefix: "workerpool:" + rand.Text() + ":"})
	if err != nil {
		rdb.Close()
		return nil, nil, err
	}
	return lim, func() { rdb.Close() }, nil
}

// The pool's limits, per tenant.
const (
	slots     = 5   // jobs at once
	perMinute = 100 // jobs started a minute
)

// poolPolicy is the holding policy pool: slots and minute per tenant.
func poolPolicy() (*limitspec.Policy, error) {
	p, err := limitspec.NewPolicy("pool",
		limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: slots}, Identity: "tenant"},
		limitspec.PolicyLimit{Name: "minute", Limit: limitspec.FixedWindow{Limit: perMinute, Window: time.Minute}, Identity: "tenant"})
	if err != nil {
		return nil, err
	}
	return p.WithHolds(), nil
}

// start is the time of the simulation's calls: the first part's, and
// the origin of the second's offsets. It lies 20 s into a minute of the
// fixed window (1_700_000_000_000 ms is 28_333_333 minutes and 20 s
// since the epoch), so that both parts fall in one window.
var start = time.UnixMilli(1_700_000_000_000)

// request is tenant's request of cost at now: a peek when cost is 0.
func request(policy *limitspec.Policy, tenant string, cost int64, now time.Time) limitspec.Request {
	return limitspec.Request{Policy: policy, IDs: map[string]string{"tenant": tenant}, Cost: cost, Peek: cost == 0, Now: now}
}

// remaining is what res says each limit has left.
func remaining(res limitspec.Result) string {
	if len(res.Limits) != 2 {
		return "no limits"
	}
	return fmt.Sprintf("slots remaining %d, minute remaining %d", res.Limits[0].Remaining, res.Limits[1].Remaining)
}
