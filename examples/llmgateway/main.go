// Command llmgateway is an LLM gateway's limits, played as a short
// simulation: each API key may have 3 requests in flight, make 5 a
// minute and spend 2000 tokens a minute, and a request does not know
// the tokens it spends until the model has answered.
//
// The limits are one holding policy, llm (Policy.WithHolds), over the
// identity api_key, of three limits, each counting its own unit
// (docs/semantics.md, "Units"):
//
//   - slots, a limitspec.Concurrency of 3, unit "slots": the requests in
//     flight;
//   - requests, a limitspec.FixedWindow of 5 a minute, no unit: it counts
//     the request's Cost;
//   - tokens, a limitspec.TokenBucket of 2000 tokens refilled
//     continuously at 2000 a minute (one token every 30 ms), unit
//     "tokens".
//
// A request is two calls of limitspec.Holder.Hold, with the request's id
// as the hold's id:
//
//  1. reserve, before the model is called: Cost 1 and Costs {tokens:
//     max_tokens}, that is 1 slot, 1 request and max_tokens tokens, held
//     while the model runs as if they were spent, so that concurrent
//     requests cannot together overdraw the key. It is admitted only when
//     all three limits admit it beside what is held already, and then
//     holds on all three; else it is denied, holding nothing, with the
//     limits that denied it and how long to wait (Result.RetryAfter: a
//     hold counts whole until its end, For, since the limiter cannot know
//     when its commit comes).
//  2. commit, when the model has answered: Cost 1 and Costs {tokens:
//     used}. The hold ends on all three: the slot is free again
//     (concurrency charges nothing), the window counts the request, the
//     bucket is charged the tokens the answer took, and the rest of
//     max_tokens goes back to the key. When the model fails, the gateway
//     releases the hold instead: the slot and the tokens come back, and
//     the request is not counted.
//
// Each call is one atomic call over the three limits, all or nothing, on
// Redis as in process: no limit holds or charges what another denies.
// What a key has left of each limit is its quota less what was charged
// (and has not refilled, or ended with its minute) less what is held:
//
//	slots    = 3    − held
//	requests = 5    − committed in this minute − held
//	tokens   = 2000 − (committed − refilled)   − held max_tokens
//
// A commit is idempotent by its hold's id: sent again with the same
// amounts after its reply was lost (within a minute), it gets the first
// commit's reply again, field for field, and changes nothing
// (docs/semantics.md, "Sent again"). So a gateway that did not get a
// commit's reply sends it again, and need not know whether the first one
// took effect. limitspec.ErrNoHold means only that the id holds nothing
// and ended nothing within reach of that operation: never held, ended by
// its For, or ended by another operation (a release, or a commit of
// other amounts).
//
// The simulation meets each limit once: a reserve whose max_tokens do
// not fit beside the holds, one that finds no slot, one past the
// minute's 5 requests; it sends a commit again, releases the hold of a
// request whose model fails, and waits for the minute to end and the
// tokens to refill. Each line shows what the key has left of the three
// limits and what the gateway holds.
//
//	go run ./examples/llmgateway [-redis redis://127.0.0.1:6379]
//
// By default it decides in process (package goimpl); with -redis, on that
// Redis (package redislimit), under key names of the run's own
// (redislimit.Options.Prefix), which expire by themselves. Every request
// carries its time (Request.Now), an offset from a fixed start, so that
// the lines it prints are the same on every run and on either limiter;
// testdata/output.txt holds them.
//
// # Behind HTTP
//
// server.go is the same gateway as an HTTP service, of the plan pro (4
// in flight, 120 requests and 30000 tokens a minute, 10000 requests a
// day, a fourth limit of the policy): package httplimit's
// middleware, whose rule is the holding policy llm, reserves each
// request's 1 slot, 1 request and the max_tokens of its X-Max-Tokens
// header for the API key of its X-Api-Key header before the handler
// calls the model, and commits when the handler returns, with the tokens
// the handler reported (httplimit.ReportUnitCost). A denied request gets
// a 429 with Retry-After. The middleware never releases: a model that
// fails reports 0 tokens, and its request counts.
//
// In production its limiter is package fallback's: Redis (package
// redislimit) while it answers, in process (package goimpl) while it
// does not, starting from what Redis last said was used and held
// (docs/semantics.md, "Holds behind the fallback"); a reserve that fails
// while the fallback's breaker is still closed (a blip, or the first
// moments of an outage) is denied, a 503 with Retry-After, since other
// requests still reach Redis meanwhile. A commit that does
// not reach Redis (Redis away, or the fallback's breaker open) is kept
// and sent again, by its hold's id, once Redis answers, so that the
// hold does not keep its slot and tokens there until its end, two
// minutes after its reserve; what was charged locally is told to Redis
// then too. load_test.go sends the gateway 50 clients of two API keys
// over HTTP, for 20 s, in four runs: Redis killed in the middle and
// restarted empty; killed and restarted from its append-only file;
// frozen and resumed; and never stopped, with two processes spinning on
// the CPU beside it. It
// counts on the handler's side that no key had more requests in flight,
// nor used more tokens or made more requests, than docs/semantics.md
// allows across the outage (on the busy host: than the limits), and,
// after each run, that Redis holds no slot and (but after an empty
// restart) counts every request served once. To try it:
//
//	go run ./examples/llmgateway -serve 127.0.0.1:8080 [-redis redis://127.0.0.1:6379]
//	curl -i -H 'X-Api-Key: sk-demo' -H 'X-Max-Tokens: 500' http://127.0.0.1:8080/v1/completions
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/redislimit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "llmgateway:", err)
		os.Exit(1)
	}
}

