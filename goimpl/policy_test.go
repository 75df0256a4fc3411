package goimpl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/oracle"
)

// policySpec is a policy's limits as the oracle takes them.
type policySpec struct {
	name   string
	limits []oracle.PolicyLimit
}

// byID and byConst are a policy limit of alg counting an identity, or a
// constant.
func byID(name, identity, alg string, p map[string]int64) oracle.PolicyLimit {
	return oracle.PolicyLimit{Name: name, Algorithm: alg, Identity: identity, Params: p}
}

// byConst: see byID.
func byConst(name, constant, alg string, p map[string]int64) oracle.PolicyLimit {
	return oracle.PolicyLimit{Name: name, Algorithm: alg, Constant: constant, Params: p}
}

// build returns the policy and the oracle's model of it.
func (s policySpec) build(tb testing.TB) (*limitspec.Policy, *oracle.Policy) {
	tb.Helper()
	limits := make([]limitspec.PolicyLimit, len(s.limits))
	for i, l := range s.limits {
		limits[i] = limitspec.PolicyLimit{Name: l.Name, Limit: limitOf(l.Algorithm, l.Params), Identity: l.Identity, Constant: l.Constant, Unit: l.Unit}
	}
	p, err := limitspec.NewPolicy(s.name, limits...)
	if err != nil {
		tb.Fatal(err)
	}
	o, err := oracle.NewPolicy(s.name, s.limits)
	if err != nil {
		tb.Fatal(err)
	}
	return p, o
}

// The policies of spec/policies.yaml, written from it, and a policy of
// every algorithm with a shaper, two tiers and a constant.
var (
	fwp = func(limit, window int64) map[string]int64 {
		return map[string]int64{"limit": limit, "window_ms": window}
	}
	ipUserSpec   = policySpec{"ip_user", []oracle.PolicyLimit{byID("ip_second", "ip", "fixed_window", fwp(10, 1000)), byID("ip_minute", "ip", "fixed_window", fwp(120, 60000)), byID("ip_hour", "ip", "fixed_window", fwp(240, 3600000)), byID("user_second", "user", "fixed_window", fwp(10, 1000)), byID("user_minute", "user", "fixed_window", fwp(120, 60000)), byID("user_hour", "user", "fixed_window", fwp(240, 3600000))}}
	everyAlgSpec = policySpec{"every", []oracle.PolicyLimit{
		byID("shaped", "user", "leaky_bucket", map[string]int64{"capacity": 4, "rate": 2, "period_ms": 1000}),
		byID("tiers", "ip", "bucket_window", map[string]int64{"limit": 3, "window_ms": 1000, "bucket_ms": 100, "limit_2": 5, "window_ms_2": 3000}),
		byID("log", "user", "sliding_log", fwp(6, 2000)),
		byID("slide", "ip", "sliding_window", fwp(5, 1500)),
		byID("meta", "user", "meta_window", fwp(7, 2500)),
		byConst("all", "everyone", "token_bucket", map[string]int64{"capacity": 9, "refill_tokens": 3, "refill_ms": 1000}),
		byID("cell", "user", "gcra", map[string]int64{"burst": 3, "rate": 1, "period_ms": 500}),
		byID("second", "ip", "fixed_window", fwp(4, 1000)),
	}}
)

// burstQuota and userGlobal are burst_quota and user_global of
// spec/policies.yaml with their amount passed per call.
func burstQuota(daily int64) policySpec {
	return policySpec{"burst_quota", []oracle.PolicyLimit{
		byID("burst", "user", "gcra", map[string]int64{"burst": 5, "rate": 10, "period_ms": 1000}),
		byID("daily", "user", "sliding_log", fwp(daily, 86400000))}}
}

// userGlobal: see burstQuota.
func userGlobal(global int64) policySpec {
	return policySpec{"user_global", []oracle.PolicyLimit{
		byID("user", "user", "token_bucket", map[string]int64{"capacity": 20, "refill_tokens": 1, "refill_ms": 100}),
		byConst("global", "global", "fixed_window", fwp(global, 60000))}}
}

