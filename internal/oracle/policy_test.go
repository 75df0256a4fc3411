package oracle

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// hourT is 1700002800000 = 472223 × 3600000: the start of an hour, so
// of a minute and a second too.
const hourT = 1700002800000

// pstep is one policy request and its decision worked out by hand.
type pstep struct {
	ids  map[string]string
	t    int64 // ms after hourT
	cost int64
	want PolicyResult
}

// pres is a policy decision with no shaper: the binding limit's result,
// its index and every limit's result.
func pres(index int, limits ...Result) PolicyResult {
	return PolicyResult{Result: limits[index-1], Index: index, Limits: limits}
}

// withDelay sets a result's delay_ms.
func withDelay(r Result, d int64) Result { r.DelayMs = d; return r }

func byID(name, identity, alg string, p map[string]int64) PolicyLimit {
	return PolicyLimit{Name: name, Algorithm: alg, Identity: identity, Params: p}
}

func byConst(name, constant, alg string, p map[string]int64) PolicyLimit {
	return PolicyLimit{Name: name, Algorithm: alg, Constant: constant, Params: p}
}

func fwParams(limit, window int64) map[string]int64 {
	return map[string]int64{"limit": limit, "window_ms": window}
}

func mustPolicy(t *testing.T, name string, limits ...PolicyLimit) *Policy {
	t.Helper()
	p, err := NewPolicy(name, limits)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func preplay(t *testing.T, p *Policy, steps []pstep) {
	t.Helper()
	for i, s := range steps {
		got, err := p.Decide(s.ids, hourT+s.t, s.cost)
		if err != nil || !reflect.DeepEqual(got, s.want) {
			t.Errorf("step %d (t +%d, %v, cost %d):\n got %+v %v\nwant %+v", i+1, s.t, s.ids, s.cost, got, err, s.want)
		}
	}
}

// ipUser is the seed's policy: 10 a second, 120 a minute, 240 an hour,
// per IP and per user.
func ipUser(t *testing.T) *Policy {
	return mustPolicy(t, "ip_user",
		byID("ip_second", "ip", "fixed_window", fwParams(10, 1000)),
		byID("ip_minute", "ip", "fixed_window", fwParams(120, 60000)),
		byID("ip_hour", "ip", "fixed_window", fwParams(240, 3600000)),
		byID("user_second", "user", "fixed_window", fwParams(10, 1000)),
		byID("user_minute", "user", "fixed_window", fwParams(120, 60000)),
		byID("user_hour", "user", "fixed_window", fwParams(240, 3600000)))
}

func ids(ip, user string) map[string]string { return map[string]string{"ip": ip, "user": user} }

func TestPolicySeedSecond(t *testing.T) {
	p := ipUser(t)
	if got := p.Identities(); !reflect.DeepEqual(got, []string{"ip", "user"}) {
		t.Errorf("Identities = %v", got)
	}
	var steps []pstep
	// Ten at +500: after the k-th, each second has 10-k left, resetting at
	// +1000 (500 ms away); the minute 120-k until +60000 (59500); the hour
	// 240-k until +3600000 (3599500). (10-k)/10 is the smallest fraction,
	// ip_second and user_second tie: the first, ip_second (1), binds.
	for k := int64(1); k <= 10; k++ {
		sec, minute, hour := allow(10, 10-k, 500), allow(120, 120-k, 59500), allow(240, 240-k, 3599500)
		steps = append(steps, pstep{ids("10.0.0.1", "alice"), 500, 1, pres(1, sec, minute, hour, sec, minute, hour)})
	}
	// The 11th at +600: both seconds are full, retry and reset 1000-600 =
	// 400, a tie: ip_second binds. The minutes and hours would admit: they
	// report a peek of their unchanged state (110 and 230 left).
	full, minute, hour := deny(10, 0, 400, 400), allow(120, 110, 59400), allow(240, 230, 3599400)
	steps = append(steps,
		pstep{ids("10.0.0.1", "alice"), 600, 1, pres(1, full, minute, hour, full, minute, hour)},
		// alice from a fresh IP: only user_second denies, so it binds (4);
		// the fresh IP's limits peek at no state: all left, reset 0.
		pstep{ids("10.0.0.2", "alice"), 600, 1, pres(4,
			allow(10, 10, 0), allow(120, 120, 0), allow(240, 240, 0), full, minute, hour)},
		// bob from the full IP: ip_second denies (1); bob's limits peek.
		pstep{ids("10.0.0.1", "bob"), 600, 1, pres(1,
			full, minute, hour, allow(10, 10, 0), allow(120, 120, 0), allow(240, 240, 0))},
	)
	preplay(t, p, steps)
}

func TestPolicySeedMinute(t *testing.T) {
	p := ipUser(t)
	// Seconds 0 … 11 each take 10 from 10.0.0.1 at +s·1000+900, a new user
	// each second: the IP's minute holds 120 after +11900, its second 10.
	for s := int64(0); s < 12; s++ {
		for k := 0; k < 10; k++ {
			r, err := p.Decide(ids("10.0.0.1", fmt.Sprintf("u%d", s)), hourT+s*1000+900, 1)
			if err != nil || !r.Allowed {
				t.Fatalf("second %d, request %d: %+v %v", s, k, r, err)
			}
		}
	}
	fresh := []Result{allow(10, 10, 0), allow(120, 120, 0), allow(240, 240, 0)} // zed's peeks
	preplay(t, p, []pstep{
		// ip_second retries at +12000 (100 ms), ip_minute at +60000
		// (48100 ms): the longest wait binds, ip_minute (2). ip_hour has
		// 240-120 = 120 left until +3600000: 3588100.
		{ids("10.0.0.1", "zed"), 11900, 1, pres(2,
			deny(10, 0, 100, 100), deny(120, 0, 48100, 48100), allow(240, 120, 3588100), fresh[0], fresh[1], fresh[2])},
		// Cost 11 > 10: both seconds never admit (-1), longer than
		// ip_minute's 48100; of the two, ip_second is first. zed's second
		// is empty: remaining 10, reset 0. 120+11 <= 240 and 11 <= 120:
		// ip_hour and zed's minute would admit, so they peek.
		{ids("10.0.0.1", "zed"), 11900, 11, pres(1,
			deny(10, 0, -1, 100), deny(120, 0, 48100, 48100), allow(240, 120, 3588100),
			deny(10, 10, -1, 0), fresh[1], fresh[2])},
		// A new second: ip_second would admit (empty, reset 0); the minute
		// still denies until +60000, 48000 ms away.
		{ids("10.0.0.1", "zed"), 12000, 1, pres(2,
			allow(10, 10, 0), deny(120, 0, 48000, 48000), allow(240, 120, 3588000), fresh[0], fresh[1], fresh[2])},
	})
}

// TestPolicyAllOrNothing: a request denied by the hour uses none of the
// second's or the minute's allowance.
func TestPolicyAllOrNothing(t *testing.T) {
	p := mustPolicy(t, "hour_small",
		byID("second", "ip", "fixed_window", fwParams(10, 1000)),
		byID("minute", "ip", "fixed_window", fwParams(120, 60000)),
		byID("hour", "ip", "fixed_window", fwParams(3, 3600000)))
	ip := map[string]string{"ip": "10.0.0.1"}
	preplay(t, p, []pstep{
		// 9/10, 119/120, 2/3: the hour is the smallest fraction (3).
		{ip, 100, 1, pres(3, allow(10, 9, 900), allow(120, 119, 59900), allow(3, 2, 3599900))},
		{ip, 200, 1, pres(3, allow(10, 8, 800), allow(120, 118, 59800), allow(3, 1, 3599800))},
		{ip, 300, 1, pres(3, allow(10, 7, 700), allow(120, 117, 59700), allow(3, 0, 3599700))},
		// The 4th: the hour is full until +3600000; second and minute
		// would admit, and peek: still 7 and 117 left.
		{ip, 400, 1, pres(3, allow(10, 7, 600), allow(120, 117, 59600), deny(3, 0, 3599600, 3599600))},
		// Cost 5 > 3: the hour never admits; 3+5 <= 10: the others peek.
		{ip, 450, 5, pres(3, allow(10, 7, 550), allow(120, 117, 59550), deny(3, 0, -1, 3599550))},
		// A peek of the policy: 7/10, 117/120, 0/3: nothing was used by
		// the two denials.
		{ip, 500, 0, pres(3, allow(10, 7, 500), allow(120, 117, 59500), allow(3, 0, 3599500))},
		// The next second is empty (remaining 10, reset 0); the minute
		// still holds 3 (117 left).
		{ip, 1000, 1, pres(3, allow(10, 10, 0), allow(120, 117, 59000), deny(3, 0, 3599000, 3599000))},
	})
}

// TestPolicyGlobal: a constant limit is shared by every caller.
func TestPolicyGlobal(t *testing.T) {
	p := mustPolicy(t, "per_user_global",
		byID("user_minute", "user", "fixed_window", fwParams(2, 60000)),
		byConst("global", "global", "fixed_window", fwParams(3, 60000)))
	if got := p.Identities(); !reflect.DeepEqual(got, []string{"user"}) {
		t.Errorf("Identities = %v", got)
	}
	u := func(name string) map[string]string { return map[string]string{"user": name} }
	preplay(t, p, []pstep{
		// 1/2 < 2/3: the user's limit binds.
		{u("alice"), 0, 1, pres(1, allow(2, 1, 60000), allow(3, 2, 60000))},
		// bob: 1/2 > 1/3: global binds.
		{u("bob"), 1, 1, pres(2, allow(2, 1, 59999), allow(3, 1, 59999))},
		// alice: 0/2 = 0/3, a tie: the first.
		{u("alice"), 2, 1, pres(1, allow(2, 0, 59998), allow(3, 0, 59998))},
		// The 4th request: global is full until +60000; bob would be
		// admitted by his own limit, which peeks (1 left).
		{u("bob"), 3, 1, pres(2, allow(2, 1, 59997), deny(3, 0, 59997, 59997))},
		// alice is full too: both deny with 59996, a tie: the first.
		{u("alice"), 4, 1, pres(1, deny(2, 0, 59996, 59996), deny(3, 0, 59996, 59996))},
		// carol has used nothing, and is still denied by global.
		{u("carol"), 5, 1, pres(2, allow(2, 2, 0), deny(3, 0, 59995, 59995))},
	})
}

// TestPolicyMixed: a gcra burst (T = 1000, tau = 2000) with a daily
// sliding_log quota on one identity.
func TestPolicyMixed(t *testing.T) {
	p := mustPolicy(t, "burst_quota",
		byID("burst", "key", "gcra", map[string]int64{"burst": 2, "rate": 1, "period_ms": 1000}),
		byID("daily", "key", "sliding_log", map[string]int64{"limit": 5, "window_ms": 86400000}))
	k := map[string]string{"key": "k1"}
	const day = 86400000
	preplay(t, p, []pstep{
		// gcra, fresh: TAT 0 -> 1000, room (2000-1000)/1000 = 1, reset
		// 1000. The log holds 1 of 5 for a day. 1/2 < 4/5: burst binds.
		{k, 0, 1, pres(1, allow(2, 1, 1000), allow(5, 4, day))},
		// TAT 1000 -> 2000: allowAt 0 <= 0, room 0, reset 2000.
		{k, 0, 1, pres(1, allow(2, 0, 2000), allow(5, 3, day))},
		// At 500: TAT 2000+1000-2000 = 1000 > 500: denied, retry 500,
		// reset 2000-500 = 1500. The log peeks: 2 entries at 0 leave at
		// day, 3 left, reset day-500.
		{k, 500, 1, pres(1, deny(2, 0, 500, 1500), allow(5, 3, day-500))},
		// At 1000: TAT 2000 -> 3000 (the denial moved nothing): room 0,
		// reset 2000. The log: 3 entries, 2 left (the denial logged none).
		{k, 1000, 1, pres(1, allow(2, 0, 2000), allow(5, 2, day))},
		// At 3000: TAT 3000 -> 4000: room 1, reset 1000. Log 4: 1/2 > 1/5.
		{k, 3000, 1, pres(2, allow(2, 1, 1000), allow(5, 1, day))},
		// At 10000: TAT below now, so 10000 -> 11000. Log 5, 0 left.
		{k, 10000, 1, pres(2, allow(2, 1, 1000), allow(5, 0, day))},
		// At 20000 the log is full: the two entries at 0 leave at day,
		// retry day-20000; the newest (10000) at day+10000, reset
		// day-10000. gcra would admit: its peek has TAT = now, 2 left.
		{k, 20000, 1, pres(2, allow(2, 2, 0), deny(5, 0, day-20000, day-10000))},
		// A peek: gcra is untouched by the denial (2/2), the log 0/5.
		{k, 20000, 0, pres(2, allow(2, 2, 0), allow(5, 0, day-10000))},
	})
}

// TestPolicyOwnState: limits with the same algorithm and identity keep
// separate states.
func TestPolicyOwnState(t *testing.T) {
	p := mustPolicy(t, "twins",
		byID("a", "ip", "fixed_window", fwParams(2, 1000)),
		byID("b", "ip", "fixed_window", fwParams(2, 1000)))
	ip := map[string]string{"ip": "10.0.0.1"}
	preplay(t, p, []pstep{
		// Shared, b would see a's 1 and have 0 left. Tie: the first.
		{ip, 0, 1, pres(1, allow(2, 1, 1000), allow(2, 1, 1000))},
		{ip, 0, 1, pres(1, allow(2, 0, 1000), allow(2, 0, 1000))},
	})
}

func TestPolicyRefusals(t *testing.T) {
	p := mustPolicy(t, "refuse",
		byID("per_ip", "ip", "fixed_window", fwParams(2, 1000)),
		byID("per_user", "user", "fixed_window", fwParams(3, 1000)),
		byConst("all", "all", "fixed_window", fwParams(100, 1000)))
	ok := ids("10.0.0.1", "alice")
	// 1/2 < 2/3 < 99/100: per_ip binds.
	preplay(t, p, []pstep{{ok, 0, 1, pres(1, allow(2, 1, 1000), allow(3, 2, 1000), allow(100, 99, 1000))}})
	refused := []struct {
		name      string
		ids       map[string]string
		now, cost int64
	}{
		{"negative cost", ok, hourT, -1},
		{"cost 2^53", ok, hourT, 1 << 53},
		{"negative now", ok, -1, 1},
		{"now above 2^45", ok, 1<<45 + 1, 1},
		{"empty ip", ids("", "alice"), hourT, 1},
		{"ip beginning with '}'", ids("}x", "alice"), hourT, 1},
		{"user '}'", ids("10.0.0.1", "}"), hourT, 1},
		{"missing user", map[string]string{"ip": "10.0.0.1"}, hourT, 1},
		{"unknown identity", map[string]string{"ip": "10.0.0.1", "user": "alice", "api_key": "k"}, hourT, 1},
		{"no identities", nil, hourT, 1},
	}
	for _, r := range refused {
		if _, err := p.Decide(r.ids, r.now, r.cost); !errors.Is(err, ErrBadInput) {
			t.Errorf("%s: Decide = %v, want ErrBadInput", r.name, err)
		}
	}
	// As if the refusals never happened: one more each, 0/2 binds.
	preplay(t, p, []pstep{{ok, 200, 1, pres(1, allow(2, 0, 800), allow(3, 1, 800), allow(100, 98, 800))}})
}

func TestNewPolicyRefusals(t *testing.T) {
	good := fwParams(1, 1000)
	tests := []struct {
		name   string
		limits []PolicyLimit
		where  string // the policy.limit the message must name; "" for none
	}{
		{"no limits", nil, ""},
		{"both identity and constant", []PolicyLimit{{Name: "l1", Algorithm: "fixed_window", Identity: "ip", Constant: "c", Params: good}}, "p.l1"},
		{"neither", []PolicyLimit{{Name: "l1", Algorithm: "fixed_window", Params: good}}, "p.l1"},
		{"unknown algorithm", []PolicyLimit{byID("l1", "ip", "sliding_door", good)}, "p.l1"},
		{"parameter out of range", []PolicyLimit{byID("l1", "ip", "fixed_window", good), byID("l2", "ip", "fixed_window", fwParams(0, 1000))}, "p.l2"},
		{"joint bound", []PolicyLimit{byID("l1", "ip", "gcra", map[string]int64{"burst": 1e6, "rate": 1, "period_ms": 1e9 + 1})}, "p.l1"},
		{"constant beginning with '}'", []PolicyLimit{byConst("l1", "}g", "fixed_window", good)}, "p.l1"},
	}
	for _, tt := range tests {
		_, err := NewPolicy("p", tt.limits)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tt.where+": ") {
			t.Errorf("%s: NewPolicy = %v, want ErrBadInput naming %q", tt.name, err, tt.where)
		}
	}
	p := mustPolicy(t, "order",
		byID("a", "user", "fixed_window", good), byID("b", "ip", "fixed_window", good),
		byConst("c", "all", "fixed_window", good), byID("d", "user", "fixed_window", good), byID("e", "ip", "fixed_window", good))
	got := p.Identities()
	if !reflect.DeepEqual(got, []string{"user", "ip"}) {
		t.Errorf("Identities = %v, want [user ip]", got)
	}
	got[0] = "x"
	if p.Identities()[0] != "user" {
		t.Errorf("Identities shares its slice with the policy")
	}
}