// run parses args, then plays the simulation on the limiter they choose,
// printing a line per step to out, or with -serve serves the HTTP
// gateway until ctx ends.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("llmgateway", flag.ContinueOnError)
	fs.SetOutput(out)
	redisURL := fs.String("redis", "", "decide on this Redis (redis://host:port); empty: in process")
	addr := fs.String("serve", "", "serve the HTTP gateway on this address (host:port) instead of playing the simulation")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *addr != "" {
		return serve(ctx, *addr, *redisURL, out)
	}
	lim, closeLimiter, err := open(ctx, *redisURL)
	if err != nil {
		return err
	}
	defer closeLimiter()
	policy, err := llmPolicy(demo)
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

// open returns the simulation's limiter: in process when redisURL is
// empty, else on that Redis; the function returned releases it.
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
	rdb, err := redisClient(redisURL)
	if err != nil {
		return nil, nil, err
	}
	// Keys of this run's own: a run repeated within their TTLs (a few
	// minutes) starts afresh, as its fixed times require.
	lim, err := redislimit.New(ctx, rdb, redislimit.Options{Prefix: "llmgateway:" + rand.Text() + ":"})
	if err != nil {
		rdb.Close()
		return nil, nil, err
	}
	return lim, func() { rdb.Close() }, nil
}

// plan is what an API key may use: requests in flight (slots), requests
// a minute, tokens a minute (a bucket of that many, refilled
// continuously over a minute) and, when daily is not 0, requests a day.
type plan struct {
	slots, requests, tokens, daily int64
}

// demo is the simulation's plan: small enough that a few requests meet
// each limit.
var demo = plan{slots: 3, requests: 5, tokens: 2000}

// llmPolicy is the holding policy llm of p, per API key: slots,
// requests and tokens, each counting its own unit, and, when p has one,
// the requests of the day (a fixed window of 24 hours, counting the
// request's Cost as requests does).
func llmPolicy(p plan) (*limitspec.Policy, error) {
	limits := []limitspec.PolicyLimit{
		{Name: "slots", Limit: limitspec.Concurrency{Limit: p.slots}, Identity: "api_key", Unit: "slots"},
		{Name: "requests", Limit: limitspec.FixedWindow{Limit: p.requests, Window: time.Minute}, Identity: "api_key"},
		{Name: "tokens", Limit: limitspec.TokenBucket{Capacity: p.tokens, RefillTokens: p.tokens, Refill: time.Minute}, Identity: "api_key", Unit: "tokens"},
	}
	if p.daily > 0 {
		limits = append(limits, limitspec.PolicyLimit{Name: "daily", Limit: limitspec.FixedWindow{Limit: p.daily, Window: 24 * time.Hour}, Identity: "api_key"})
	}
	pol, err := limitspec.NewPolicy("llm", limits...)
	if err != nil {
		return nil, err
	}
	return pol.WithHolds(), nil
}

// holdFor is how long a reserve holds: longer than any model call, so
// that a hold ends by itself only when its gateway has gone.
const holdFor = 2 * time.Minute
