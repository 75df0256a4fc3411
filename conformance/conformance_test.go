package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/kit"
)

// embedded returns the embedded targets.
func embedded(tb testing.TB) []Target {
	tb.Helper()
	ts, err := EmbeddedTargets()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		for _, t := range ts {
			t.Close()
		}
	})
	return ts
}

// TestVectors replays every vector in ../vectors on every target, a real
// redis-server included, and requires all of them to pass.
func TestVectors(t *testing.T) {
	t.Parallel() // its own servers; waits on them as much as it computes
	vectors, err := Load("../vectors")
	if err != nil {
		t.Fatal(err)
	}
	if len(vectors) == 0 {
		t.Fatal("no vectors")
	}
	addr := redistest.Start(t)
	opened := redisWays(t, 4, func() (*RedisTarget, error) { return NewRedisTarget(addr) })
	targets := embedded(t)
	for _, w := range opened {
		targets = append(targets, w.target)
	}
	steps := map[string]int{}
	for _, r := range Run(vectors, targets) {
		steps[r.Target] += r.Steps
		if !r.Passed() {
			t.Errorf("%s [%s] (%s): %s", r.Vector, r.Target, r.File, r.Failed)
		}
	}
	t.Logf("%d vectors; steps per target: %v", len(vectors), steps)
	for _, tg := range targets {
		if steps[tg.Name()] == 0 {
			t.Errorf("target %s ran no step", tg.Name())
		}
	}
	// Everything written under the run's prefix, and the libraries, are
	// gone after Close.
	for _, w := range opened {
		if err := w.redis.Close(); err != nil {
			t.Fatal(err)
		}
	}
	opt, err := redis.ParseURL(addr)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	if v, err := rdb.FCall(context.Background(), limitspec.Catalogue+"_version", nil).Result(); err == nil {
		t.Errorf("the library (version %v) is still loaded after Close", v)
	}
}

// redisWay is a Redis target reached one way: by EVALSHA or through the
// Functions library, directly or through package redislimit's client.
type redisWay struct {
	target Target
	redis  *RedisTarget
}

// redisWays opens a target on one server or cluster for each way of
// reaching it: EVALSHA, FCALL, redislimit's client by EVALSHA, its
// handles bound to a limit or a policy by EVALSHA, and the client and the
// handles by FCALL. With -short (make test) only the first short of
// them, the others' parts being run elsewhere: FCALL, the client and the
// handles on one server.
func redisWays(t *testing.T, short int, open func() (*RedisTarget, error)) []redisWay {
	ways := []struct{ functions, client, bound bool }{{false, false, false}, {true, false, false}, {false, true, false}, {false, true, true},
		{true, true, false}, {true, true, true}}
	if testing.Short() {
		ways = ways[:short]
	}
	var out []redisWay
	for _, w := range ways {
		rt, err := open()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close() })
		if w.functions {
			if err := rt.UseFunctions(); err != nil {
				t.Fatal(err)
			}
		}
		var tg Target = rt
		switch {
		case w.bound:
			tg = NewRedisBoundTarget(rt)
		case w.client:
			tg = NewClientTarget(rt)
		}
		out = append(out, redisWay{target: tg, redis: rt})
	}
	return out
}

// req is a request of an algorithm with no string input.
func req(alg string, params map[string]json.Number, key string, nowMs int64, cost json.Number) Request {
	return Request{Algorithm: alg, Params: params, Key: key, NowMs: nowMs, Cost: cost}
}

// lying is a target that answers like another but adds one to remaining
// from a given step on: the runner must catch it.
type lying struct {
	Target
	from, n int
}

func (l *lying) Name() string { return "lying" }

func (l *lying) Decide(r Request) Outcome {
	o := l.Target.Decide(r)
	l.n++
	if l.n > l.from && o.Error == "" {
		o.Remaining++
	}
	return o
}

func TestRunnerCatchesDivergence(t *testing.T) {
	vectors, err := Load("../vectors/gcra")
	if err != nil {
		t.Fatal(err)
	}
	var v Vector
	for _, x := range vectors {
		if x.Name == "gcra/redis-cell-readme" {
			v = x
		}
	}
	// Strip the expectations so that only the cross-target check can fail.
	for i := range v.Steps {
		v.Steps[i].Expect = Expect{}
	}
	res := RunVector(v, []Target{NewGoimplTarget(), &lying{Target: NewGoimplTarget(), from: 3}})
	if !res[0].Passed() {
		t.Errorf("goimpl failed: %s", res[0].Failed)
	}
	if res[1].Passed() || !strings.Contains(res[1].Failed, "step 3 ") || !strings.Contains(res[1].Failed, "Remaining") {
		t.Errorf("the lying target was not caught at step 3: %q", res[1].Failed)
	}
}