// TestPolicyAdmittedBinding: the smallest remaining/limit, exactly; ties
// go to the first.
func TestPolicyAdmittedBinding(t *testing.T) {
	p := mustPolicy(t, "frac",
		byID("a", "x", "fixed_window", fwParams(3, 1000)),
		byID("b", "y", "fixed_window", fwParams(7, 1000)))
	preplay(t, p, []pstep{
		// 1/3 < 5/7.
		{map[string]string{"x": "p", "y": "q"}, 0, 2, pres(1, allow(3, 1, 1000), allow(7, 5, 1000))},
		// 0/3 < 2/7.
		{map[string]string{"x": "p2", "y": "q"}, 0, 3, pres(1, allow(3, 0, 1000), allow(7, 2, 1000))},
		// 1/3 against 2/7: 1·7 = 7 > 2·3 = 6, so b binds.
		{map[string]string{"x": "p", "y": "q"}, 100, 0, pres(2, allow(3, 1, 900), allow(7, 2, 900))},
	})

	// (10^12-1)/10^12 against (10^12-2)/(10^12-1): (10^12-1)² = 10^24 -
	// 2·10^12 + 1 is 1 more than (10^12-2)·10^12, so b is smaller. In
	// float64 the two round alike and would tie to a.
	const tera = 1e12
	if float64(tera-1)/tera != float64(tera-2)/(tera-1) {
		t.Errorf("the fractions differ in float64: the case shows nothing")
	}
	near := mustPolicy(t, "close",
		byID("a", "x", "fixed_window", fwParams(tera, 1000)),
		byID("b", "x", "fixed_window", fwParams(tera-1, 1000)))
	preplay(t, near, []pstep{{map[string]string{"x": "p"}, 0, 1,
		pres(2, allow(tera, tera-1, 1000), allow(tera-1, tera-2, 1000))}})

	for _, first := range []string{"half", "quarter"} {
		half := byID("half", "x", "fixed_window", fwParams(2, 1000))
		quarter := byID("quarter", "y", "fixed_window", fwParams(4, 1000))
		pol, want := []PolicyLimit{half, quarter}, []Result{allow(2, 1, 1000), allow(4, 2, 1000)}
		if first == "quarter" {
			pol, want = []PolicyLimit{quarter, half}, []Result{allow(4, 2, 1000), allow(2, 1, 1000)}
		}
		p := mustPolicy(t, "tie", pol...)
		// y=q first takes 1 of 4; then 1/2 = 2/4: the first listed binds.
		if _, err := p.Decide(map[string]string{"x": "p", "y": "q"}, hourT, 1); err != nil {
			t.Fatal(err)
		}
		preplay(t, p, []pstep{{map[string]string{"x": "p2", "y": "q"}, 0, 1, pres(1, want...)}})
	}
}

