package lease_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/lease"
)

// Leases of 5 from a primary (here an in-process limiter standing in for
// Redis), on a fixed window of 7: the first request takes a lease, the
// next four spend it without the primary; with 2 left, the 6th is denied
// a lease, and from then on each request is decided alone, exactly.
func Example() {
	primary, _ := goimpl.New(goimpl.Options{}) // in production: a redislimit.Limiter, behind a fallback.Limiter
	defer primary.Close()
	lim, err := lease.New(primary, lease.Options{Size: 5})
	if err != nil {
		panic(err)
	}
	plan := limitspec.FixedWindow{Limit: 7, Window: time.Minute}
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for i := 1; i <= 8; i++ {
		res, _ := lim.Limit(context.Background(), limitspec.Request{Key: "alice", Limit: plan, Cost: 1, Now: now})
		fmt.Printf("%d: allowed %v, remaining %d\n", i, res.Allowed, res.Limits[0].Remaining)
	}
	st := lim.Stats()
	fmt.Printf("leases %d, denied %d, sent alone %d\n", st.Leases, st.Denied, st.Direct)
	// Output:
	// 1: allowed true, remaining 6
	// 2: allowed true, remaining 5
	// 3: allowed true, remaining 4
	// 4: allowed true, remaining 3
	// 5: allowed true, remaining 2
	// 6: allowed true, remaining 1
	// 7: allowed true, remaining 0
	// 8: allowed false, remaining 0
	// leases 1, denied 1, sent alone 3
}

// leased is the README's limiter on remote: leases of 10, in front of a
// fallback that fails closed.
func leased(remote limitspec.Limiter) (*lease.Limiter, error) {
	safe, err := fallback.New(remote, nil, fallback.Options{Mode: fallback.FailClosed})
	if err != nil {
		return nil, err
	}
	return lease.New(safe, lease.Options{Size: 10})
}

// outage is a primary that is down while down is true.
type outage struct {
	limitspec.Limiter
	down bool
}

func (o *outage) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	if o.down {
		return limitspec.Result{}, fmt.Errorf("connection refused: %w", limitspec.ErrUnavailable)
	}
	return o.Limiter.Limit(ctx, req)
}

// In front of a fallback that fails closed, an outage only under-admits:
// the process spends the lease it holds, then denies.
func Example_failClosed() {
	slog.SetDefault(slog.New(slog.DiscardHandler)) // the fallback logs its breaker
	primary, _ := goimpl.New(goimpl.Options{})     // in production: a redislimit.Limiter
	defer primary.Close()
	remote := &outage{Limiter: primary}
	lim, err := leased(remote)
	if err != nil {
		panic(err)
	}
	req := limitspec.Request{Key: "alice", Limit: limitspec.FixedWindow{Limit: 100, Window: time.Minute}, Cost: 1}
	count := func(n int) (admitted int) {
		for range n {
			if res, err := lim.Limit(context.Background(), req); err == nil && res.Allowed {
				admitted++
			} else if err != nil && !errors.Is(err, limitspec.ErrUnavailable) {
				panic(err)
			}
		}
		return admitted
	}
	fmt.Println("Redis up, admitted:", count(3))
	remote.down = true
	fmt.Println("Redis down, admitted:", count(20))
	st := lim.Stats()
	fmt.Printf("charged on Redis %d, held %d\n", st.Leased, st.Leased-st.Spent-st.Lapsed)
	// Output:
	// Redis up, admitted: 3
	// Redis down, admitted: 7
	// charged on Redis 10, held 0
}
