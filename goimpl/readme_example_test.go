package goimpl_test

import (
	"fmt"
	"log"
	"time"

	"github.com/limitspec/limitspec/goimpl"
)

// ExampleNewGCRA is the README's goimpl example: 16 at once, then 30 a
// minute, at the process clock.
func ExampleNewGCRA() {
	lim, err := goimpl.NewGCRA(goimpl.GCRAParams{Burst: 16, Rate: 30, PeriodMs: 60000})
	// or: lim, err := goimpl.New("gcra", map[string]int64{"burst": 16, "rate": 30, "period_ms": 60000})
	if err != nil {
		log.Fatal(err) // errors.Is(err, goimpl.ErrBadInput)
	}
	res, err := lim.Allow("user123", goimpl.Now, 1)
	if err != nil {
		log.Fatal(err)
	}
	if !res.Allowed {
		time.Sleep(res.RetryAfter())
	}
	fmt.Println(res.Allowed, res.Limit, res.Remaining)
	// Output: true 16 15
}

// ExampleNewPolicy is the README's policy example: admitted, the burst
// limit (4 of 5 left) binds rather than the daily one (999 of 1000).
func ExampleNewPolicy() {
	p, err := goimpl.NewPolicy("burst_quota", map[string]int64{"daily.limit": 1000})
	r, err := p.Allow(map[string]string{"user": "alice"}, goimpl.Now, 1)
	// r.Allowed, r.RetryAfterMs: the policy's; r.Index: the binding limit; r.Limits[i]: each limit's
	fmt.Println(err, r.Allowed, r.Index, len(r.Limits))
	// Output: <nil> true 1 2
}
