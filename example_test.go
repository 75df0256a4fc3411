package limitspec_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/httplimit"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// serve is the README's opening: a GCRA limit per client IP, decided on
// Redis, in this process while Redis is unavailable, behind the HTTP
// middleware.
func serve(ctx context.Context, mux *http.ServeMux) error {
	// one dial per call, and go-redis's lines at debug level: behind the
	// fallback, the local limiter is the retry, and an outage is logged once
	redis.SetLogger(redislimit.GoRedisLogger{Level: slog.LevelDebug})
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true, DialerRetries: 1})
	remote, err := redislimit.New(ctx, rdb, redislimit.Options{})
	if err != nil {
		return err
	}
	local, err := goimpl.New(goimpl.Options{})
	if err != nil {
		return err
	}
	defer local.Close()
	limiter, err := fallback.New(remote, local, fallback.Options{})
	if err != nil {
		return err
	}
	perIP := limitspec.GCRA{Burst: 20, Rate: 10, Period: time.Second}
	mw, err := httplimit.New(limiter, httplimit.Options{Limit: perIP})
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
	if err := serve(context.Background(), mux); err != nil {
		log.Fatal(err)
	}
}

// ExampleLimiter decides through the Limiter interface, here package
// goimpl's limiter in process memory (package redislimit's is called the
// same way), at explicit times: the limit travels with each request.
func ExampleLimiter() {
	mem, err := goimpl.New(goimpl.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	var lim limitspec.Limiter = mem
	perUser := limitspec.GCRA{Burst: 2, Rate: 1, Period: time.Second}
	now := time.UnixMilli(1_700_000_000_000)
	for range 3 {
		res, err := lim.Limit(context.Background(), limitspec.Request{Key: "alice", Limit: perUser, Cost: 1, Now: now})
		if err != nil {
			log.Fatal(err)
		}
		q := res.Limits[0]
		fmt.Println(res.Allowed, q.Remaining, res.RetryAfter, q.ResetAfter, q.Window())
	}
	// Output:
	// true 1 0s 1s 2s
	// true 0 0s 2s 2s
	// false 0 1s 2s 2s
}

// ExampleNewPolicy builds a policy per plan from Go values: a burst per
// user, and a daily quota per user that differs by plan. The limits are
// named alike in both plans, so that a user's burst and day are counted
// once, whichever plan decides (a state is named by its limit, not by
// its policy).
func ExampleNewPolicy() {
	plan := func(name string, daily int64) (*limitspec.Policy, error) {
		return limitspec.NewPolicy(name,
			limitspec.PolicyLimit{Name: "burst", Limit: limitspec.GCRA{Burst: 5, Rate: 10, Period: time.Second}, Identity: "user"},
			limitspec.PolicyLimit{Name: "daily", Limit: limitspec.SlidingLog{Limit: daily, Window: 24 * time.Hour}, Identity: "user"},
		)
	}
	free, err := plan("free", 1_000)
	if err != nil {
		log.Fatal(err)
	}
	pro, err := plan("pro", 100_000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(free.Name(), pro.Name(), free.Identities(), free.OneSlot())
	// the state both plans' daily limits keep, under the limit's name
	fmt.Println(pro.Limits()[1].Limit.(limitspec.StateNamer).State())
	_, err = plan("trial", 0)
	fmt.Println(err)
	// Output:
	// free pro [user] true
	// sl:86400000
	// trial.daily: sliding_log: parameter limit must be an integer in [1, 100000], got 0
}
