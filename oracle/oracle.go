// Package oracle is the reference model of every algorithm: each written
// plainly from the decision contract and docs/semantics.md, with exact
// rational arithmetic, sharing no code with the generator. The expected
// values of the conformance vectors come from here.
//
// It favours being obviously right over being fast: token levels and
// theoretical arrival times are math/big rationals, and every formula is
// the one the contract states.
package oracle

import (
	"errors"
	"fmt"
	"math/big"
	"sort"
)

// Result is one decision, with the contract's fields.
type Result struct {
	Allowed      bool
	Limit        int64
	Remaining    int64
	RetryAfterMs int64
	ResetAfterMs int64
	DelayMs      int64
}

// ErrBadInput is matched by every refusal.
var ErrBadInput = errors.New("bad input")

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadInput, fmt.Sprintf(format, args...))
}

// Model decides requests for many keys of one limiter.
type Model interface {
	Decide(key string, nowMs, cost int64) (Result, error)
}

// The input domains of docs/semantics.md.
const (
	nowMax  = 1 << 45
	costMax = 1<<53 - 1
)

type paramSpec struct {
	name   string
	lo, hi int64
}

type algorithm struct {
	params []paramSpec
	// joint checks the joint bound; it returns the refusal or nil.
	joint func(p map[string]int64) error
	make  func(p map[string]int64) decider
}

// decider decides one valid request for one key's state.
type decider interface {
	decide(st any, now, cost int64) (Result, any)
}

var algorithms = map[string]algorithm{
	"fixed_window": {
		params: []paramSpec{{"limit", 1, 1e12}, {"window_ms", 1, 1e11}},
		joint:  func(map[string]int64) error { return nil },
		make: func(p map[string]int64) decider {
			return fixedWindow{limit: p["limit"], window: p["window_ms"]}
		},
	},
	"token_bucket": {
		params: []paramSpec{{"capacity", 1, 1e12}, {"refill_tokens", 1, 1e12}, {"refill_ms", 1, 1e11}},
		joint: func(p map[string]int64) error {
			if err := productAtMost(p["capacity"], p["refill_ms"], 1e15, "capacity times refill_ms"); err != nil {
				return err
			}
			return horizon(p["capacity"], p["refill_ms"], p["refill_tokens"], "the time to refill from empty")
		},
		make: func(p map[string]int64) decider {
			return tokenBucket{capacity: p["capacity"], tokens: p["refill_tokens"], per: p["refill_ms"]}
		},
	},
	"leaky_bucket": {
		params: []paramSpec{{"capacity", 1, 1e12}, {"rate", 1, 1e12}, {"period_ms", 1, 1e11}},
		joint: func(p map[string]int64) error {
			if err := productAtMost(p["capacity"], p["period_ms"], 1e15, "capacity times period_ms"); err != nil {
				return err
			}
			return horizon(p["capacity"], p["period_ms"], p["rate"], "the time to drain a full queue")
		},
		make: func(p map[string]int64) decider {
			return leakyBucket{capacity: p["capacity"], rate: p["rate"], period: p["period_ms"]}
		},
	},
	"sliding_window": {
		params: []paramSpec{{"limit", 1, 1e12}, {"window_ms", 1, 1e11}},
		joint: func(p map[string]int64) error {
			return productAtMost(p["limit"], p["window_ms"], 1e15, "limit times window_ms")
		},
		make: func(p map[string]int64) decider {
			return slidingWindow{limit: p["limit"], window: p["window_ms"]}
		},
	},
	"gcra": {
		params: []paramSpec{{"burst", 1, 1e12}, {"rate", 1, 1e12}, {"period_ms", 1, 1e11}},
		joint: func(p map[string]int64) error {
			if err := productAtMost(p["burst"], p["period_ms"], 1e15, "burst times period_ms"); err != nil {
				return err
			}
			return horizon(p["burst"], p["period_ms"], p["rate"], "the time to drain a full burst")
		},
		make: func(p map[string]int64) decider {
			return gcra{burst: p["burst"], rate: p["rate"], period: p["period_ms"]}
		},
	},
}

func productAtMost(a, b, max int64, what string) error {
	if new(big.Int).Mul(big.NewInt(a), big.NewInt(b)).Cmp(big.NewInt(max)) > 0 {
		return bad("%s must not exceed %d", what, max)
	}
	return nil
}

// horizon refuses a limiter that would need more than 10^11 ms (about
// three years) to go from empty to full: count tokens at tokens per per ms.
func horizon(count, per, tokens int64, what string) error {
	ms := new(big.Rat).Mul(rat(count), ratFrac(per, tokens))
	if ms.Cmp(rat(1e11)) > 0 {
		return bad("%s must not exceed 10^11 ms", what)
	}
	return nil
}

// Algorithms lists the algorithms the oracle models, sorted.
func Algorithms() []string {
	var out []string
	for n := range algorithms {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Params lists an algorithm's parameter names with their domains.
func Params(algorithm string) (names []string, lo, hi []int64) {
	for _, p := range algorithms[algorithm].params {
		names = append(names, p.name)
		lo = append(lo, p.lo)
		hi = append(hi, p.hi)
	}
	return names, lo, hi
}

// New returns the model of the named algorithm, or an error matching
// ErrBadInput for an unknown algorithm or refused parameters.
func New(name string, params map[string]int64) (Model, error) {
	a, ok := algorithms[name]
	if !ok {
		return nil, bad("unknown algorithm %q", name)
	}
	for k := range params {
		known := false
		for _, p := range a.params {
			known = known || p.name == k
		}
		if !known {
			return nil, bad("unknown parameter %q", k)
		}
	}
	for _, p := range a.params {
		v, ok := params[p.name]
		if !ok {
			return nil, bad("missing parameter %s", p.name)
		}
		if v < p.lo || v > p.hi {
			return nil, bad("parameter %s out of [%d, %d]: %d", p.name, p.lo, p.hi, v)
		}
	}
	if err := a.joint(params); err != nil {
		return nil, err
	}
	return &model{d: a.make(params), states: map[string]any{}}, nil
}

type model struct {
	d      decider
	states map[string]any // nil: no state
}

func (m *model) Decide(key string, now, cost int64) (Result, error) {
	switch {
	case key == "":
		return Result{}, bad("empty key")
	case now < 0 || now > nowMax:
		return Result{}, bad("now_ms out of range: %d", now)
	case cost < 0 || cost > costMax:
		return Result{}, bad("cost out of range: %d", cost)
	}
	r, next := m.d.decide(m.states[key], now, cost)
	if r.Allowed && cost > 0 {
		m.states[key] = next
	}
	return r, nil
}

// ceilRat is the smallest integer >= x.
func ceilRat(x *big.Rat) int64 {
	q, r := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

// floorRat is the largest integer <= x.
func floorRat(x *big.Rat) int64 {
	q, r := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	if r.Sign() < 0 {
		q.Sub(q, big.NewInt(1))
	}
	return q.Int64()
}

func rat(n int64) *big.Rat { return new(big.Rat).SetInt64(n) }

func ratFrac(a, b int64) *big.Rat { return big.NewRat(a, b) }
