package goimpl_test

import (
	"fmt"

	"github.com/limitspec/limitspec/goimpl"
)

// A forced call charges a request that has been served already, even when
// the limiter would have denied it (the README's example): after a burst
// of 16 spent at once, 4 more are charged. Each costs T = 60000 / 30 =
// 2000 ms, so the next 4 wait 4·T = 8 s past the debt of 4·T: 16 s
// instead of 8 s, and the bucket is full again after 20·T = 40 s.
func ExampleGCRA_Force() {
	lim, err := goimpl.NewGCRA(goimpl.GCRAParams{Burst: 16, Rate: 30, PeriodMs: 60000})
	if err != nil {
		panic(err)
	}
	defer lim.StopSweeper()
	const t = 1_700_000_000_000
	spent, _ := lim.Allow("user123", t, 16)
	forced, _ := lim.Force("user123", t, 4)
	fmt.Println(spent.Allowed, spent.Remaining, spent.ResetAfterMs)
	fmt.Println(forced.Allowed, forced.Remaining, forced.RetryAfterMs, forced.ResetAfterMs)
	// Output:
	// true 0 32000
	// false 0 16000 40000
}
