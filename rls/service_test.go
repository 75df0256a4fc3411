package rls_test

import (
	"context"
	"math"
	"testing"
	"time"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/rls"
)

// step is one request of a test's sequence and what it must get: the
// overall code and each descriptor's status.
type step struct {
	req      *pb.RateLimitRequest
	overall  pb.RateLimitResponse_Code
	statuses []status
}

// run sends the steps in turn, comparing each response.
func run(t *testing.T, c pb.RateLimitServiceClient, steps []step) {
	t.Helper()
	for i, s := range steps {
		resp := ask(t, c, s.req)
		got := struct {
			Overall  pb.RateLimitResponse_Code
			Statuses []status
		}{resp.OverallCode, statusesOf(resp)}
		want := struct {
			Overall  pb.RateLimitResponse_Code
			Statuses []status
		}{s.overall, s.statuses}
		if d := cmp.Diff(want, got, cmp.AllowUnexported(status{})); d != "" {
			t.Fatalf("step %d (%v): (-want +got)\n%s", i, s.req.Descriptors, d)
		}
	}
}

const twoLimits = `
domain: api
descriptors:
  - key: user
    rate_limit: {unit: minute, requests_per_unit: 2}
  - key: route
    rate_limit: {unit: minute, requests_per_unit: 10}
`

// TestAllOrNothing: a request whose user is over its limit charges its
// route nothing (the route's status is what it would admit), on every
// target; under Options.Independent the route is charged, as the
// reference charges it.
func TestAllOrNothing(t *testing.T) {
	both := &pb.RateLimitRequest{Domain: "api", Descriptors: []*rlv3.RateLimitDescriptor{desc("user", "alice"), desc("route", "/a")}}
	route := &pb.RateLimitRequest{Domain: "api", Descriptors: []*rlv3.RateLimitDescriptor{desc("route", "/a")}}
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			l := tg.new(t, newClock())
			atomic := newService(t, l, loadYAML(t, twoLimits), rls.Options{})
			run(t, atomic, []step{
				{both, ok, []status{{ok, 1}, {ok, 9}}},
				{both, ok, []status{{ok, 0}, {ok, 8}}},
				{both, over, []status{{over, 0}, {ok, 8}}},
				{route, ok, []status{{ok, 7}}},
			})
			other := loadYAML(t, `
domain: parity
descriptors:
  - key: user
    rate_limit: {unit: minute, requests_per_unit: 2}
  - key: route
    rate_limit: {unit: minute, requests_per_unit: 10}
`)
			independent := newService(t, l, other, rls.Options{Independent: true})
			both, route := clone(both, "parity"), clone(route, "parity")
			run(t, independent, []step{
				{both, ok, []status{{ok, 1}, {ok, 9}}},
				{both, ok, []status{{ok, 0}, {ok, 8}}},
				{both, over, []status{{over, 0}, {ok, 7}}},
				{route, ok, []status{{ok, 6}}},
			})
		})
	}
}

// clone is req in another domain.
func clone(req *pb.RateLimitRequest, domain string) *pb.RateLimitRequest {
	return &pb.RateLimitRequest{Domain: domain, Descriptors: req.Descriptors, HitsAddend: req.HitsAddend}
}

// TestCosts: hits_addend is the cost, per descriptor or per request; a
// descriptor's 0 checks without charging, a request's 0 counts 1.
func TestCosts(t *testing.T) {
	cfg := `
domain: llm
descriptors:
  - key: tokens
    rate_limit: {unit: minute, requests_per_unit: 100}
`
	with := func(request uint32, perDescriptor *wrapperspb.UInt64Value) *pb.RateLimitRequest {
		d := desc("tokens", "acme")
		d.HitsAddend = perDescriptor
		return &pb.RateLimitRequest{Domain: "llm", Descriptors: []*rlv3.RateLimitDescriptor{d}, HitsAddend: request}
	}
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			c := newService(t, tg.new(t, newClock()), loadYAML(t, cfg), rls.Options{})
			run(t, c, []step{
				{with(30, nil), ok, []status{{ok, 70}}},
				{with(5, wrapperspb.UInt64(0)), ok, []status{{ok, 70}}},
				{with(0, nil), ok, []status{{ok, 69}}},
				{with(1, wrapperspb.UInt64(70)), over, []status{{over, 69}}},
				{with(0, wrapperspb.UInt64(69)), ok, []status{{ok, 0}}},
			})
		})
	}
}