// TestPolicyDelay: a leaky_bucket (T = 1000, tau = 3000) shapes while a
// fixed_window binds; the policy's delay is the largest.
func TestPolicyDelay(t *testing.T) {
	p := mustPolicy(t, "shaped",
		byID("window", "ip", "fixed_window", fwParams(2, 1000)),
		byID("queue", "ip", "leaky_bucket", map[string]int64{"capacity": 3, "rate": 1, "period_ms": 1000}))
	ip := map[string]string{"ip": "10.0.0.1"}
	// The queue after the 2nd: TAT 2000, room (3000-2000)/1000 = 1, reset
	// 2000, and the request waited for the 1000 ms queued ahead of it.
	queued := withDelay(allow(3, 1, 2000), 1000)
	preplay(t, p, []pstep{
		// Fresh queue: TAT 0 -> 1000, room 2, no wait. 1/2 < 2/3.
		{ip, 0, 1, pres(1, allow(2, 1, 1000), allow(3, 2, 1000))},
		// The window binds (0/2), the delay is the queue's 1000.
		{ip, 0, 1, PolicyResult{Result: withDelay(allow(2, 0, 1000), 1000), Index: 1,
			Limits: []Result{allow(2, 0, 1000), queued}}},
		// The window is full until +1000. The queue would admit: its peek
		// has TAT 2000 ahead, a delay of 2000. The policy denies, and a
		// denied request waits for nothing: its delay_ms is 0, as the
		// contract's is for any denial.
		{ip, 0, 1, PolicyResult{Result: deny(2, 0, 1000, 1000), Index: 1,
			Limits: []Result{deny(2, 0, 1000, 1000), withDelay(allow(3, 1, 2000), 2000)}}},
		// At 1000: a new window, 1/2. The queue's TAT is still 2000 (the
		// denial queued nothing): 2000 -> 3000, room 1, reset 2000, delay
		// 2000-1000. 1/3 < 1/2: the queue binds, its delay is the largest.
		{ip, 1000, 1, PolicyResult{Result: queued, Index: 2, Limits: []Result{allow(2, 1, 1000), queued}}},
		// A peek: TAT 3000, room 1, reset 2000; a request would wait 2000.
		{ip, 1000, 0, PolicyResult{Result: withDelay(allow(3, 1, 2000), 2000), Index: 2,
			Limits: []Result{allow(2, 1, 1000), withDelay(allow(3, 1, 2000), 2000)}}},
	})
}