func TestRunnerChecksExpectations(t *testing.T) {
	v, err := LoadFile("../vectors/fixed_window/boundary-burst.json")
	if err != nil {
		t.Fatal(err)
	}
	*v.Steps[2].Expect.RetryAfterMs = 2 // the true answer is 1
	res := RunVector(v, []Target{NewGoimplTarget()})
	if res[0].Passed() || !strings.Contains(res[0].Failed, "step 2 ") || !strings.Contains(res[0].Failed, "retry_after_ms") {
		t.Errorf("a wrong expectation was not reported: %q", res[0].Failed)
	}
}

// scribbler writes to the store on a refused step: the runner must see it.
type scribbler struct{ *LuaTarget }

func (s scribbler) Decide(r Request) Outcome {
	o := s.LuaTarget.Decide(r)
	if o.Error != "" {
		for _, k := range s.store.Keys() {
			if strings.HasPrefix(k.Content, "string ") {
				s.store.Do("SET", []string{k.Name, strings.TrimPrefix(k.Content, "string ") + ":1", "PX", strconv.FormatInt(k.TTL, 10)})
			}
		}
	}
	return o
}

func TestRunnerCatchesWriteOnRefusal(t *testing.T) {
	lt, err := NewLuaTarget()
	if err != nil {
		t.Fatal(err)
	}
	v, err := LoadFile("../vectors/gcra/gen-bad-negative-cost.json")
	if err != nil {
		t.Fatal(err)
	}
	// First admit a request, so that a key exists when the refusal comes.
	one := json.Number("1")
	v.Steps = append([]Step{{T: v.Steps[0].T, Key: v.Steps[0].Key, Cost: &one}}, v.Steps...)
	res := RunVector(v, []Target{scribbler{lt}})
	if res[0].Passed() || !strings.Contains(res[0].Failed, "a refused step changed the keys") {
		t.Errorf("a write on a refused step was not reported: %q", res[0].Failed)
	}
}

// TestVectorsOnCluster replays every vector on a three-node Redis Cluster:
// each call's keys share one hash tag, so no script meets CROSSSLOT, and
// the vector's many keys land on different nodes.
func TestVectorsOnCluster(t *testing.T) {
	t.Parallel() // its own servers; waits on them as much as it computes
	vectors, err := Load("../vectors")
	if err != nil {
		t.Fatal(err)
	}
	addrs := redistest.StartCluster(t, 3)
	opened := redisWays(t, 1, func() (*RedisTarget, error) { return NewRedisClusterTarget(addrs) })
	targets := []Target{NewGoimplTarget()}
	for _, w := range opened {
		targets = append(targets, w.target)
	}
	byName := map[string]Vector{}
	for _, v := range vectors {
		byName[v.Name] = v
	}
	// Per cluster target: steps, steps of policies, vectors refused.
	steps, policySteps, skipped := map[string]int{}, map[string]int{}, map[string]int{}
	for _, r := range Run(vectors, targets) {
		if r.Failed != "" {
			t.Errorf("%s [%s] (%s): %s", r.Vector, r.Target, r.File, r.Failed)
		}
		if r.Target == "goimpl" {
			continue
		}
		v := byName[r.Vector]
		isPolicy := v.Policy != nil
		unsafe := isPolicy && !v.Policy.OneSlot()
		switch {
		case unsafe && r.Skipped == "":
			t.Errorf("%s [%s]: a policy over several hash tags ran on the cluster", r.Vector, r.Target)
		case !unsafe && r.Skipped != "":
			t.Errorf("%s [%s]: skipped on the cluster: %s", r.Vector, r.Target, r.Skipped)
		case unsafe:
			skipped[r.Target]++
		case isPolicy:
			policySteps[r.Target] += r.Steps
		}
		steps[r.Target] += r.Steps
	}
	for _, w := range opened {
		tg := w.target.Name()
		if steps[tg] == 0 || policySteps[tg] == 0 || skipped[tg] == 0 {
			t.Fatalf("%s ran %d steps, %d of policies, and skipped %d vectors of policies not for a cluster; want all three > 0", tg, steps[tg], policySteps[tg], skipped[tg])
		}
		t.Logf("%s: %d vectors, %d steps (%d of one-slot policies); %d vectors of other policies refused", tg, len(vectors), steps[tg], policySteps[tg], skipped[tg])
	}
}