// TestReferenceRules: unlimited, requests_per_unit 0, replaces and
// shadow_mode mean what they mean to the reference; a descriptor that
// admits nothing keeps the others of its request from being charged.
func TestReferenceRules(t *testing.T) {
	cfg := `
domain: rules
descriptors:
  - key: free
    rate_limit: {unlimited: true}
  - key: closed
    rate_limit: {unit: second, requests_per_unit: 0}
  - key: user
    rate_limit: {name: user_default, unit: minute, requests_per_unit: 5}
  - key: vip
    rate_limit:
      name: vip
      unit: minute
      requests_per_unit: 100
      replaces: [{name: user_default}]
  - key: watched
    shadow_mode: true
    rate_limit: {unit: minute, requests_per_unit: 1}
`
	r := func(ds ...*rlv3.RateLimitDescriptor) *pb.RateLimitRequest {
		return &pb.RateLimitRequest{Domain: "rules", Descriptors: ds}
	}
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			c := newService(t, tg.new(t, newClock()), loadYAML(t, cfg), rls.Options{})
			run(t, c, []step{
				{r(desc("free", "x")), ok, []status{{ok, math.MaxUint32}}},
				{r(desc("unknown", "x")), ok, []status{{ok, -1}}},
				{r(desc("closed", "x"), desc("user", "bob")), over, []status{{over, 0}, {ok, 5}}},
				{r(desc("user", "bob")), ok, []status{{ok, 4}}},
				{r(desc("user", "carol"), desc("vip", "carol")), ok, []status{{ok, -1}, {ok, 99}}},
				{r(desc("watched", "w")), ok, []status{{ok, 0}}},
				{r(desc("watched", "w")), ok, []status{{ok, 0}}},
				// a shadow limit is charged only when the enforcing ones admit
				{r(costly(desc("user", "eve"), 6), desc("watched", "v")), over, []status{{over, 5}, {ok, 1}}},
				{r(desc("watched", "v")), ok, []status{{ok, 0}}},
			})
		})
	}
}

// TestOverride: a descriptor's own limit is a fixed window of it.
func TestOverride(t *testing.T) {
	d := desc("tenant", "t1")
	d.Limit = &rlv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 2, Unit: 2} // MINUTE
	req := &pb.RateLimitRequest{Domain: "api", Descriptors: []*rlv3.RateLimitDescriptor{d}}
	c := newService(t, targets()[0].new(t, newClock()), loadYAML(t, twoLimits), rls.Options{})
	run(t, c, []step{
		{req, ok, []status{{ok, 1}}},
		{req, ok, []status{{ok, 0}}},
		{req, over, []status{{over, 0}}},
	})
}

// TestRefusals: a request the service cannot decide gets
// InvalidArgument and charges nothing; a Redis that does not answer, a
// status the caller can act on within its deadline.
func TestRefusals(t *testing.T) {
	c := newService(t, targets()[0].new(t, newClock()), loadYAML(t, twoLimits), rls.Options{})
	neg := desc("user", "alice")
	neg.IsNegativeHits = true
	huge := desc("user", "alice")
	huge.HitsAddend = wrapperspb.UInt64(1 << 53)
	for _, tc := range []struct {
		name string
		req  *pb.RateLimitRequest
	}{
		{"empty domain", &pb.RateLimitRequest{Descriptors: []*rlv3.RateLimitDescriptor{desc("user", "a")}}},
		{"no descriptors", &pb.RateLimitRequest{Domain: "api"}},
		{"negative hits", &pb.RateLimitRequest{Domain: "api", Descriptors: []*rlv3.RateLimitDescriptor{desc("route", "/a"), neg}}},
		{"cost past 2^53-1", &pb.RateLimitRequest{Domain: "api", Descriptors: []*rlv3.RateLimitDescriptor{desc("route", "/a"), huge}}},
		{"force not true", &pb.RateLimitRequest{Domain: "api", Descriptors: []*rlv3.RateLimitDescriptor{desc("route", "/a", rls.ForceEntry, "yes")}}},
		{"force with a hold", &pb.RateLimitRequest{Domain: "api", Descriptors: []*rlv3.RateLimitDescriptor{
			desc("route", "/a", rls.ForceEntry, "true", rls.HoldEntry, "commit", rls.HoldIDEntry, "j")}}},
	} {
		_, err := c.ShouldRateLimit(context.Background(), tc.req)
		if grpcstatus.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: got %v, want InvalidArgument", tc.name, err)
		}
	}
	run(t, c, []step{{&pb.RateLimitRequest{Domain: "api", Descriptors: []*rlv3.RateLimitDescriptor{desc("route", "/a")}}, ok, []status{{ok, 9}}}})
}