// request is one admitted policy request, replayed on stand-alone models.
type request struct {
	ids       map[string]string
	now, cost int64
}

// TestPolicyIsConjunction: on random traces, a policy decides as the
// conjunction of its limits, each run alone as its algorithm. For each
// step, each limit's stand-alone model is rebuilt by replaying the
// requests the policy admitted (a copy of its state that the check may
// spend); it gives the limit's peek and its decision of the request. The
// policy must admit iff every limit admits, and report each limit's
// decision, or its peek when the policy denies and the limit admits.
func TestPolicyIsConjunction(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	seen := map[string]int{}
	var algs []string // an in-flight limit is refused in a policy without holds
	for _, a := range Algorithms() {
		if !algorithms[a].inFlight {
			algs = append(algs, a)
		}
	}
	for trial := 0; trial < len(algs); trial++ {
		// The first limit of trial k is algorithm k, the others any.
		limits := []PolicyLimit{randomLimit(rng, 0, algs[trial])}
		for i, n := 1, 2+rng.Intn(3); i < n; i++ {
			limits = append(limits, randomLimit(rng, i, algs[rng.Intn(len(algs))]))
		}
		p := mustPolicy(t, fmt.Sprintf("random%d", trial), limits...)
		var admitted []request
		now := int64(hourT)
		for step := 0; step < 300; step++ {
			now += rng.Int63n(400)
			if rng.Intn(16) == 0 { // a clock behind, at times by more than MaxSkewMs
				now -= rng.Int63n(2 * MaxSkewMs)
			}
			req := randomRequest(rng, p, now)
			if rng.Intn(25) == 0 { // refused: must change nothing
				req.ids["ip"] = "" // unknown if the policy counts no ip
				if _, err := p.Decide(req.ids, req.now, req.cost); !errors.Is(err, ErrBadInput) {
					t.Fatalf("trial %d step %d: empty ip: %v", trial, step, err)
				}
				continue
			}
			want := conjunction(t, limits, admitted, req)
			got, err := p.Decide(req.ids, req.now, req.cost)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d step %d %+v (%+v):\n got %+v %v\nwant %+v", trial, step, req, limits, got, err, want)
			}
			if want.Allowed {
				admitted = append(admitted, req)
			}
			seen[kind(want)]++
		}
	}
	t.Logf("decisions: %v", seen)
	for _, k := range []string{"admitted", "denied, a limit peeking", "denied by all"} {
		if seen[k] < 50 {
			t.Errorf("only %d decisions %s: the traces do not test enough", seen[k], k)
		}
	}
}

