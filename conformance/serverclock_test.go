package conformance

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// clockVectors picks, per algorithm and per policy, its first vector that
// package goimpl accepts, and the request of its first step.
func clockVectors(t *testing.T) map[string]Request {
	t.Helper()
	vectors, err := Load("../vectors")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Request{}
	for _, v := range vectors {
		name := v.Algorithm
		if v.Policy != nil {
			name = v.Policy.Name
		}
		m := NewGoimplTarget()
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
		ref := NewGoimplTarget()
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
// now_ms runs in one MULTI between two TIME commands, so the script read
// a ms between theirs. Its decision must be package goimpl's at one of
// those ms, after one of the histories the earlier replies allow: the
// test keeps every history (each step's request at each ms it may have
// been decided at) that gives every reply so far, and fails when none
// is left. A loaded machine makes a call straddle ms boundaries; it then
// leaves more histories, never a false failure.
func TestServerClockOnRedis(t *testing.T) {
	real, err := NewRedisTarget(redistest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	ctx := context.Background()
	for name, r := range clockVectors(t) {
		if err := real.Begin(&Vector{Algorithm: r.Algorithm, Params: r.Params, Policy: r.Policy}); err != nil {
			t.Fatal(err)
		}
		c, _ := prepareCall(real.prefix, r, decideCall, "")
		if err := real.scripts[c.function()].Load(ctx, real.rdb).Err(); err != nil {
			t.Fatal(err)
		}
		serverClockSequence(t, real, name, r)
	}
}

// serverClockSequence runs serverClockSteps on r's key, checking each
// reply against package goimpl's decisions after the histories still
// possible (see TestServerClockOnRedis).
func serverClockSequence(t *testing.T, real *RedisTarget, name string, r Request) {
	histories := [][]Request{nil}
	for i, cost := range serverClockSteps {
		step := at(r, 0, json.Number(cost))
		got, from, to := decideBetweenTimes(t, real, step)
		var left [][]Request
		var diff string
		for _, h := range histories {
			for ms := from; ms <= to; ms++ {
				next := append(slices.Clone(h), at(r, ms, json.Number(cost)))
				d := cmp.Diff(replay(t, r, next), got, ignoreMessage)
				if d == "" {
					left = append(left, next)
				} else if diff == "" {
					diff = d
				}
			}
		}
		if len(left) == 0 {
			t.Errorf("%s step %d at server time %d to %d, no history gives the reply (-explicit +server clock):\n%s", name, i, from, to, diff)
			return
		}
		histories = left
		time.Sleep(3 * time.Millisecond)
	}
}

// decideBetweenTimes runs r with an empty now_ms in one MULTI between two
// TIMEs: its outcome, and the ms of the TIMEs.
func decideBetweenTimes(t *testing.T, real *RedisTarget, r Request) (Outcome, int64, int64) {
	ctx := context.Background()
	c, _ := prepareCall(real.prefix, r, decideCall, "")
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
	res, err := eval.Result()
	return decisionOutcome(c, res, err), before.Val().UnixMilli(), after.Val().UnixMilli()
}

// replay decides the requests in turn on a fresh package goimpl and
// returns the last outcome.
func replay(t *testing.T, r Request, requests []Request) Outcome {
	ref := NewGoimplTarget()
	if err := ref.Begin(&Vector{Algorithm: r.Algorithm, Params: r.Params, Policy: r.Policy}); err != nil {
		t.Fatal(err)
	}
	var o Outcome
	for _, q := range requests {
		o = ref.Decide(q)
	}
	return o
}
