package fallback_test

import (
	"context"
	"fmt"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// A Redis limiter with an in-process fallback, deciding 2 requests at
// once, then 1 a second, per user. Nothing listens on 127.0.0.1:1, so
// every call to Redis fails and package goimpl's limiter decides; Side
// says so. (The requests pass an explicit Now so that the output is
// exact; a service leaves it zero.)
func ExampleNew() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	remote, err := redislimit.New(ctx, rdb, redislimit.Options{})
	if err != nil {
		panic(err)
	}
	local, err := goimpl.New(goimpl.Options{})
	if err != nil {
		panic(err)
	}
	defer local.Close()
	lim, err := fallback.New(remote, local, fallback.Options{})
	if err != nil {
		panic(err)
	}

	plan := limitspec.GCRA{Burst: 2, Rate: 1, Period: time.Second}
	now := time.UnixMilli(1_700_000_000_000)
	for range 3 {
		res, err := lim.Limit(ctx, limitspec.Request{Key: "alice", Limit: plan, Cost: 1, Now: now})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%v: allowed %v, remaining %d, retry after %v\n", res.Side, res.Allowed, res.Limits[0].Remaining, res.RetryAfter)
	}
	fmt.Println("Redis failures:", lim.Stats().PrimaryErrors)
	// Output:
	// fallback: allowed true, remaining 1, retry after 0s
	// fallback: allowed true, remaining 0, retry after 0s
	// fallback: allowed false, remaining 0, retry after 1s
	// Redis failures: 3
}

// down is a primary whose Redis cannot be reached.
type down struct{}

func (down) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	return limitspec.Result{}, fmt.Errorf("%w: dial tcp 127.0.0.1:6379: connect: connection refused", limitspec.ErrUnavailable)
}

// A limit of 10 a minute shared by 3 processes, whose Redis is down: each
// process admits 3 a minute on its own (3 × 3 ≤ 10 < 4 × 3), reports a
// quota of 10 / 3 = 3, and the counters say so. A metrics exporter reads
// Stats when it is scraped: here it prints them in Prometheus's text
// format; with the Prometheus client, hand each field to a
// prometheus.CounterFunc (State to a GaugeFunc), as the package
// documentation shows.
func Example_stats() {
	local, err := goimpl.New(goimpl.Options{})
	if err != nil {
		panic(err)
	}
	defer local.Close()
	lim, err := fallback.New(down{}, local, fallback.Options{
		Processes: 3,
		Failures:  2,
		OpenFor:   time.Minute,
		OnStateChange: func(from, to fallback.State) {
			fmt.Printf("breaker: %v → %v\n", from, to)
		},
	})
	if err != nil {
		panic(err)
	}
	perMinute := limitspec.FixedWindow{Limit: 10, Window: time.Minute}
	now := time.UnixMilli(1_700_000_000_000)
	for i := 0; i < 4; i++ {
		res, err := lim.Limit(context.Background(), limitspec.Request{Key: "user:1", Limit: perMinute, Cost: 1, Now: now})
		if err != nil {
			panic(err)
		}
		q := res.Limits[0]
		fmt.Printf("%v: allowed %v, quota %d, remaining %d\n", res.Side, res.Allowed, q.Quota, q.Remaining)
	}

	st := lim.Stats()
	for _, side := range []limitspec.Side{limitspec.Primary, limitspec.Fallback, limitspec.FailOpen, limitspec.FailClosed} {
		fmt.Printf("ratelimit_decisions_total{side=%q} %d\n", side, st.Decisions(side))
	}
	fmt.Println("ratelimit_primary_errors_total", st.PrimaryErrors)
	fmt.Println("ratelimit_errors_total", st.Errors)
	fmt.Println("ratelimit_breaker_opens_total", st.Opens)
	fmt.Printf("ratelimit_breaker_state %d\n", st.State)
	fmt.Println("state:", st.State)
	// Output:
	// fallback: allowed true, quota 3, remaining 2
	// breaker: closed → open
	// fallback: allowed true, quota 3, remaining 1
	// fallback: allowed true, quota 3, remaining 0
	// fallback: allowed false, quota 3, remaining 0
	// ratelimit_decisions_total{side="primary"} 0
	// ratelimit_decisions_total{side="fallback"} 4
	// ratelimit_decisions_total{side="fail-open"} 0
	// ratelimit_decisions_total{side="fail-closed"} 0
	// ratelimit_primary_errors_total 2
	// ratelimit_errors_total 0
	// ratelimit_breaker_opens_total 1
	// ratelimit_breaker_state 1
	// state: open
}

// In FailClosed mode a request whose Redis is down is denied, with
// RetryAfter the time until the breaker lets a call through to Redis
// again (at least 1 ms); package httplimit answers it with 503 and
// Retry-After.
func ExampleOptions_failClosed() {
	lim, err := fallback.New(down{}, nil, fallback.Options{Mode: fallback.FailClosed, Failures: 1, OpenFor: 30 * time.Second})
	if err != nil {
		panic(err)
	}
	res, err := lim.Limit(context.Background(), limitspec.Request{Key: "user:1", Limit: limitspec.GCRA{Burst: 5, Rate: 1, Period: time.Second}, Cost: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Side, res.Allowed, res.RetryAfter.Round(time.Second), len(res.Limits))
	// Output:
	// fail-closed false 30s 0
}
