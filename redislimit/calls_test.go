package redislimit_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/internal/oracle"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// withFunctions is opts with Functions set.
func withFunctions(opts redislimit.Options) redislimit.Options {
	opts.Functions = true
	return opts
}

// eachWay runs f on a limiter of a server of its own, once calling the
// scripts (EVALSHA) and once the Functions library (FCALL), with opts.
func eachWay(t *testing.T, f func(t *testing.T, rdb *redis.Client, lim *redislimit.Limiter), opts redislimit.Options) {
	for _, way := range []struct {
		name string
		opts redislimit.Options
	}{{"scripts", opts}, {"functions", withFunctions(opts)}} {
		t.Run(way.name, func(t *testing.T) {
			t.Parallel()
			_, rdb := newClient(t)
			f(t, rdb, newLimiter(t, rdb, way.opts))
		})
	}
}

// TestTwoLimitsPerCall: one limiter decides two different typed limits
// on two keys, call by call, each as the oracle of its own algorithm
// does, under keys that name each limit's rate, period or window.
func TestTwoLimitsPerCall(t *testing.T) {
	eachWay(t, func(t *testing.T, rdb *redis.Client, lim *redislimit.Limiter) {
		gcra := limitspec.GCRA{Burst: 2, Rate: 1, Period: time.Second}
		window := limitspec.FixedWindow{Limit: 3, Window: time.Minute}
		models := map[string]oracle.Model{
			"alice": model(t, "gcra", map[string]int64{"burst": 2, "rate": 1, "period_ms": 1000}),
			"bob":   model(t, "fixed_window", map[string]int64{"limit": 3, "window_ms": 60000}),
		}
		limits := map[string]limitspec.Limit{"alice": gcra, "bob": window}
		names := map[string]string{"alice": "gcra", "bob": "fixed_window"}
		denied := 0
		for i := range 12 {
			key, now := []string{"alice", "bob"}[i%2], int64(t0+300*i)
			res, err := lim.Limit(t.Context(), limitspec.Request{Key: key, Limit: limits[key], Cost: 1, Now: time.UnixMilli(now)})
			if err != nil {
				t.Fatal(err)
			}
			want, err := models[key].Decide(key, now, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkOne(t, fmt.Sprintf("call %d (%s)", i, key), res, names[key], want)
			if !res.Allowed {
				denied++
			}
		}
		if denied == 0 {
			t.Error("no call was denied: the trace does not reach either limit")
		}
		if got := keys(t, rdb); !slices.Equal(got, []string{"{alice}:gc:1:1000", "{bob}:fw:60000"}) {
			t.Errorf("keys %v; want {alice}:gc:1:1000 and {bob}:fw:60000", got)
		}
	}, redislimit.Options{})
}

// limitChange is one call of TestLimitChange and its outcome, worked by
// hand from docs/semantics.md.
type limitChange struct {
	what  string
	key   string
	limit limitspec.Limit
	cost  int64
	want  oracle.Result
}

func gcraBurst(burst, rate int64, period time.Duration) limitspec.GCRA {
	return limitspec.GCRA{Burst: burst, Rate: rate, Period: period}
}

// limitChanges, all at t0, which is 20 s into a minute (t0 mod 60000 =
// 20000) and 800 s into an hour. gcra keeps its queue ahead of now, tat, in
// units of 1/rate ms: each request adds period_ms, the limit is burst *
// period_ms, and a stored tat reads clamped to twice that.
var limitChanges = []limitChange{
	{"gcra 10/1s takes its whole burst", "dave", gcraBurst(10, 1, time.Second), 10,
		oracle.Result{Allowed: true, Limit: 10, Remaining: 0, RetryAfterMs: -1, ResetAfterMs: 10000}},
	{"burst lowered to 2: tat 10000 reads as 4000", "dave", gcraBurst(2, 1, time.Second), 1,
		oracle.Result{Allowed: false, Limit: 2, Remaining: 0, RetryAfterMs: 3000, ResetAfterMs: 4000}},
	{"burst 10 again: the denial wrote nothing", "dave", gcraBurst(10, 1, time.Second), 1,
		oracle.Result{Allowed: false, Limit: 10, Remaining: 0, RetryAfterMs: 1000, ResetAfterMs: 10000}},
	{"burst raised to 20: admits at once", "dave", gcraBurst(20, 1, time.Second), 1,
		oracle.Result{Allowed: true, Limit: 20, Remaining: 9, RetryAfterMs: -1, ResetAfterMs: 11000}},
	{"rate 2: a fresh state", "dave", gcraBurst(20, 2, time.Second), 1,
		oracle.Result{Allowed: true, Limit: 20, Remaining: 19, RetryAfterMs: -1, ResetAfterMs: 500}},
	{"period 2s: a fresh state", "dave", gcraBurst(20, 1, 2*time.Second), 1,
		oracle.Result{Allowed: true, Limit: 20, Remaining: 19, RetryAfterMs: -1, ResetAfterMs: 2000}},
	{"fixed window 5/min takes 4", "erin", limitspec.FixedWindow{Limit: 5, Window: time.Minute}, 4,
		oracle.Result{Allowed: true, Limit: 5, Remaining: 1, RetryAfterMs: -1, ResetAfterMs: 40000}},
	{"limit lowered to 3: 4 used, denied", "erin", limitspec.FixedWindow{Limit: 3, Window: time.Minute}, 1,
		oracle.Result{Allowed: false, Limit: 3, Remaining: 0, RetryAfterMs: 40000, ResetAfterMs: 40000}},
	{"limit raised to 10: 4 used, admitted", "erin", limitspec.FixedWindow{Limit: 10, Window: time.Minute}, 1,
		oracle.Result{Allowed: true, Limit: 10, Remaining: 5, RetryAfterMs: -1, ResetAfterMs: 40000}},
	{"window 1h: a fresh state", "erin", limitspec.FixedWindow{Limit: 10, Window: time.Hour}, 1,
		oracle.Result{Allowed: true, Limit: 10, Remaining: 9, RetryAfterMs: -1, ResetAfterMs: 3600000 - 800000}},
}

// TestLimitChange: the same key under a limit that changes between
// calls. A change of amounts (burst, limit) keeps the state, read
// clamped under the new amounts; a change of a named parameter (rate,
// period, window) starts a fresh state under other keys, and leaves the
// old one as it was. Reset deletes one limit's state alone.
func TestLimitChange(t *testing.T) {
	eachWay(t, func(t *testing.T, rdb *redis.Client, lim *redislimit.Limiter) {
		for _, c := range limitChanges {
			res, err := lim.Limit(t.Context(), limitspec.Request{Key: c.key, Limit: c.limit, Cost: c.cost, Peek: c.cost == 0, Now: at(0)})
			if err != nil {
				t.Fatalf("%s: %v", c.what, err)
			}
			checkOne(t, c.what, res, c.limit.Algorithm().Name, c.want)
		}
		want := []string{"{dave}:gc:1:1000", "{dave}:gc:1:2000", "{dave}:gc:2:1000", "{erin}:fw:3600000", "{erin}:fw:60000"}
		if got := keys(t, rdb); !slices.Equal(got, want) {
			t.Errorf("keys %v; want %v", got, want)
		}
		if tat, err := field(t, rdb, "{dave}:gc:1:1000", 1); tat != 11000 {
			t.Errorf("{dave}:gc:1:1000 holds tat %d (%v) after the rate and period changed; want 11000, as burst 20 left it", tat, err)
		}
		if err := lim.Reset(t.Context(), limitspec.Request{Key: "dave", Limit: gcraBurst(20, 1, time.Second)}); err != nil {
			t.Fatal(err)
		}
		want = slices.DeleteFunc(want, func(k string) bool { return k == "{dave}:gc:1:1000" })
		if got := keys(t, rdb); !slices.Equal(got, want) {
			t.Errorf("after Reset: keys %v; want %v", got, want)
		}
		res, err := lim.Limit(t.Context(), limitspec.Request{Key: "dave", Limit: gcraBurst(10, 1, time.Second), Cost: 1, Now: at(0)})
		if err != nil {
			t.Fatal(err)
		}
		checkOne(t, "after Reset, as on a fresh key", res, "gcra",
			oracle.Result{Allowed: true, Limit: 10, Remaining: 9, RetryAfterMs: -1, ResetAfterMs: 1000})
	}, redislimit.Options{})
}

// TestPolicyWithConstant: user_global on one Redis, two users sharing
// its global limit (a constant), is decided as the oracle decides it,
// under keys inside the prefix's hash tag; a policy's Reset deletes the
// identities' state, the shared limit's included.
func TestPolicyWithConstant(t *testing.T) {
	eachWay(t, func(t *testing.T, rdb *redis.Client, lim *redislimit.Limiter) {
		p, err := limitspec.UserGlobalPolicy(4)
		if err != nil {
			t.Fatal(err)
		}
		m, err := oracle.NewPolicy("user_global", []oracle.PolicyLimit{
			{Name: "user", Algorithm: "token_bucket", Identity: "user", Params: map[string]int64{"capacity": 20, "refill_tokens": 1, "refill_ms": 100}},
			{Name: "global", Algorithm: "fixed_window", Constant: "global", Params: map[string]int64{"limit": 4, "window_ms": 60000}},
		})
		if err != nil {
			t.Fatal(err)
		}
		denied := 0
		for i := range 7 {
			ids := map[string]string{"user": []string{"alice", "bob"}[i%2]}
			res, err := lim.Limit(t.Context(), limitspec.Request{Policy: p, IDs: ids, Cost: 1, Now: at(10 * int64(i))})
			if err != nil {
				t.Fatal(err)
			}
			want, err := m.Decide(ids, t0+10*int64(i), 1)
			if err != nil {
				t.Fatal(err)
			}
			checkPolicy(t, fmt.Sprintf("call %d (%s)", i, ids["user"]), res, []string{"user", "global"}, want)
			if !res.Allowed {
				denied++
			}
		}
		if denied != 3 {
			t.Errorf("%d calls denied; want 3, once the shared 4 are used", denied)
		}
		want := []string{"{app:alice}:user:tk:1:100", "{app:bob}:user:tk:1:100", "{app:global}:global:fw:60000"}
		if got := keys(t, rdb); !slices.Equal(got, want) {
			t.Errorf("keys %v; want %v", got, want)
		}
		if err := lim.Reset(t.Context(), limitspec.Request{Policy: p, IDs: map[string]string{"user": "alice"}}); err != nil {
			t.Fatal(err)
		}
		if got := keys(t, rdb); !slices.Equal(got, want[1:2]) {
			t.Errorf("after alice's Reset: keys %v; want %v", got, want[1:2])
		}
	}, redislimit.Options{Prefix: "app:"})
}

// TestView: meta_window's view "entries" returns who used the limit
// (the meta of Request.Inputs), as the oracle lists them, writing
// nothing; none once the window has closed. An unknown view, or a view
// of a policy, is refused.
func TestView(t *testing.T) {
	eachWay(t, func(t *testing.T, rdb *redis.Client, lim *redislimit.Limiter) {
		ctx := t.Context()
		limit := limitspec.MetaWindow{Limit: 3, Window: time.Minute}
		m := model(t, "meta_window", map[string]int64{"limit": 3, "window_ms": 60000}).(oracle.EntryLister)
		for i, who := range []string{"alice", "bob", "carol"} {
			req := limitspec.Request{Key: "shared", Limit: limit, Cost: int64(1 + i%2), Now: at(10 * int64(i)), Inputs: map[string]string{"meta": who}}
			res, err := lim.Limit(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := m.(oracle.Model).Decide("shared", t0+10*int64(i), req.Cost, req.Inputs)
			checkOne(t, who, res, "meta_window", want)
		}
		for _, when := range []int64{30, 59_999, 60_000} {
			before := keys(t, rdb)
			got, err := lim.View(ctx, "entries", limitspec.Request{Key: "shared", Limit: limit, Now: at(when)})
			if err != nil {
				t.Fatal(err)
			}
			list, _ := m.Entries("shared", t0+when)
			want := [][]any{}
			for _, e := range list {
				want = append(want, e.Row())
			}
			if when == 30 && len(want) != 2 {
				t.Fatalf("the oracle lists %v at t0+30; the trace should leave alice's and bob's", want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("entries at t0+%d: %v; want %v", when, got, want)
			}
			if after := keys(t, rdb); !slices.Equal(before, after) {
				t.Errorf("the view at t0+%d changed the keys from %v to %v", when, before, after)
			}
		}
		viewRefusals(t, lim)
	}, redislimit.Options{})
}

// viewRefusals: a view the algorithm does not have, and a view of a
// policy, are refused with package goimpl's words.
func viewRefusals(t *testing.T, lim *redislimit.Limiter) {
	twin, err := goimpl.New(goimpl.Options{NoSweeper: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { twin.Close() })
	quota, err := limitspec.BurstQuotaPolicy(10)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		view string
		req  limitspec.Request
	}{
		{"entries", limitspec.Request{Key: "u", Limit: burst, Now: at(0)}},
		{"nope", limitspec.Request{Key: "u", Limit: limitspec.MetaWindow{Limit: 3, Window: time.Minute}, Now: at(0)}},
		{"entries", limitspec.Request{Policy: quota, IDs: map[string]string{"user": "u"}, Now: at(0)}},
		{"entries", limitspec.Request{Key: "", Limit: limitspec.MetaWindow{Limit: 3, Window: time.Minute}, Now: at(0)}},
	} {
		_, err := lim.View(t.Context(), c.view, c.req)
		_, want := twin.View(t.Context(), c.view, c.req)
		if want == nil || !errors.Is(err, limitspec.ErrBadInput) || err.Error() != want.Error() {
			t.Errorf("view %s of %+v: %v; want ErrBadInput %v", c.view, c.req, err, want)
		}
	}
}

// TestExample runs the README's example (Example_policy's decide) on a
// server of its own: each user's plan's limit and burst_quota write
// their keys, at the server's clock.
func TestExample(t *testing.T) {
	t.Parallel()
	_, rdb := newClient(t)
	before := time.Now().UnixMilli()
	for user, plan := range map[string]string{"alice": "pro", "bob": "free"} {
		if err := decide(t.Context(), rdb, user, plan); err != nil {
			t.Fatalf("%s: %v", user, err)
		}
	}
	after := time.Now().UnixMilli()
	var want []string
	for _, user := range []string{"alice", "bob"} {
		want = append(want, "{"+user+"}:burst:gc:10:1000", "{"+user+"}:daily:sl:86400000")
	}
	want = append(want, "{alice}:gc:20:1000", "{bob}:gc:1:1000")
	slices.Sort(want)
	if got := keys(t, rdb); !slices.Equal(got, want) {
		t.Errorf("keys %v; want %v", got, want)
	}
	if ts, err := field(t, rdb, "{bob}:gc:1:1000", 0); err != nil || ts < before-1000 || ts > after+1000 {
		t.Errorf("{bob}:gc:1:1000 records ts %d (%v); want the server's clock, within [%d, %d] give or take 1 s", ts, err, before, after)
	}
}

// TestExampleBound runs Example_bound's loginAttempts on a server of its
// own: three attempts at one instant use the burst of 3 (2, 1, 0 left),
// and the fourth waits for the 10 s a login takes to come back
// (docs/semantics.md, "The algorithms, exactly").
func TestExampleBound(t *testing.T) {
	t.Parallel()
	_, rdb := newClient(t)
	got, err := loginAttempts(t.Context(), rdb, "alice", []time.Time{at(0), at(0), at(0), at(0)})
	want := []string{
		"allowed true, 2 left, retry after 0s",
		"allowed true, 1 left, retry after 0s",
		"allowed true, 0 left, retry after 0s",
		"allowed false, 0 left, retry after 10s",
	}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("%q, %v; want %q", got, err, want)
	}
}