// randomRequest is a request at now of a small cost (at times 7, above
// most limits) for values of the policy's identities.
func randomRequest(rng *rand.Rand, p *Policy, now int64) request {
	req := request{ids: map[string]string{}, now: now, cost: rng.Int63n(4)}
	for _, id := range p.Identities() { // ip, user or both
		req.ids[id] = map[string][]string{"ip": {"10.0.0.1", "10.0.0.2"}, "user": {"alice", "bob"}}[id][rng.Intn(2)]
	}
	if rng.Intn(10) == 0 {
		req.cost = 7
	}
	return req
}

// kind classes a policy decision for the trace's coverage.
func kind(r PolicyResult) string {
	if r.Allowed {
		return "admitted"
	}
	for _, l := range r.Limits {
		if l.Allowed {
			return "denied, a limit peeking"
		}
	}
	return "denied by all"
}

// conjunction is the policy's decision of req worked out from stand-alone
// models of its limits, after the admitted requests.
func conjunction(t *testing.T, limits []PolicyLimit, admitted []request, req request) PolicyResult {
	t.Helper()
	want := PolicyResult{Result: Result{Allowed: true}}
	var peeks, decided []Result
	for _, l := range limits {
		m := mustNew(t, l.Algorithm, l.Params)
		key := func(r request) string {
			if l.Constant != "" {
				return l.Constant
			}
			return r.ids[l.Identity]
		}
		for _, r := range admitted {
			if _, err := m.Decide(key(r), r.now, r.cost, nil); err != nil {
				t.Fatal(err)
			}
		}
		peek, err1 := m.Decide(key(req), req.now, 0, nil) // writes nothing
		r, err2 := m.Decide(key(req), req.now, req.cost, nil)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		// The contract's remaining of a peek is the largest cost allowed.
		if r.Allowed != (req.cost <= peek.Remaining) {
			t.Fatalf("%+v: cost %d, peek %+v, decision %+v", l, req.cost, peek, r)
		}
		peeks, decided = append(peeks, peek), append(decided, r)
		want.Allowed = want.Allowed && r.Allowed
	}
	for i := range limits {
		if want.Allowed || !decided[i].Allowed {
			want.Limits = append(want.Limits, decided[i])
		} else {
			want.Limits = append(want.Limits, peeks[i])
		}
	}
	want.Index = wantBinding(want.Limits, want.Allowed)
	delay := int64(0) // a denial waits for nothing
	for _, r := range want.Limits {
		if want.Allowed {
			delay = max(delay, r.DelayMs)
		}
	}
	want.Result = want.Limits[want.Index-1]
	want.DelayMs = delay
	return want
}