// TestUnreachableRedis: with no Redis to reach, a call fails with
// Unavailable (or DeadlineExceeded) by its deadline.
func TestUnreachableRedis(t *testing.T) {
	l := newRedisLimiter(t, unreachable(t), newClock())
	c := newService(t, l, loadYAML(t, twoLimits), rls.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.ShouldRateLimit(ctx, &pb.RateLimitRequest{Domain: "api", Descriptors: []*rlv3.RateLimitDescriptor{desc("user", "a")}})
	if code := grpcstatus.Code(err); code != codes.Unavailable && code != codes.DeadlineExceeded {
		t.Fatalf("got %v, want Unavailable or DeadlineExceeded", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("answered after %v, past the deadline of 1 s", waited)
	}
}

// costly is d with a hits_addend of n.
func costly(d *rlv3.RateLimitDescriptor, n uint64) *rlv3.RateLimitDescriptor {
	d.HitsAddend = wrapperspb.UInt64(n)
	return d
}

// TestCurrentLimit: a status's current_limit is the configured unit and
// requests per unit; for an algorithm configured without them, its
// quota and the unit its window is (a week, here), or none.
func TestCurrentLimit(t *testing.T) {
	cfg := `
domain: cl
descriptors:
  - key: weekly
    rate_limit:
      algorithm: sliding_log
      params: {limit: 7, window_ms: 604800000}
  - key: burst
    rate_limit:
      algorithm: gcra
      params: {burst: 5, rate: 1, period_ms: 1500}
  - key: reported
    rate_limit:
      name: api
      algorithm: gcra
      params: {burst: 5, rate: 1, period_ms: 1000}
      unit: second
      requests_per_unit: 1
`
	c := newService(t, targets()[0].new(t, newClock()), loadYAML(t, cfg), rls.Options{})
	resp := ask(t, c, &pb.RateLimitRequest{Domain: "cl", Descriptors: []*rlv3.RateLimitDescriptor{desc("weekly", "a"), desc("burst", "a"), desc("reported", "a")}})
	want := []*pb.RateLimitResponse_RateLimit{
		{RequestsPerUnit: 7, Unit: pb.RateLimitResponse_RateLimit_WEEK},
		{RequestsPerUnit: 5, Unit: pb.RateLimitResponse_RateLimit_UNKNOWN},
		{Name: "api", RequestsPerUnit: 1, Unit: pb.RateLimitResponse_RateLimit_SECOND},
	}
	for i, st := range resp.Statuses {
		got := st.CurrentLimit
		if got.GetName() != want[i].Name || got.GetRequestsPerUnit() != want[i].RequestsPerUnit || got.GetUnit() != want[i].Unit {
			t.Errorf("descriptor %d: current_limit %v, want %v", i, got, want[i])
		}
	}
	bad := desc("tenant", "t1")
	bad.Limit = &rlv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 2, Unit: 99}
	_, err := c.ShouldRateLimit(context.Background(), &pb.RateLimitRequest{Domain: "cl", Descriptors: []*rlv3.RateLimitDescriptor{bad}})
	if grpcstatus.Code(err) != codes.InvalidArgument {
		t.Errorf("an override of unit 99: %v, want InvalidArgument", err)
	}
}

// TestRedisFaults: a Redis killed, or frozen past the call's deadline,
// fails the call with Unavailable (or DeadlineExceeded) by its deadline,
// never a hang; once it is back, the service decides again. A call
// frozen with Redis had reached it: it runs when Redis resumes, and is
// counted (its outcome was unknown, docs/semantics.md, "Faults"); after
// an empty restart the count starts afresh.
func TestRedisFaults(t *testing.T) {
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	c := newService(t, newRedisLimiter(t, rdb, newClock()), loadYAML(t, twoLimits), rls.Options{})
	user := &pb.RateLimitRequest{Domain: "api", Descriptors: []*rlv3.RateLimitDescriptor{desc("user", "a")}}
	failsInTime := func(what string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.ShouldRateLimit(ctx, user)
		if code := grpcstatus.Code(err); code != codes.Unavailable && code != codes.DeadlineExceeded {
			t.Fatalf("%s: got %v, want Unavailable or DeadlineExceeded", what, err)
		}
		if waited := time.Since(start); waited > 5*time.Second {
			t.Fatalf("%s: answered after %v, past its deadline of 500 ms", what, waited)
		}
	}
	run(t, c, []step{{user, ok, []status{{ok, 1}}}})
	srv.Pause()
	failsInTime("Redis frozen")
	srv.Resume()
	run(t, c, []step{{user, over, []status{{over, 0}}}})
	srv.Kill()
	failsInTime("Redis killed")
	srv.Restart()
	waitFor(t, "Redis back", func() bool { return rdb.Ping(context.Background()).Err() == nil })
	run(t, c, []step{{user, ok, []status{{ok, 1}}}})
}

// TestForce: a request with limitspec.force "true" (Envoy's charge at
// the end of a stream: work already done) charges every descriptor,
// over its limit or not, all of them.
func TestForce(t *testing.T) {
	both := func(extra ...string) *pb.RateLimitRequest {
		return &pb.RateLimitRequest{Domain: "api", Descriptors: []*rlv3.RateLimitDescriptor{
			desc(append([]string{"user", "f"}, extra...)...), desc("route", "/f")}}
	}
	route := &pb.RateLimitRequest{Domain: "api", Descriptors: []*rlv3.RateLimitDescriptor{desc("route", "/f")}}
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			c := newService(t, tg.new(t, newClock()), loadYAML(t, twoLimits), rls.Options{})
			run(t, c, []step{
				{both(), ok, []status{{ok, 1}, {ok, 9}}},
				{both(), ok, []status{{ok, 0}, {ok, 8}}},
				{both(), over, []status{{over, 0}, {ok, 8}}},
				{both(rls.ForceEntry, "true"), over, []status{{over, 0}, {ok, 7}}},
				{route, ok, []status{{ok, 6}}},
			})
		})
	}
}

