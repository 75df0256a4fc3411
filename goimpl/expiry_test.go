package goimpl

import (
	"maps"
	"testing"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/oracle"
)

// TestChangedAmountsDecideAsExpired: no decision depends on whether a key
// expired, after any change of amount. For every algorithm and each of
// its amounts, raised (doubled, and a thousandfold: more than a kept
// bucket refills over a TTL's margin) and lowered (halved), a key is decided
// under the first limit (admissions up to and past the limit, then a
// forced call, so that the state holds more than the limit), and read
// under the changed one once every TTL the first could have given it
// (oracle.MaxTTL) has run out: package goimpl has dropped the key at
// its TTL, the oracle keeps every state for good, and the two must
// decide alike, then and on the calls after.
func TestChangedAmountsDecideAsExpired(t *testing.T) {
	for _, alg := range algorithms {
		names, lo, _ := oracle.Params(alg)
		for i, name := range names {
			base := smallParams[alg]
			if !oracle.Amount(alg, name) || base[name] == 0 {
				continue
			}
			for _, way := range []struct {
				name  string
				value int64
			}{{"doubled", base[name] * 2}, {"raised a thousandfold", base[name] * 1000}, {"halved", max(lo[i], base[name]/2)}} {
				changed := maps.Clone(base)
				changed[name] = way.value
				t.Run(alg+"/"+name+"/"+way.name, func(t *testing.T) { expiredAlike(t, alg, base, changed) })
			}
		}
	}
}

// expiredAlike decides one key under first, then under then after first's
// longest TTL, on package goimpl and on an oracle store, and fails on a
// decision in which they differ.
func expiredAlike(t *testing.T, alg string, first, then map[string]int64) {
	store := oracle.NewStore()
	l := newLimiter(t, Options{NoSweeper: true})
	var inputs map[string]string
	if alg == "meta_window" {
		inputs = map[string]string{"meta": "m"}
	}
	now := int64(t0)
	step := func(params map[string]int64, cost int64, force bool) {
		t.Helper()
		m, err := store.Limit(alg, params)
		if err != nil {
			t.Fatalf("oracle %v: %v", params, err)
		}
		decideOn := m.Decide
		if force {
			decideOn = m.Force
		}
		want, err := decideOn("k", now, cost, inputs)
		if err != nil {
			t.Fatalf("oracle %v: %v", params, err)
		}
		res := decide(t, l, limitspec.Request{Key: "k", Limit: limitOf(alg, params), Cost: cost, Peek: cost == 0, Force: force, Now: at(now), Inputs: inputs})
		if got := bare(only(t, res)); got != fromOracle(want) {
			t.Errorf("%v at +%d ms, cost %d, force %v:\n memory %+v\n oracle %+v", params, now-t0, cost, force, got, fromOracle(want))
		}
	}
	for range first["limit"] + first["burst"] + first["capacity"] + 1 {
		step(first, 1, false)
		now++
	}
	step(first, 2, true)
	ttl, _ := oracle.MaxTTL(alg, first)
	now += ttl + 1
	for range 4 {
		step(then, 0, false)
		step(then, 1, false)
		now++
	}
}