// wantBinding restates the binding rule by cross-multiplying: a denial's
// wait, -1 as the longest; an admission's remaining·other limit.
func wantBinding(rs []Result, allowed bool) int {
	best := 0
	wait := func(r Result) int64 {
		if r.RetryAfterMs == -1 {
			return math.MaxInt64
		}
		return r.RetryAfterMs
	}
	for i, r := range rs {
		b := rs[best]
		switch {
		case allowed:
			lhs := new(big.Int).Mul(big.NewInt(r.Remaining), big.NewInt(b.Limit))
			if lhs.Cmp(new(big.Int).Mul(big.NewInt(b.Remaining), big.NewInt(r.Limit))) < 0 {
				best = i
			}
		case r.Allowed:
		case b.Allowed || wait(r) > wait(b):
			best = i
		}
	}
	return best + 1
}

// randomLimit is the i-th limit (from 0), of algorithm alg with small
// random parameters, counting ip, user or a constant.
func randomLimit(rng *rand.Rand, i int, alg string) PolicyLimit {
	l := PolicyLimit{Name: fmt.Sprintf("l%d", i+1), Algorithm: alg}
	switch rng.Intn(3) {
	case 0:
		l.Identity = "ip"
	case 1:
		l.Identity = "user"
	default:
		l.Constant = "global"
	}
	n, ms := rng.Int63n(5)+1, []int64{100, 1000, 3000}[rng.Intn(3)]
	switch l.Algorithm {
	case "token_bucket":
		l.Params = map[string]int64{"capacity": n, "refill_tokens": rng.Int63n(3) + 1, "refill_ms": ms}
	case "gcra":
		l.Params = map[string]int64{"burst": n, "rate": rng.Int63n(3) + 1, "period_ms": ms}
	case "leaky_bucket":
		l.Params = map[string]int64{"capacity": n, "rate": rng.Int63n(3) + 1, "period_ms": ms}
	case "bucket_window":
		l.Params = map[string]int64{"limit": n, "window_ms": ms, "bucket_ms": 100}
		if rng.Intn(2) == 0 {
			l.Params["limit_2"], l.Params["window_ms_2"] = n+rng.Int63n(5)+1, ms*(rng.Int63n(4)+2)
		}
	case "concurrency":
		l.Params = map[string]int64{"limit": n}
	default:
		l.Params = map[string]int64{"limit": n, "window_ms": ms}
	}
	return l
}