// TestHeaders: Options.Headers adds the IETF fields of every limited
// descriptor and, on a refusal, Retry-After; LegacyHeaders the
// reference's X-RateLimit-* of the descriptor with the least remaining.
// At t0, 10 s into a minute, a fixed window of a minute resets in 50 s.
func TestHeaders(t *testing.T) {
	c := newService(t, targets()[0].new(t, newClock()), loadYAML(t, twoLimits), rls.Options{Headers: true, LegacyHeaders: true})
	both := &pb.RateLimitRequest{Domain: "api", Descriptors: []*rlv3.RateLimitDescriptor{desc("user", "h"), desc("route", "/h")}}
	headers := func(resp *pb.RateLimitResponse) map[string]string {
		out := map[string]string{}
		for _, h := range resp.ResponseHeadersToAdd {
			out[h.Key] = h.Value
		}
		return out
	}
	policy := `"api.user";q=2;w=60, "api.route";q=10;w=60`
	for i, want := range []map[string]string{
		{"RateLimit-Policy": policy, "RateLimit": `"api.user";r=1;t=50, "api.route";r=9;t=50`,
			"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "1", "X-RateLimit-Reset": "50"},
		{"RateLimit-Policy": policy, "RateLimit": `"api.user";r=0;t=50, "api.route";r=8;t=50`,
			"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "50"},
		{"RateLimit-Policy": policy, "RateLimit": `"api.user";r=0;t=50, "api.route";r=8;t=50`, "Retry-After": "50",
			"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "50"},
	} {
		if d := cmp.Diff(want, headers(ask(t, c, both))); d != "" {
			t.Errorf("request %d: headers (-want +got)\n%s", i, d)
		}
	}
}
