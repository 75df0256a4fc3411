package conformance

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/oracle"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/kit"
)

// randomVector derives an algorithm, parameters and a trace from a seed.
// Parameters are mostly small, sometimes at or just past the ends of their
// domains, so that refusals are compared too; bucket_window's windows are
// mostly multiples of its bucket, with up to three tiers. Steps carry
// every string input the algorithm declares (sometimes too long), and
// the traces of an algorithm with views run them.
func randomVector(seed int64) Vector {
	rng := rand.New(rand.NewSource(seed))
	algs := oracle.Algorithms()
	alg := algs[rng.Intn(len(algs))]
	v := Vector{Name: fmt.Sprintf("random/%s/seed-%d", alg, seed), Algorithm: alg, Params: randomParams(rng, alg)}
	var views, inputs []string
	if s, ok := kit.LookupScripts(limitspec.Algorithm{Library: limitspec.Catalogue, Name: alg}); ok {
		for _, v := range s.Views {
			views = append(views, v.Name)
		}
		inputs = s.Inputs
	}
	v.Steps = randomSteps(rng, views, inputs)
	return v
}

// randomParams are alg's parameters: mostly small, sometimes at or just
// past the ends of their domains, an optional one often left out; with
// buckets, windows mostly whole numbers of them.
func randomParams(rng *rand.Rand, alg string) map[string]json.Number {
	names, lo, hi := oracle.Params(alg)
	params := map[string]json.Number{}
	for i, n := range names {
		var v int64
		switch r := rng.Intn(40); {
		case oracle.Optional(alg, n) && r < 20:
			continue // left out: its default
		case r == 0:
			v = lo[i] - 1
		case r == 1:
			v = hi[i] + 1
		case r == 2:
			v = hi[i]
		case r < 20:
			v = rng.Int63n(10) + 1
		default:
			v = rng.Int63n(100000) + 1
		}
		params[n] = json.Number(strconv.FormatInt(v, 10))
	}
	if _, ok := params["bucket_ms"]; ok && rng.Intn(8) != 0 {
		wholeBuckets(rng, alg, names, params)
	}
	return params
}

// wholeBuckets makes the windows whole numbers of a new bucket_ms, and
// the tiers (limit_k with window_ms_k) whole.
func wholeBuckets(rng *rand.Rand, alg string, names []string, params map[string]json.Number) {
	bucket := rng.Int63n(300) + 1
	params["bucket_ms"] = json.Number(strconv.FormatInt(bucket, 10))
	for _, n := range names {
		if _, given := params[n]; strings.HasPrefix(n, "window_ms") && (given || !oracle.Optional(alg, n)) {
			params[n] = json.Number(strconv.FormatInt(bucket*(rng.Int63n(20)+1), 10))
		}
		if tier, ok := strings.CutPrefix(n, "limit_"); ok {
			_, l := params[n]
			_, w := params["window_ms_"+tier]
			if l != w {
				delete(params, n)
				delete(params, "window_ms_"+tier)
			}
		}
	}
}

// randomSteps are 60 steps on three keys, the clock mostly moving ahead
// (callers' clocks apart), each step carrying every string input
// (sometimes too long) or, now and then, running a view.
func randomSteps(rng *rand.Rand, views, inputs []string) []Step {
	var steps []Step
	now := int64(1700000000000) + rng.Int63n(1e9)
	keys := []string{"a", "b", "c"}
	values := []string{"", "alice", "bob:42", "über ✓", strings.Repeat("m", 256), strings.Repeat("m", 257)}
	for i := 0; i < 60; i++ {
		switch r := rng.Intn(20); {
		case r < 8:
		case r < 15:
			now += rng.Int63n(1000)
		case r < 17:
			now += rng.Int63n(200000)
		case r < 19:
			now -= rng.Int63n(5000)
		default:
			now += rng.Int63n(1e10)
		}
		t := wrongClock(rng, now)
		key := keys[rng.Intn(len(keys))]
		if len(views) > 0 && rng.Intn(6) == 0 {
			steps = append(steps, Step{T: t, Key: key, View: views[rng.Intn(len(views))]})
			continue
		}
		cost := rng.Int63n(6)
		if rng.Intn(15) == 0 {
			cost = rng.Int63n(1 << 20)
		}
		c := json.Number(strconv.FormatInt(cost, 10))
		value := values[rng.Intn(len(values))]
		s := Step{T: t, Key: key, Cost: &c, Inputs: map[string]string{}}
		for _, name := range inputs {
			s.Inputs[name] = value
		}
		steps = append(steps, s)
	}
	return steps
}

// wrongClock is the time of one caller at a step whose shared clock reads
// now: mostly now, sometimes a clock far ahead (up to 2^45), far behind
// (down to 0), or just within or beyond MAX_SKEW_MS behind; the next step
// goes on from now.
func wrongClock(rng *rand.Rand, now int64) int64 {
	const nowMax = 1 << 45
	switch rng.Intn(25) {
	case 0:
		return now + rng.Int63n(nowMax-now+1)
	case 1:
		return rng.Int63n(now + 1)
	case 2:
		return now - oracle.MaxSkewMs - 2 + rng.Int63n(5)
	}
	return now
}

// FuzzDifferential drives random traces through the oracle and every
// embedded target and requires them to agree at every step. As a plain
// test it runs the seeds below (fewer with -short); `go test -fuzz FuzzDifferential
// ./conformance` explores further.
func FuzzDifferential(f *testing.F) {
	seeds := int64(250)
	if testing.Short() {
		seeds = 80 // make test; make test-all runs all 250
	}
	for seed := range seeds {
		f.Add(seed)
	}
	targets := append([]Target{NewOracleTarget()}, embedded(f)...)
	f.Fuzz(func(t *testing.T, seed int64) {
		v := randomVector(seed)
		for _, r := range RunVector(v, targets) {
			if !r.Passed() {
				t.Errorf("%s %v [%s]: %s", v.Name, v.Params, r.Target, r.Failed)
			}
		}
	})
}

// TestDifferentialOnRedis runs random traces through the oracle, package
// goimpl and a real redis-server, the fourth target of the embedded three.
func TestDifferentialOnRedis(t *testing.T) {
	t.Parallel() // its own server
	real, err := NewRedisTarget(redistest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	targets := []Target{NewOracleTarget(), NewGoimplTarget(), real}
	for seed := int64(1000); seed < 1200; seed++ {
		v := randomVector(seed)
		for _, r := range RunVector(v, targets) {
			if !r.Passed() {
				t.Errorf("%s %v [%s]: %s", v.Name, v.Params, r.Target, r.Failed)
			}
		}
	}
}
