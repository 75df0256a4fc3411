package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/httplimit"
	"github.com/limitspec/limitspec/redislimit"
)

// The HTTP gateway: the policy llm as package httplimit's middleware, in
// front of a model.

// The gateway's request header fields: the caller's API key, and the
// most tokens its answer may take.
const (
	apiKeyHeader    = "X-Api-Key"
	maxTokensHeader = "X-Max-Tokens"
)

// pro is the HTTP gateway's plan: 4 requests in flight, 120 a minute,
// 30000 tokens a minute and 10000 requests a day per API key.
var pro = plan{slots: 4, requests: 120, tokens: 30000, daily: 10000}

// model answers a completion of at most maxTokens: the tokens its answer
// took, which the model knows only once it has answered.
type model func(ctx context.Context, maxTokens int64) (used int64, err error)

// newServer returns the HTTP gateway of plan p on lim, which must keep
// holds (limitspec.Holder): each request is decided by the holding
// policy llm for the API key of its X-Api-Key header. The middleware
// reserves 1 slot, 1 request and the X-Max-Tokens header's tokens before
// the handler runs (a 429 with Retry-After when a limit denies them),
// and commits when the handler returns: the slot freed, the request
// counted and the tokens the handler reported charged.
func newServer(lim limitspec.Limiter, p plan, m model) (http.Handler, error) {
	policy, err := llmPolicy(p)
	if err != nil {
		return nil, err
	}
	mw, err := httplimit.New(lim, httplimit.Options{
		Policy: policy,
		IDs:    map[string]httplimit.KeyFunc{"api_key": httplimit.Header(apiKeyHeader)},
		Costs: func(r *http.Request) (map[string]int64, error) {
			n, err := maxTokens(r, p)
			return map[string]int64{"tokens": n}, err
		},
		HoldFor: holdFor,
	})
	if err != nil {
		return nil, err
	}
	return mw.Handler(completions(p, m)), nil
}

// maxTokens is r's max_tokens, its X-Max-Tokens header: 1 to the plan's
// tokens a minute (more could never be admitted), else a 400.
func maxTokens(r *http.Request, p plan) (int64, error) {
	n, err := strconv.ParseInt(r.Header.Get(maxTokensHeader), 10, 64)
	if err != nil || n < 1 || n > p.tokens {
		return 0, &httplimit.Error{Status: http.StatusBadRequest,
			Detail: fmt.Sprintf("header %s must be a number of tokens from 1 to %d", maxTokensHeader, p.tokens)}
	}
	return n, nil
}

// completions is the handler behind the middleware: it calls m and
// reports the tokens its answer took (httplimit.ReportUnitCost), which
// the middleware commits once the handler returns. A model that fails
// has answered nothing: the handler reports 0 tokens, and the request
// still counts (the middleware commits; it never releases).
func completions(p plan, m model) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := maxTokens(r, p) // checked by the middleware already
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		used, err := m(r.Context(), n)
		if err != nil {
			httplimit.ReportUnitCost(r, "tokens", 0)
			http.Error(w, "the model failed: "+err.Error(), http.StatusBadGateway)
			return
		}
		httplimit.ReportUnitCost(r, "tokens", used)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"usage\": {\"completion_tokens\": %d}}\n", used)
	})
}

// simulatedModel is a model that answers after a random time from
// minReply to maxReply, taking a random number of tokens from a quarter
// of max_tokens to all of them.
func simulatedModel(minReply, maxReply time.Duration) model {
	return func(ctx context.Context, maxTokens int64) (int64, error) {
		t := time.NewTimer(minReply + rand.N(maxReply-minReply+1))
		defer t.Stop()
		select {
		case <-t.C:
			return maxTokens/4 + rand.Int64N(maxTokens-maxTokens/4+1), nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// productionLimiter is the gateway's limiter in production, package
// fallback's with opts: Redis (package redislimit, on rdb, its keys under
// prefix) while it answers, and local (in production package goimpl's;
// Mode Local, the default) while it does not. Behind the fallback, a
// process then holds and charges at most the limits itself, beside what
// Redis held when it went away (docs/semantics.md, "Holds behind the
// fallback"). rdb and local stay the caller's, to close.
func productionLimiter(ctx context.Context, rdb redis.UniversalClient, prefix string, local limitspec.Limiter, opts fallback.Options) (*fallback.Limiter, error) {
	remote, err := redislimit.New(ctx, rdb, redislimit.Options{Prefix: prefix})
	if err != nil {
		return nil, err
	}
	return fallback.New(remote, local, opts)
}

// serve serves the HTTP gateway of the plan pro, with a simulated model,
// on addr until ctx ends: in process, or with redisURL on that Redis
// behind a fallback.
func serve(ctx context.Context, addr, redisURL string, out io.Writer) error {
	lim, closeLimiter, err := serveLimiter(ctx, redisURL)
	if err != nil {
		return err
	}
	defer closeLimiter()
	h, err := newServer(lim, pro, simulatedModel(200*time.Millisecond, 2*time.Second))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "the gateway serves http://%s/ (%d slots, %d requests a minute, %d tokens a minute, %d requests a day per API key); try\n", ln.Addr(), pro.slots, pro.requests, pro.tokens, pro.daily)
	fmt.Fprintf(out, "  curl -i -H '%s: sk-demo' -H '%s: 500' http://%s/v1/completions\n", apiKeyHeader, maxTokensHeader, ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Shutdown(context.WithoutCancel(ctx))
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serveLimiter is serve's limiter: goimpl's, or with redisURL the
// production one on that Redis; the function returned releases it.
func serveLimiter(ctx context.Context, redisURL string) (limitspec.Limiter, func(), error) {
	if redisURL == "" {
		lim, err := goimpl.New(goimpl.Options{})
		if err != nil {
			return nil, nil, err
		}
		return lim, func() { lim.Close() }, nil
	}
	rdb, err := redisClient(redisURL)
	if err != nil {
		return nil, nil, err
	}
	local, err := goimpl.New(goimpl.Options{})
	if err != nil {
		rdb.Close()
		return nil, nil, err
	}
	lim, err := productionLimiter(ctx, rdb, "llmgateway:", local, fallback.Options{})
	if err != nil {
		local.Close()
		rdb.Close()
		return nil, nil, err
	}
	return lim, func() { local.Close(); rdb.Close() }, nil
}

// redisClient is a go-redis client of the Redis at url, as redislimit
// needs it: with ContextTimeoutEnabled, so that each call ends with its
// context (the fallback's Timeout). A refused connection is not dialled
// again (go-redis would try 5 times, 100 ms apart): behind the fallback,
// the local limiter is the retry. As the README's setup does, go-redis's
// own lines (a failed dial, at each call while Redis is away) go to
// slog at debug level: the fallback logs an outage once.
func redisClient(url string) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("-redis: %w", err)
	}
	redis.SetLogger(redislimit.GoRedisLogger{Level: slog.LevelDebug})
	opt.ContextTimeoutEnabled = true
	opt.DialerRetries = 1
	return redis.NewClient(opt), nil
}