// TestSpecPolicies: the ready-made policies are those of
// spec/policies.yaml, as the specs above write them.
func TestSpecPolicies(t *testing.T) {
	for _, tt := range []struct {
		spec policySpec
		made func() (*limitspec.Policy, error)
	}{
		{ipUserSpec, limitspec.IPUserPolicy},
		{burstQuota(3), func() (*limitspec.Policy, error) { return limitspec.BurstQuotaPolicy(3) }},
		{userGlobal(5), func() (*limitspec.Policy, error) { return limitspec.UserGlobalPolicy(5) }},
	} {
		made, err := tt.made()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := tt.spec.build(t)
		if made.Name() != want.Name() || !reflect.DeepEqual(made.Limits(), want.Limits()) {
			t.Errorf("%s: %+v, want %+v", made.Name(), made.Limits(), want.Limits())
		}
	}
}

// TestPolicyMatchesOracle: every policy above, decided at random (forced
// calls and peeks among them, identities drawn from small sets so that
// states are shared), decides as the oracle's model of it: the decision,
// its binding limit and every limit's part.
func TestPolicyMatchesOracle(t *testing.T) {
	for _, spec := range []policySpec{ipUserSpec, burstQuota(1000), userGlobal(300), everyAlgSpec} {
		t.Run(spec.name, func(t *testing.T) {
			p, o := spec.build(t)
			l := newLimiter(t, Options{NoSweeper: true})
			rng := rand.New(rand.NewPCG(1, uint64(len(spec.name))))
			now, denied := int64(t0), 0
			for step := range 5000 {
				now += rng.Int64N(150)
				ids := map[string]string{}
				for _, id := range p.Identities() {
					ids[id] = id + strconv.Itoa(rng.IntN(3))
				}
				cost, force := rng.Int64N(4), rng.IntN(10) == 0
				res := decide(t, l, limitspec.Request{Policy: p, IDs: ids, Cost: cost, Peek: cost == 0, Force: force, Now: at(now)})
				call := o.Decide
				if force {
					call = o.Force
				}
				want, err := call(ids, now, cost)
				if err != nil {
					t.Fatal(err)
				}
				checkPolicyResult(t, fmt.Sprintf("step %d (%v at %d, cost %d, forced %v)", step, ids, now, cost, force), p, res, want)
				if !res.Allowed {
					denied++
				}
			}
			t.Logf("%d of 5000 requests denied", denied)
			if denied < 250 || denied > 4750 {
				t.Errorf("%d of 5000 requests denied: too few denials or admissions to compare", denied)
			}
		})
	}
}

// checkPolicyResult fails the test unless res is the oracle's decision
// want of policy p.
func checkPolicyResult(t *testing.T, what string, p *limitspec.Policy, res limitspec.Result, want oracle.PolicyResult) {
	t.Helper()
	top := fromOracle(want.Result)
	ok := res.Allowed == top.Allowed && res.RetryAfter == top.RetryAfter && res.Delay == top.Delay &&
		res.Binding == want.Index-1 && len(res.Limits) == len(want.Limits)
	for i := 0; ok && i < len(want.Limits); i++ {
		pl := p.Limits()[i]
		ok = bare(res.Limits[i]) == fromOracle(want.Limits[i]) && res.Limits[i].Name == pl.Name && res.Limits[i].Unit == pl.Unit
	}
	if !ok {
		t.Fatalf("%s:\n got  %+v\n want %+v", what, res, want)
	}
}

