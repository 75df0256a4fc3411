package quota_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/examples/quota"
	"github.com/limitspec/limitspec/goimpl"
)

// A day of the quota begins at 05:00 UTC: three requests fill it a
// second before, the fourth waits that second, and at 05:00 the quota is
// whole again.
func Example() {
	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer lim.Close()
	daily := quota.DailyQuota{Limit: 3, Offset: 5 * time.Hour}
	at := time.Date(2026, 11, 25, 4, 59, 59, 0, time.UTC)
	for _, now := range []time.Time{at, at, at, at, at.Add(time.Second)} {
		res, err := lim.Limit(context.Background(), limitspec.Request{Key: "acme", Limit: daily, Cost: 1, Now: now})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(now.Format("15:04:05"), res.Allowed, res.Limits[0].Remaining, res.RetryAfter, res.Limits[0].ResetAfter)
	}
	// Output:
	// 04:59:59 true 2 0s 1s
	// 04:59:59 true 1 0s 1s
	// 04:59:59 true 0 0s 1s
	// 04:59:59 false 0 1s 1s
	// 05:00:00 true 2 0s 24h0m0s
}

// The policy api puts the catalogue's gcra in front of the daily quota,
// whose limit comes with each call (a tenant's plan): the quota binds.
func ExampleAPIPolicy() {
	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer lim.Close()
	api, err := quota.APIPolicy(2)
	if err != nil {
		log.Fatal(err)
	}
	noon := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for range 3 {
		res, err := lim.Limit(context.Background(), limitspec.Request{Policy: api, IDs: map[string]string{"key": "acme"}, Cost: 1, Now: noon})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Allowed, res.Limits[res.Binding].Name, res.RetryAfter)
	}
	// Output:
	// true daily 0s
	// true daily 0s
	// false daily 17h0m0s
}
