package conformance

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// clockVectors picks, per algorithm and per policy, its first vector that
// package memory accepts, and the request of its first step.
func clockVectors(t *testing.T) map[string]Request {
	t.Helper()
	vectors, err := Load("../../vectors")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Request{}
	for _, v := range vectors {
		name := v.Algorithm
		if v.Policy != nil {
			name = v.Policy.Name
		}
		m := NewMemoryTarget()
		if _, done := out[name]; done || m.Begin(&v) != nil {
			continue
		}
		r := v.Request(v.Steps[0], v.Params)
		if o := m.Decide(r); o.Error != "" || r.Force {
			continue
		}
		r.Inputs = nil
		out[name] = r
	}
	return out
}

// at is r at nowMs with cost.
func at(r Request, nowMs int64, cost json.Number) Request {
	r.NowMs, r.Cost = nowMs, cost
	return r
}

// renamed is r with the key, or each identity value, suffixed.
func renamed(r Request, suffix string) Request {
	ids := map[string]string{}
	for k, v := range r.IDs {
		ids[k] = v + suffix
	}
	r.Key, r.IDs = r.Key+suffix, ids
	return r
}

// serverClockSteps are the costs of the requests each algorithm gets, one
// key, a few ms apart: admissions, a peek, a cost past most limits.
var serverClockSteps = []string{"1", "1", "0", "1", "1000000", "1"}

// decideAtServerTime runs one step of t's script with an empty now_ms,
// so that the script reads the server's TIME.
func decideAtServerTime(t *RedisTarget, r Request) Outcome {
	c, _ := prepareCall(t.prefix, r, decideCall, "")
	c.argv[0] = ""
	res, err := t.eval(c)
	return decisionOutcome(c, res, err)
}

// TestServerClockOnMiniredis: with now_ms empty, every script decides as
// it would with now_ms set to the server's TIME (miniredis's clock, set
// by the test).
func TestServerClockOnMiniredis(t *testing.T) {
	mini, err := NewMiniredisTarget()
	if err != nil {
		t.Fatal(err)
	}
	defer mini.Close()
	for name, r := range clockVectors(t) {
		ref := NewMemoryTarget()
		v := &Vector{Algorithm: r.Algorithm, Params: r.Params, Policy: r.Policy}
		if err := mini.Begin(v); err != nil {
			t.Fatal(err)
		}
		if err := ref.Begin(v); err != nil {
			t.Fatal(err)
		}
		now := int64(1700000000000)
		for i, cost := range serverClockSteps {
			now += int64(i) * 7
			mini.mini.SetTime(time.UnixMilli(now).Add(123 * time.Microsecond))
			got := decideAtServerTime(mini, at(r, 0, json.Number(cost)))
			want := ref.Decide(at(r, now, json.Number(cost)))
			if diff := cmp.Diff(want, got, ignoreMessage); diff != "" {
				t.Errorf("%s step %d at server time %d (-explicit +server clock):\n%s", name, i, now, diff)
			}
		}
	}
}

// TestServerClockOnRedis: on a real Redis, each call with an empty
// now_ms runs in one MULTI between two TIME commands; when both read the
// same ms, the script read it too, and must have decided as package
// memory does at that time. A sequence whose TIMEs straddle a ms is tried again on a
// new key.
func TestServerClockOnRedis(t *testing.T) {
	real, err := NewRedisTarget(redistest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	ctx := context.Background()
	for name, r := range clockVectors(t) {
		checked := false
		for attempt := 0; attempt < 20 && !checked; attempt++ {
			// A fresh key space each attempt: a policy's constant
			// identity keeps its keys whatever the request's names.
			if err := real.Begin(&Vector{Algorithm: r.Algorithm, Params: r.Params, Policy: r.Policy}); err != nil {
				t.Fatal(err)
			}
			c, _ := prepareCall(real.prefix, r, decideCall, "")
			if err := real.scripts[c.function()].Load(ctx, real.rdb).Err(); err != nil {
				t.Fatal(err)
			}
			checked = serverClockSequence(t, real, name, renamed(r, strconv.Itoa(attempt)))
		}
		if !checked {
			t.Errorf("%s: every attempt straddled a ms boundary", name)
		}
	}
}

// serverClockSequence runs serverClockSteps on r's key, comparing each
// with package memory at the server's ms; it returns false, having
// compared only the steps before, when a step's TIMEs disagree.
func serverClockSequence(t *testing.T, real *RedisTarget, name string, r Request) bool {
	ctx := context.Background()
	ref := NewMemoryTarget()
	if err := ref.Begin(&Vector{Algorithm: r.Algorithm, Params: r.Params, Policy: r.Policy}); err != nil {
		t.Fatal(err)
	}
	for i, cost := range serverClockSteps {
		c, _ := prepareCall(real.prefix, at(r, 0, json.Number(cost)), decideCall, "")
		c.argv[0] = ""
		args := make([]any, len(c.argv))
		for j, a := range c.argv {
			args[j] = a
		}
		var before, after *redis.TimeCmd
		var eval *redis.Cmd
		_, err := real.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			before = p.Time(ctx)
			eval = p.EvalSha(ctx, real.scripts[c.function()].Hash(), c.keys, args...)
			after = p.Time(ctx)
			return nil
		})
		if err != nil && eval.Err() == nil {
			t.Fatal(err)
		}
		ms := before.Val().UnixMilli()
		if ms != after.Val().UnixMilli() {
			return false
		}
		res, err := eval.Result()
		got := decisionOutcome(c, res, err)
		want := ref.Decide(at(r, ms, json.Number(cost)))
		if diff := cmp.Diff(want, got, ignoreMessage); diff != "" {
			t.Errorf("%s step %d at server time %d (-explicit +server clock):\n%s", name, i, ms, diff)
		}
		time.Sleep(3 * time.Millisecond)
	}
	return true
}