// TestClusterRefusesPolicyOverSeveralTags: on a cluster, a client of ours
// refuses a policy whose identities may lie in different slots, saying why
// and what to do, where Redis itself would answer CROSSSLOT.
func TestClusterRefusesPolicyOverSeveralTags(t *testing.T) {
	addrs := redistest.StartCluster(t, 3)
	cluster, err := NewRedisClusterTarget(addrs)
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	ipUser := vectorPolicy(t, must(limitspec.IPUserPolicy()))
	err = cluster.Begin(&Vector{Policy: ipUser})
	if !errors.Is(err, ErrNotApplicable) || !strings.Contains(err.Error(), "several identities") || !strings.Contains(err.Error(), "split it") {
		t.Fatalf("Begin(ip_user) on a cluster: %v; want a refusal that says why and what to do", err)
	}
	burstQuota := vectorPolicy(t, must(limitspec.BurstQuotaPolicy(3)))
	if err := cluster.Begin(&Vector{Policy: burstQuota}); err != nil {
		t.Fatalf("Begin(burst_quota), one identity: %v", err)
	}
	// What the refusal spares the caller: the script itself, sent anyway.
	c, refused := prepareCall("", Request{Policy: ipUser, IDs: map[string]string{"ip": "10.0.0.1", "user": "alice"}, NowMs: 1700000000000, Cost: "1"}, decideCall, "")
	if refused != nil {
		t.Fatal(refused)
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer rdb.Close()
	args := make([]any, len(c.argv))
	for i, a := range c.argv {
		args[i] = a
	}
	lib, _ := kit.LookupLibrary(c.lib)
	err = rdb.Eval(context.Background(), lib.Policy.Source, c.keys, args...).Err()
	if err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("ip_user's call of the policy script on a cluster: %v, want CROSSSLOT", err)
	}
}

// must is p, or a panic for an error no ready-made policy gives.
func must(p *limitspec.Policy, err error) *limitspec.Policy {
	if err != nil {
		panic(err)
	}
	return p
}

// vectorPolicy is a typed policy as a vector writes it.
func vectorPolicy(tb testing.TB, p *limitspec.Policy) *Policy {
	tb.Helper()
	out := &Policy{Name: p.Name()}
	for _, l := range p.Limits() {
		out.Limits = append(out.Limits, PolicyLimit{Name: l.Name, Algorithm: l.Limit.Algorithm().String(),
			Identity: l.Identity, Constant: l.Constant, Params: limitParams(tb, l.Limit)})
	}
	return out
}

// limitParams is a typed limit's parameters as vectors give them.
func limitParams(tb testing.TB, l limitspec.Limit) map[string]json.Number {
	tb.Helper()
	s, ok := kit.LookupScripts(l.Algorithm())
	if !ok {
		tb.Fatalf("no scripts of %s", l.Algorithm())
	}
	args, err := s.Args(l)
	if err != nil {
		tb.Fatal(err)
	}
	params := map[string]json.Number{}
	for i, a := range args {
		params[s.Params[i].Name] = json.Number(strconv.FormatInt(a, 10))
	}
	return params
}

