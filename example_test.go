package limitspec_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/httplimit"
	"github.com/limitspec/limitspec/redisimpl"
	"github.com/redis/go-redis/v9"
)

// serve is the README's opening: a GCRA limit per client IP, decided on
// Redis, by goimpl in this process while Redis is unavailable, behind
// the HTTP middleware.
func serve(mux *http.ServeMux) error {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	remote, err := redisimpl.NewGCRA(rdb, goimpl.GCRAParams{Burst: 20, Rate: 10, PeriodMs: 1000})
	if err != nil {
		return err
	}
	limiter, err := fallback.New(remote, remote.Local(), fallback.Options{})
	if err != nil {
		return err
	}
	mw, err := httplimit.New(limiter, httplimit.Options{})
	if err != nil {
		return err
	}
	return http.ListenAndServe(":8080", mw.Handler(mux))
}

// Example is the README's opening (it serves until stopped, so it has
// no output to check; TestOpening runs the same composition).
func Example() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello") })
	if err := serve(mux); err != nil {
		log.Fatal(err)
	}
}

// ExampleLimiter decides through the Limiter interface, here with a
// goimpl limiter in process memory (a Redis limiter of package redisimpl
// is called the same way), at explicit times.
func ExampleLimiter() {
	gcra, err := goimpl.NewGCRA(goimpl.GCRAParams{Burst: 2, Rate: 1, PeriodMs: 1000})
	if err != nil {
		log.Fatal(err)
	}
	var lim limitspec.Limiter = limitspec.Local("per-user", gcra)
	now := time.UnixMilli(1_700_000_000_000)
	for range 3 {
		res, err := lim.Limit(context.Background(), limitspec.Request{Key: "alice", Cost: 1, Now: now})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Allowed, res.Remaining, res.RetryAfter(), res.ResetAfter(), res.Limits[0].Window)
	}
	// Output:
	// true 1 0s 1s 2s
	// true 0 0s 2s 2s
	// false 0 1s 2s 2s
}