// TestPolicyTwinLimits: two limits of one policy with the same algorithm,
// parameters and identity keep two states (shared, each would count every
// request twice), and neither shares state with the same limit decided on
// its own; the same limits of another policy share them (a state is
// named by its limit's name, not its policy's), and limits named apart
// in it do not.
func TestPolicyTwinLimits(t *testing.T) {
	ctx := context.Background()
	fw := limitspec.FixedWindow{Limit: 4, Window: time.Hour}
	twins := func(name, a, b string) *limitspec.Policy {
		p, err := limitspec.NewPolicy(name, limitspec.PolicyLimit{Name: a, Limit: fw, Identity: "user"},
			limitspec.PolicyLimit{Name: b, Limit: fw, Identity: "user"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p, other, apart := twins("twins", "a", "b"), twins("others", "a", "b"), twins("apart", "c", "d")
	alice := map[string]string{"user": "alice"}
	l := newLimiter(t, Options{Now: func() time.Time { return at(t0) }})
	for i := range 5 {
		res := decide(t, l, limitspec.Request{Policy: p, IDs: alice, Cost: 1})
		want := int64(3 - i) // 4 admitted, each of a and b counting it once
		if i == 4 {
			want = 0
		}
		if res.Allowed != (i < 4) || res.Limits[0].Remaining != want || res.Limits[1].Remaining != want {
			t.Errorf("request %d: allowed %v, remaining %d and %d; want allowed %v, %d and %d",
				i, res.Allowed, res.Limits[0].Remaining, res.Limits[1].Remaining, i < 4, want, want)
		}
	}
	if res, err := l.Allow(ctx, "alice", fw); err != nil || !res.Allowed || res.Limits[0].Remaining != 3 {
		t.Errorf("the limit on its own after the policy's 4: %+v, %v; want admitted, 3 left", res, err)
	}
	if res := decide(t, l, limitspec.Request{Policy: other, IDs: alice, Cost: 1}); res.Allowed || res.Limits[0].Remaining != 0 {
		t.Errorf("another policy's twin limits, of the same names: %+v; want denied, 0 left", res)
	}
	if res := decide(t, l, limitspec.Request{Policy: apart, IDs: alice, Cost: 1}); !res.Allowed || res.Limits[0].Remaining != 3 {
		t.Errorf("another policy's twin limits, named apart: %+v; want admitted, 3 left", res)
	}
}

// TestPolicyBinding: an admitted request is bound by the limit with the
// least left relative to its quota, a denied one by the longest wait.
func TestPolicyBinding(t *testing.T) {
	p, err := limitspec.BurstQuotaPolicy(1000)
	if err != nil {
		t.Fatal(err)
	}
	l := newLimiter(t, Options{NoSweeper: true})
	alice := map[string]string{"user": "alice"}
	// 4 of 5 left of the burst, 999 of 1000 of the day: the burst binds.
	if res := decide(t, l, limitspec.Request{Policy: p, IDs: alice, Cost: 1, Now: at(t0)}); !res.Allowed || res.Binding != 0 {
		t.Errorf("an admitted request: %+v; want the burst (0) binding", res)
	}
	// A cost of 5 is denied by the burst (4 left), for 100 ms (10 a
	// second): the day's 999 admit it.
	res := decide(t, l, limitspec.Request{Policy: p, IDs: alice, Cost: 5, Now: at(t0)})
	if res.Allowed || res.Binding != 0 || res.RetryAfter != 100*time.Millisecond || !res.Limits[1].Allowed {
		t.Errorf("a cost of 5: %+v; want denied by the burst (0) for 100ms, the daily limit admitting", res)
	}
}

// snapshot is what a test sees of a limiter's stores: each algorithm's
// number of states, and the expiry of each state of a policy's call.
func snapshot(t *testing.T, l *Limiter, p *limitspec.Policy, ids map[string]string, nowMs int64) string {
	t.Helper()
	out := ""
	for _, pl := range p.Limits() {
		out += fmt.Sprintf("%s: %d states; ", pl.Limit.Algorithm(), probeOf(t, l, pl.Limit).Len())
	}
	pc := newCall(l.plan(p))
	defer pc.free()
	if err := pc.prepare(&limitspec.Request{Policy: p, IDs: ids}, nowMs); err != nil {
		t.Fatal(err)
	}
	for i, c := range pc.calls {
		out += fmt.Sprintf("%s expires at %d; ", c.c.Key, probeOf(t, l, p.Limits()[i].Limit).expires(&c.c, nowMs))
	}
	return out
}

// TestDeniedPolicyWritesNothing: a request a policy denies leaves every
// limit's state as it was, those that would have admitted it included:
// no state is added for new identities, none changes, and later requests
// are decided as if it had never come.
func TestDeniedPolicyWritesNothing(t *testing.T) {
	p, err := limitspec.NewPolicy("deny",
		limitspec.PolicyLimit{Name: "a", Limit: limitspec.FixedWindow{Limit: 5, Window: time.Minute}, Identity: "user"},
		limitspec.PolicyLimit{Name: "b", Limit: limitspec.GCRA{Burst: 2, Rate: 1, Period: time.Second}, Identity: "user"},
		limitspec.PolicyLimit{Name: "c", Limit: limitspec.SlidingLog{Limit: 2, Window: time.Minute}, Identity: "ip"},
		limitspec.PolicyLimit{Name: "d", Limit: limitspec.FixedWindow{Limit: 1, Window: time.Minute}, Constant: "shared"})
	if err != nil {
		t.Fatal(err)
	}
	alice := map[string]string{"user": "alice", "ip": "10.0.0.1"}
	bob := map[string]string{"user": "bob", "ip": "10.0.0.2"}
	subject, shadow := newLimiter(t, Options{NoSweeper: true}), newLimiter(t, Options{NoSweeper: true})
	for _, l := range []*Limiter{subject, shadow} {
		if res := decide(t, l, limitspec.Request{Policy: p, IDs: alice, Cost: 1, Now: at(t0)}); !res.Allowed {
			t.Fatalf("the first request: %+v", res)
		}
	}
	// The shared constant limit d has nothing left: alice's and bob's
	// next requests are denied by it, the other limits admitting.
	for _, ids := range []map[string]string{alice, bob} {
		before := snapshot(t, subject, p, ids, t0+10)
		res := decide(t, subject, limitspec.Request{Policy: p, IDs: ids, Cost: 1, Now: at(t0 + 10)})
		if res.Allowed || res.Binding != 3 || !res.Limits[0].Allowed || !res.Limits[1].Allowed || !res.Limits[2].Allowed {
			t.Fatalf("%v: %+v; want denied by d alone", ids, res)
		}
		if after := snapshot(t, subject, p, ids, t0+10); after != before {
			t.Errorf("a denied request of %v wrote:\n before %s\n after  %s", ids, before, after)
		}
	}
	// Later, every limit's state reads as in a limiter that never saw the
	// denied requests.
	for _, ids := range []map[string]string{alice, bob} {
		req := limitspec.Request{Policy: p, IDs: ids, Cost: 0, Now: at(t0 + 500)}
		if a, b := decide(t, subject, req), decide(t, shadow, req); !reflect.DeepEqual(a, b) {
			t.Errorf("%v later: %+v\n without the denied requests: %+v", ids, a, b)
		}
	}
}

// TestPolicyRefusesIdentities: a missing, unknown, empty or '}'-led
// identity is refused, and changes nothing.
func TestPolicyRefusesIdentities(t *testing.T) {
	p, err := limitspec.IPUserPolicy()
	if err != nil {
		t.Fatal(err)
	}
	l := newLimiter(t, Options{NoSweeper: true})
	for _, ids := range []map[string]string{
		{"ip": "10.0.0.1"},
		{"ip": "10.0.0.1", "user": "alice", "route": "/"},
		{"ip": "", "user": "alice"},
		{"ip": "}x", "user": "alice"},
	} {
		if _, err := l.Limit(context.Background(), limitspec.Request{Policy: p, IDs: ids, Cost: 1, Now: at(t0)}); !errors.Is(err, limitspec.ErrBadInput) {
			t.Errorf("%v: %v, want ErrBadInput", ids, err)
		}
	}
	// Nothing was written: all 10 of the second are left (ip_user's
	// limits are 10 a second, 120 a minute, 240 an hour).
	res := decide(t, l, limitspec.Request{Policy: p, IDs: map[string]string{"ip": "10.0.0.1", "user": "alice"}, Cost: 10, Now: at(t0)})
	if !res.Allowed {
		t.Errorf("a cost of 10 after refusals: %+v; want admitted", res)
	}
}

// TestPolicyReset: resetting a policy for some identities deletes the
// state of every one of its limits for them, a constant's included, and
// no other identity's.
func TestPolicyReset(t *testing.T) {
	p, err := limitspec.UserGlobalPolicy(2)
	if err != nil {
		t.Fatal(err)
	}
	l := newLimiter(t, Options{Now: func() time.Time { return at(t0) }})
	ctx := context.Background()
	for _, user := range []string{"alice", "bob"} {
		decide(t, l, limitspec.Request{Policy: p, IDs: map[string]string{"user": user}, Cost: 1})
	}
	if err := l.Reset(ctx, limitspec.Request{Policy: p, IDs: map[string]string{"user": "alice"}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		user        string
		own, global int64 // remaining after a peek
	}{{"alice", 20, 2}, {"bob", 19, 2}} {
		res := decide(t, l, limitspec.Request{Policy: p, IDs: map[string]string{"user": tt.user}, Peek: true})
		if res.Limits[0].Remaining != tt.own || res.Limits[1].Remaining != tt.global {
			t.Errorf("%s after alice's reset: %d and %d left, want %d and %d", tt.user, res.Limits[0].Remaining, res.Limits[1].Remaining, tt.own, tt.global)
		}
	}
}

// overlapping returns three policies over the same algorithms, in
// different orders, counting the same identities: their shards overlap,
// locked in different limit orders. Each holds the gate of 300 an hour
// for every caller, and limits per identity that never deny, of the
// same names: they share the states.
func overlapping(t *testing.T) []*limitspec.Policy {
	gate := limitspec.PolicyLimit{Name: "gate", Limit: limitspec.FixedWindow{Limit: 300, Window: time.Hour}, Constant: "gate"}
	user := limitspec.PolicyLimit{Name: "u", Limit: limitspec.GCRA{Burst: 1e6, Rate: 1, Period: time.Second}, Identity: "user"}
	ip := limitspec.PolicyLimit{Name: "i", Limit: limitspec.FixedWindow{Limit: 1e6, Window: time.Hour}, Identity: "ip"}
	bucket := limitspec.PolicyLimit{Name: "x", Limit: limitspec.TokenBucket{Capacity: 1e6, RefillTokens: 1, Refill: time.Second}, Identity: "user"}
	var out []*limitspec.Policy
	for name, limits := range map[string][]limitspec.PolicyLimit{
		"p_one": {gate, user, ip}, "p_two": {ip, gate, user}, "p_three": {user, ip, bucket, gate},
	} {
		p, err := limitspec.NewPolicy(name, limits...)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestConcurrentPolicies: goroutines deciding overlapping policies for
// shared identities, with single limits of the same tables among them,
// finish (no deadlock: a watchdog fails the test after 60 s) and decide
// all or nothing (run with -race). The policies' limits of one name share
// their state: the three admit exactly their one gate's 300 together,
// and each limit per identity has counted exactly the admitted requests
// of its identity, by every policy that holds it.
func TestConcurrentPolicies(t *testing.T) {
	policies := overlapping(t)
	l := newLimiter(t, Options{})
	var mu sync.Mutex
	admitted := map[string]int64{} // in all, and by limit and identity value
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 300 {
				p := policies[rng.IntN(len(policies))]
				ids := map[string]string{"user": "u" + strconv.Itoa(rng.IntN(5)), "ip": "i" + strconv.Itoa(rng.IntN(5))}
				res, err := l.Limit(context.Background(), limitspec.Request{Policy: p, IDs: ids, Cost: 1, Now: at(t0)})
				if err != nil {
					t.Error(err)
					return
				}
				if res.Allowed {
					mu.Lock()
					admitted["all"]++
					for _, pl := range p.Limits() {
						admitted[pl.Name+"/"+ids[pl.Identity]]++
					}
					mu.Unlock()
				}
				// A single limit of a table the policies lock, on a key
				// of one of their shards' neighbours.
				l.Allow(context.Background(), ids["user"], limitspec.GCRA{Burst: 1e6, Rate: 1, Period: time.Second})
			}
		})
	}
	watchdog(t, &wg, time.Minute)
	if got := admitted["all"]; got != 300 {
		t.Errorf("the policies admitted %d requests, want their gate's 300", got)
	}
	for _, p := range policies {
		for v := range 5 {
			ids := map[string]string{"user": "u" + strconv.Itoa(v), "ip": "i" + strconv.Itoa(v)}
			res := decide(t, l, limitspec.Request{Policy: p, IDs: ids, Peek: true, Now: at(t0)})
			for i, lr := range res.Limits {
				pl := p.Limits()[i]
				if want := 1e6 - admitted[pl.Name+"/"+ids[pl.Identity]]; pl.Identity != "" && lr.Remaining != want {
					t.Errorf("%s.%s for %s: %d left, want %d (1e6 less its admitted requests)", p.Name(), lr.Name, ids[pl.Identity], lr.Remaining, want)
				}
			}
		}
	}
}

// watchdog waits for wg, failing the test with every goroutine's stack
// if that takes longer than d.
func watchdog(t *testing.T, wg *sync.WaitGroup, d time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		t.Fatalf("deadlock: the goroutines did not finish in %v\n%s", d, buf[:runtime.Stack(buf, true)])
	}
}

// TestPlansShareByName counts one IP's admissions across two plans, each
// a policy of its own (free, pro) with a per-IP limit (5 an hour) and a
// per-user one (a free user's 3 an hour, a pro user's 100), 10 requests
// of each, from free users each new and one pro user, alternately: with
// the per-IP limit named alike in both, the plans share the IP's counter
// and the IP is admitted 5 in all; named apart, or measured over another
// window, each plan has its own, and the IP is admitted 5 in each: 10.
func TestPlansShareByName(t *testing.T) {
	plan := func(name, ipLimit string, window time.Duration, perUser int64) *limitspec.Policy {
		p, err := limitspec.NewPolicy(name,
			limitspec.PolicyLimit{Name: ipLimit, Limit: limitspec.FixedWindow{Limit: 5, Window: window}, Identity: "ip"},
			limitspec.PolicyLimit{Name: "per_user", Limit: limitspec.FixedWindow{Limit: perUser, Window: time.Hour}, Identity: "user"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name      string
		free, pro *limitspec.Policy
		want      int
	}{
		{"one limit name", plan("free", "per_ip", time.Hour, 3), plan("pro", "per_ip", time.Hour, 100), 5},
		{"one policy name too", plan("api", "per_ip", time.Hour, 3), plan("api", "per_ip", time.Hour, 100), 5},
		{"limits named apart", plan("free", "free_ip", time.Hour, 3), plan("pro", "pro_ip", time.Hour, 100), 10},
		{"another window", plan("free", "per_ip", time.Hour, 3), plan("pro", "per_ip", 2*time.Hour, 100), 10},
	} {
		l := newLimiter(t, Options{Now: func() time.Time { return at(t0) }})
		admitted := 0
		for i := range 20 {
			req := limitspec.Request{Policy: tc.free, IDs: map[string]string{"ip": "10.0.0.1", "user": "f" + strconv.Itoa(i)}, Cost: 1}
			if i%2 == 1 {
				req.Policy, req.IDs["user"] = tc.pro, "p"
			}
			if decide(t, l, req).Allowed {
				admitted++
			}
		}
		if admitted != tc.want {
			t.Errorf("%s: one IP admitted %d across the two plans; want %d", tc.name, admitted, tc.want)
		}
	}
}
