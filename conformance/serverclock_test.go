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

// clockVectors picks, per algorithm, the parameters of its first vector
// that goimpl accepts.
func clockVectors(t *testing.T) map[string]map[string]json.Number {
	t.Helper()
	vectors, err := Load("../vectors")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]json.Number{}
	for _, v := range vectors {
		if _, done := out[v.Algorithm]; done || NewGoTarget().Begin(v.Algorithm, v.Params) != nil {
			continue
		}
		out[v.Algorithm] = v.Params
	}
	return out
}

// serverClockSteps are the costs of the requests each algorithm gets, one
// key, a few ms apart: admissions, a peek, a cost past most limits.
var serverClockSteps = []string{"1", "1", "0", "1", "1000000", "1"}

// decideAtServerTime runs one step of t's script with an empty now_ms,
// so that the script reads the server's TIME.
func decideAtServerTime(t *RedisTarget, key string, cost json.Number) Outcome {
	keys, argv := t.c.args(t.prefix, key, 0, cost, "")
	argv[0] = ""
	return decisionOutcome(t.eval(t.c.script.Name, keys, argv))
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
	for alg, params := range clockVectors(t) {
		ref := NewGoTarget()
		if err := mini.Begin(alg, params); err != nil {
			t.Fatal(err)
		}
		if err := ref.Begin(alg, params); err != nil {
			t.Fatal(err)
		}
		now := int64(1700000000000)
		for i, cost := range serverClockSteps {
			now += int64(i) * 7
			mini.mini.SetTime(time.UnixMilli(now).Add(123 * time.Microsecond))
			got := decideAtServerTime(mini, "k", json.Number(cost))
			want := ref.Decide("k", now, json.Number(cost), "")
			if diff := cmp.Diff(want, got, ignoreMessage); diff != "" {
				t.Errorf("%s step %d at server time %d (-explicit +server clock):\n%s", alg, i, now, diff)
			}
		}
	}
}

// TestServerClockOnRedis: on a real Redis, each call with an empty
// now_ms runs in one MULTI between two TIME commands; when both read the
// same ms, the script read it too, and must have decided as goimpl does
// at that time. A sequence whose TIMEs straddle a ms is tried again on a
// new key.
func TestServerClockOnRedis(t *testing.T) {
	real, err := NewRedisTarget(redistest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	ctx := context.Background()
	for alg, params := range clockVectors(t) {
		if err := real.Begin(alg, params); err != nil {
			t.Fatal(err)
		}
		if err := real.scripts[real.c.script.Name].Load(ctx, real.rdb).Err(); err != nil {
			t.Fatal(err)
		}
		checked := false
		for attempt := 0; attempt < 20 && !checked; attempt++ {
			checked = serverClockSequence(t, real, alg, params, "k"+strconv.Itoa(attempt))
		}
		if !checked {
			t.Errorf("%s: every attempt straddled a ms boundary", alg)
		}
	}
}

// serverClockSequence runs serverClockSteps on key, comparing each with
// goimpl at the server's ms; it returns false, having compared only the
// steps before, when a step's TIMEs disagree.
func serverClockSequence(t *testing.T, real *RedisTarget, alg string, params map[string]json.Number, key string) bool {
	ctx := context.Background()
	ref := NewGoTarget()
	if err := ref.Begin(alg, params); err != nil {
		t.Fatal(err)
	}
	for i, cost := range serverClockSteps {
		keys, argv := real.c.args(real.prefix, key, 0, json.Number(cost), "")
		argv[0] = ""
		args := make([]any, len(argv))
		for j, a := range argv {
			args[j] = a
		}
		var before, after *redis.TimeCmd
		var eval *redis.Cmd
		_, err := real.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			before = p.Time(ctx)
			eval = p.EvalSha(ctx, real.scripts[real.c.script.Name].Hash(), keys, args...)
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
		got := decisionOutcome(eval.Result())
		want := ref.Decide(key, ms, json.Number(cost), "")
		if diff := cmp.Diff(want, got, ignoreMessage); diff != "" {
			t.Errorf("%s step %d at server time %d (-explicit +server clock):\n%s", alg, i, ms, diff)
		}
		time.Sleep(3 * time.Millisecond)
	}
	return true
}
