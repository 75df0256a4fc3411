package policyfile_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/policyfile"
)

// ExampleParse reads a policy from YAML (JSON reads the same) and
// decides it: every limit admits, or none consumes.
func ExampleParse() {
	p, err := policyfile.Parse([]byte(`
name: api
limits:
  - {name: burst, algorithm: gcra, identity: user, params: {burst: 2, rate: 1, period_ms: 1000}}
  - {name: daily, algorithm: sliding_log, identity: user, params: {limit: 3, window_ms: 86400000}}
`))
	if err != nil {
		log.Fatal(err)
	}
	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer lim.Close()
	now := time.UnixMilli(1_700_000_000_000)
	for i := range 5 {
		res, err := lim.Limit(context.Background(), limitspec.Request{Policy: p, IDs: map[string]string{"user": "alice"},
			Cost: 1, Now: now.Add(time.Duration(i) * time.Second)})
		if err != nil {
			log.Fatal(err)
		}
		b := res.Limits[res.Binding]
		fmt.Println(res.Allowed, b.Name, b.Remaining, res.RetryAfter)
	}
	// The binding limit is the one with the least remaining for its quota
	// (1 of 2 of the burst, then 1 of 3 of the day); the fourth request, at
	// t0+3s, waits until the first leaves the day: 86400 s - 3 s.
	// Output:
	// true burst 1 0s
	// true daily 1 0s
	// true daily 0 0s
	// false daily 0 23h59m57s
	// false daily 0 23h59m56s
}
