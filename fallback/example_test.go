package fallback_test

import (
	"context"
	"fmt"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
)

// down is a primary whose Redis cannot be reached.
type down struct{}

func (down) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	return limitspec.Result{}, fmt.Errorf("%w: dial tcp 127.0.0.1:6379: connect: connection refused", limitspec.ErrUnavailable)
}

// A limit of 10 a minute shared by 3 processes, whose Redis is down: each
// process admits 3 a minute on its own, and the counters say so. A
// metrics exporter reads Stats when it is scraped: here it prints them in
// Prometheus's text format; with the Prometheus client, hand each field
// to a prometheus.CounterFunc (State to a GaugeFunc), as the package
// documentation shows.
func Example_stats() {
	fw, err := goimpl.NewFixedWindow(goimpl.FixedWindowParams{Limit: 10, WindowMs: 60000})
	if err != nil {
		panic(err)
	}
	lim, err := fallback.New(down{}, limitspec.Local("fixed_window", fw), fallback.Options{
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
	now := time.UnixMilli(1_700_000_000_000)
	for i := 0; i < 4; i++ {
		res, err := lim.Limit(context.Background(), limitspec.Request{Key: "user:1", Cost: 1, Now: now})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%v: allowed %v, limit %d, remaining %d\n", res.Side, res.Allowed, res.Limit, res.Remaining)
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
	// fallback: allowed true, limit 3, remaining 2
	// breaker: closed → open
	// fallback: allowed true, limit 3, remaining 1
	// fallback: allowed true, limit 3, remaining 0
	// fallback: allowed false, limit 3, remaining 0
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
