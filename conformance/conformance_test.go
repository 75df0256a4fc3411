package conformance

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/limitspec/limitspec/internal/redistest"
)

// embedded returns the three embedded targets.
func embedded(tb testing.TB) []Target {
	tb.Helper()
	luaT, err := NewLuaTarget()
	if err != nil {
		tb.Fatal(err)
	}
	mini, err := NewMiniredisTarget()
	if err != nil {
		tb.Fatal(err)
	}
	ts := []Target{NewGoTarget(), luaT, mini}
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
	vectors, err := Load("../vectors")
	if err != nil {
		t.Fatal(err)
	}
	if len(vectors) == 0 {
		t.Fatal("no vectors")
	}
	real, err := NewRedisTarget(redistest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	targets := append(embedded(t), real)
	defer real.Close()
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
	// Everything written under the run's prefix is gone after Close.
	if err := real.Close(); err != nil {
		t.Fatal(err)
	}
}

// lying is a target that answers like another but adds one to remaining
// from a given step on: the runner must catch it.
type lying struct {
	Target
	from, n int
}

func (l *lying) Name() string { return "lying" }

func (l *lying) Decide(key string, now int64, cost json.Number, meta string) Outcome {
	o := l.Target.Decide(key, now, cost, meta)
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
	res := RunVector(v, []Target{NewGoTarget(), &lying{Target: NewGoTarget(), from: 3}})
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
	res := RunVector(v, []Target{NewGoTarget()})
	if res[0].Passed() || !strings.Contains(res[0].Failed, "step 2 ") || !strings.Contains(res[0].Failed, "retry_after_ms") {
		t.Errorf("a wrong expectation was not reported: %q", res[0].Failed)
	}
}

// scribbler writes to the store on a refused step: the runner must see it.
type scribbler struct{ *LuaTarget }

func (s scribbler) Decide(key string, now int64, cost json.Number, meta string) Outcome {
	o := s.LuaTarget.Decide(key, now, cost, meta)
	if o.Error != "" {
		for _, v := range s.store.keys {
			if v.kind == "hash" {
				v.hash["scribbled"] = "1"
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
	vectors, err := Load("../vectors")
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := NewRedisClusterTarget(redistest.StartCluster(t, 3))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	steps := 0
	for _, r := range Run(vectors, []Target{NewGoTarget(), cluster}) {
		if r.Target == "cluster" {
			steps += r.Steps
		}
		if !r.Passed() {
			t.Errorf("%s [%s] (%s): %s", r.Vector, r.Target, r.File, r.Failed)
		}
	}
	if steps == 0 {
		t.Fatal("the cluster ran no step")
	}
	t.Logf("%d vectors, %d steps on the cluster", len(vectors), steps)
}
