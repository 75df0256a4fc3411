// Command llmgateway is an LLM gateway's token budget, played as a short
// simulation: each API key may spend 1000 tokens a minute, and a request
// does not know what it spends until the model has answered.
//
// So each request first reserves its max_tokens as a hold
// (limitspec.Holder, on a holding policy made with Policy.WithHolds),
// with the request's id as the hold's id. The hold counts against the
// budget while the model runs, as if it were spent, so that concurrent
// requests cannot together overdraw the key. When the model answers, the
// gateway commits the tokens the answer actually took: the hold ends and
// only those are charged, the rest going back to the key. When the call
// fails, it releases the hold, charging nothing. A reserve that does not
// fit beside the holds is denied and told how long to wait
// (Result.RetryAfter): until enough holds end by themselves, as they do
// at their For, should their gateways never come back; a commit or a
// release usually frees them sooner.
//
// The budget is the holding policy llm, with one limit, tokens: a token
// bucket of 1000 tokens refilled continuously at 1000 a minute (one token
// every 60 ms), per API key. What a key has left is
//
//	remaining = 1000 − taken − held
//
// where taken is what was committed, less what has refilled since. A
// hold's amount is taken from every limit of its policy alike, so a
// limit counting something else (requests in flight) belongs in a
// policy of its own.
//
// A commit is idempotent by its hold's id: sent again after its reply
// was lost, it finds nothing held, charges nothing, and fails with an
// error matching limitspec.ErrNoHold, which the gateway reads as "done".
//
//	go run ./examples/llmgateway [-redis redis://127.0.0.1:6379]
//
// By default it decides in process (package goimpl); with -redis, on that
// Redis (package redislimit), under key names of the run's own
// (redislimit.Options.Prefix), which expire by themselves. Every request
// carries its time (Request.Now), an offset from a fixed start, so that
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
		fmt.Fprintln(os.Stderr, "llmgateway:", err)
		os.Exit(1)
	}
}

// run parses args, plays the simulation on the limiter they choose and
// prints a line per step to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("llmgateway", flag.ContinueOnError)
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
	policy, err := llmPolicy()
	if err != nil {
		return err
	}
	_, err = play(ctx, newGateway(lim, policy), out)
	return err
}

// holdingLimiter is what the gateway needs of a limiter: decisions (its
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
	// Keys of this run's own: a run repeated within their TTLs (a few
	// minutes) starts afresh, as its fixed times require.
	lim, err := redislimit.New(ctx, rdb, redislimit.Options{Prefix: "llmgateway:" + rand.Text() + ":"})
	if err != nil {
		rdb.Close()
		return nil, nil, err
	}
	return lim, func() { rdb.Close() }, nil
}

// llmPolicy is the holding policy llm: 1000 tokens a minute per API key.
func llmPolicy() (*limitspec.Policy, error) {
	p, err := limitspec.NewPolicy("llm", limitspec.PolicyLimit{
		Name:     "tokens",
		Limit:    limitspec.TokenBucket{Capacity: 1000, RefillTokens: 1000, Refill: time.Minute},
		Identity: "api_key",
	})
	if err != nil {
		return nil, err
	}
	return p.WithHolds(), nil
}

// start is the time of the simulation's first step; each step's is an
// offset from it.
var start = time.UnixMilli(1_700_000_000_000)

// apiKey is the key whose budget the requests spend.
const apiKey = "sk-demo"

// holdFor is how long a reserve holds: longer than any model call, so
// that a hold ends by itself only when its gateway has gone.
const holdFor = 2 * time.Minute

// request is a chat completion as the gateway sees it: the most tokens
// it may use (its max_tokens), and what the simulated model spends on
// it, or that the model fails.
type request struct {
	maxTokens int64
	used      int64
	fails     bool
}

// requests are the simulation's, by id; a request's id names its hold.
var requests = map[string]request{
	"req-1": {maxTokens: 400, used: 150},
	"req-2": {maxTokens: 400, used: 320},
	"req-3": {maxTokens: 400, fails: true},
	"req-4": {maxTokens: 400, used: 380},
}

// errModel is the simulated model's failure.
var errModel = errors.New("the model timed out")

// callModel stands for the model answering request id: the tokens its
// answer took, or its failure.
func callModel(id string) (int64, error) {
	r := requests[id]
	if r.fails {
		return 0, errModel
	}
	return r.used, nil
}