// TestMalformedEntriesAreBadState plants entries no script could have
// written and expects every Redis-like target to refuse the call with
// BADSTATE and to write nothing.
func TestMalformedEntriesAreBadState(t *testing.T) {
	luaT, err := NewLuaTarget()
	if err != nil {
		t.Fatal(err)
	}
	defer luaT.Close()
	mini, err := NewMiniredisTarget()
	if err != nil {
		t.Fatal(err)
	}
	defer mini.Close()
	plant := map[string]func(args ...string) error{
		"gopherlua": func(args ...string) error { _, err := luaT.store.Do(args[0], args[1:]); return err },
		"miniredis": func(args ...string) error {
			a := make([]any, len(args))
			for i, x := range args {
				a[i] = x
			}
			return mini.rdb.Do(context.Background(), a...).Err()
		},
	}
	tests := []struct {
		alg    string
		params map[string]json.Number
		plant  [][]string
		view   string
	}{
		{"gcra", map[string]json.Number{"burst": "5", "rate": "7", "period_ms": "1000"},
			[][]string{{"SET", "{k}:gc:7:1000", "x", "PX", "60000"}}, ""},
		{"gcra", map[string]json.Number{"burst": "5", "rate": "7", "period_ms": "1000"},
			[][]string{{"SET", "{k}:gc:7:1000", "1700000000000:1:2", "PX", "60000"}}, ""},
		{"fixed_window", map[string]json.Number{"limit": "5", "window_ms": "1000"},
			[][]string{{"SET", "{k}:fw:1000", "1700000000000:123456789012345678", "PX", "60000"}}, ""},
		{"sliding_log", map[string]json.Number{"limit": "5", "window_ms": "1000"},
			[][]string{{"ZADD", "{k}:sl:1000", "1", "not-an-entry"}, {"PEXPIRE", "{k}:sl:1000", "60000"}}, ""},
		{"sliding_log", map[string]json.Number{"limit": "5", "window_ms": "1000"},
			[][]string{{"ZADD", "{k}:sl:1000", "1", "1:0:x"}, {"PEXPIRE", "{k}:sl:1000", "60000"}}, ""},
		{"bucket_window", map[string]json.Number{"limit": "5", "window_ms": "1000", "bucket_ms": "100"},
			[][]string{{"ZADD", "{k}:bk:100:1000:0:0", "1700000000000", "soon"}, {"PEXPIRE", "{k}:bk:100:1000:0:0", "60000"}}, ""},
		{"bucket_window", map[string]json.Number{"limit": "5", "window_ms": "1000", "bucket_ms": "100"},
			[][]string{{"ZADD", "{k}:bk:100:1000:0:0", "1700000000000", "1700000000000:1.5:2:1700000000000"}, {"PEXPIRE", "{k}:bk:100:1000:0:0", "60000"}}, ""},
		{"meta_window", map[string]json.Number{"limit": "5", "window_ms": "1000"},
			[][]string{{"RPUSH", "{k}:ml:1000", "1700000000000"}, {"PEXPIRE", "{k}:ml:1000", "60000"}}, ""},
		{"meta_window", map[string]json.Number{"limit": "5", "window_ms": "1000"},
			[][]string{{"RPUSH", "{k}:ml:1000", "1700000000000:1700000000000:x:1:"}, {"PEXPIRE", "{k}:ml:1000", "60000"}}, ""},
		{"meta_window", map[string]json.Number{"limit": "5", "window_ms": "1000"},
			[][]string{{"RPUSH", "{k}:ml:1000", "1700000000000"}, {"PEXPIRE", "{k}:ml:1000", "60000"}}, "entries"},
	}
	for _, tt := range tests {
		for _, tg := range []Target{luaT, mini} {
			if err := tg.Begin(&Vector{Algorithm: tt.alg, Params: tt.params}); err != nil {
				t.Fatal(err)
			}
			for _, cmd := range tt.plant {
				if err := plant[tg.Name()](cmd...); err != nil {
					t.Fatalf("%s: planting %v: %v", tg.Name(), cmd, err)
				}
			}
			ks := tg.(Keyspace)
			before, _ := ks.Keys()
			var o Outcome
			if tt.view != "" {
				o = tg.View(tt.view, req(tt.alg, tt.params, "k", 1700000000100, "1"))
			} else {
				o = tg.Decide(req(tt.alg, tt.params, "k", 1700000000100, "1"))
			}
			if o.Error != "BADSTATE" {
				t.Errorf("%s %s after %v: %+v, want BADSTATE", tg.Name(), tt.alg, tt.plant, o)
			}
			if msg := checkKeys(ks, before, true, 0); msg != "" {
				t.Errorf("%s %s: %s", tg.Name(), tt.alg, msg)
			}
		}
	}
}

// TestLoweredLimitCountsEveryEntry: a sliding log filled under a higher
// limit holds more entries than the lower limit allows; every entry still
// counts until it leaves the window, so the call is denied until enough
// have left.
func TestLoweredLimitCountsEveryEntry(t *testing.T) {
	luaT, err := NewLuaTarget()
	if err != nil {
		t.Fatal(err)
	}
	defer luaT.Close()
	mini, err := NewMiniredisTarget()
	if err != nil {
		t.Fatal(err)
	}
	defer mini.Close()
	const t0 = 1700000000000
	five := map[string]json.Number{"limit": "5", "window_ms": "1000"}
	two := map[string]json.Number{"limit": "2", "window_ms": "1000"}
	for _, tg := range []Target{NewGoimplTarget(), luaT, mini} {
		tg.Begin(&Vector{Algorithm: "sliding_log", Params: five})
		for i := int64(0); i < 5; i++ {
			if o := tg.Decide(req("sliding_log", five, "k", t0+i, "1")); !o.Allowed {
				t.Fatalf("%s: request %d denied under limit 5: %+v", tg.Name(), i, o)
			}
		}
		// The same key, now with limit 2: an amount, so the same state.
		// At t0+5 the set holds 5 entries of cost 1, none has left the
		// window: used = 5, and 5 + 1 > 2: denied. Admitting 1 needs
		// 5 + 1 - 2 = 4 of them gone, the 4th (t0+3) leaves at t0+1003:
		// retry after 998 ms; reset when t0+4 leaves, after 999 ms.
		o := tg.Decide(req("sliding_log", two, "k", t0+5, "1"))
		want := Outcome{Reply: kit.Reply{Allowed: false, Limit: 2, Remaining: 0, RetryAfterMs: 998, ResetAfterMs: 999}}
		if diff := cmp.Diff(want, o, ignoreMessage); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tg.Name(), diff)
		}
	}
}
