package rls_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	_ "github.com/limitspec/limitspec/examples/quota" // a user's own spec: quota.daily_quota
	"github.com/limitspec/limitspec/internal/oracle"
	"github.com/limitspec/limitspec/rls"
)

// catalogue is a limit of every algorithm of the catalogue a decision
// takes alone (concurrency counts holds), with its parameters.
var catalogue = map[string]map[string]int64{
	"fixed_window":   {"limit": 4, "window_ms": 60000},
	"token_bucket":   {"capacity": 4, "refill_tokens": 1, "refill_ms": 1000},
	"gcra":           {"burst": 4, "rate": 1, "period_ms": 1000},
	"sliding_window": {"limit": 4, "window_ms": 10000},
	"leaky_bucket":   {"capacity": 4, "rate": 1, "period_ms": 1000},
	"sliding_log":    {"limit": 4, "window_ms": 10000},
	"bucket_window":  {"limit": 4, "window_ms": 10000, "bucket_ms": 1000},
	"meta_window":    {"limit": 4, "window_ms": 10000},
}

// TestEveryAlgorithm: a descriptor of each algorithm of the catalogue,
// configured by algorithm and params, decides as the independent oracle
// does, request after request (costs 1 and 2, 300 ms apart), on every
// target; and a user's own spec's algorithm decides as its worked
// example says.
func TestEveryAlgorithm(t *testing.T) {
	var yaml strings.Builder
	yaml.WriteString("domain: algs\ndescriptors:\n")
	var names []string
	for alg, params := range catalogue {
		names = append(names, alg)
		fmt.Fprintf(&yaml, "  - key: %s\n    rate_limit:\n      algorithm: %s\n      params: {", alg, alg)
		var ps []string
		for k, v := range params {
			ps = append(ps, fmt.Sprintf("%s: %d", k, v))
		}
		fmt.Fprintf(&yaml, "%s}\n", strings.Join(ps, ", "))
	}
	yaml.WriteString("  - key: daily\n    rate_limit:\n      algorithm: quota.daily_quota\n      params: {limit: 3, offset_ms: 0}\n")
	sort.Strings(names)
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			clk := newClock()
			c := newService(t, tg.new(t, clk), loadYAML(t, yaml.String()), rls.Options{})
			for _, alg := range names {
				model, err := oracle.New(alg, catalogue[alg])
				if err != nil {
					t.Fatal(err)
				}
				for i := range 8 {
					cost := int64(1 + i%2)
					now := t0.Add(time.Duration(i) * 300 * time.Millisecond)
					clk.ms.Store(now.UnixMilli())
					want, err := model.Decide("k", now.UnixMilli(), cost, nil)
					if err != nil {
						t.Fatal(err)
					}
					d := desc(alg, "k")
					d.HitsAddend = wrapperspb.UInt64(uint64(cost))
					resp := ask(t, c, &pb.RateLimitRequest{Domain: "algs", Descriptors: []*rlv3.RateLimitDescriptor{d}})
					st := resp.Statuses[0]
					if (st.Code == ok) != want.Allowed || int64(st.LimitRemaining) != want.Remaining {
						t.Fatalf("%s, request %d (cost %d): got %v remaining %d, the oracle: allowed %v remaining %d",
							alg, i, cost, st.Code, st.LimitRemaining, want.Allowed, want.Remaining)
					}
				}
			}
			clk.ms.Store(t0.UnixMilli())
			daily := &pb.RateLimitRequest{Domain: "algs", Descriptors: []*rlv3.RateLimitDescriptor{desc("daily", "k")}}
			run(t, c, []step{
				{daily, ok, []status{{ok, 2}}},
				{daily, ok, []status{{ok, 1}}},
				{daily, ok, []status{{ok, 0}}},
				{daily, over, []status{{over, 0}}},
			})
		})
	}
}
