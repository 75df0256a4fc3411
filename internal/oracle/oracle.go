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
	// Tier is the 1-based binding tier of bucket_window; 0 elsewhere.
	Tier int64
}

// ErrBadInput is matched by every refusal of a call's input.
var ErrBadInput = errors.New("bad input")

// ErrWrongType is the refusal of a call one of whose state keys holds
// another Redis type. The oracle holds no Redis types: a caller that
// plants one reports the refusal with this error, unless the call's
// input is refused, which is checked before any key is read.
var ErrWrongType = errors.New("a state key holds another Redis type")

// The error classes of docs/semantics.md, "Errors": the first word of a
// script's error reply, and what a vector expects of a refused step.
const (
	ClassBadInput  = "BADINPUT"
	ClassWrongType = "WRONGTYPE"
	ClassBadState  = "BADSTATE"
	// ClassNoHold is the refusal of a commit, release or renew of an id
	// that holds nothing live (ErrNoHold).
	ClassNoHold = "NOHOLD"
)

// Class is the class of an error of the oracle: ClassBadInput for one
// matching ErrBadInput, ClassWrongType for one matching ErrWrongType, ""
// for nil. The oracle never reads a stored state it did not write, so it
// gives no ClassBadState.
func Class(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrWrongType):
		return ClassWrongType
	case errors.Is(err, ErrNoHold):
		return ClassNoHold
	case errors.Is(err, ErrBadInput):
		return ClassBadInput
	}
	panic(fmt.Sprintf("oracle: an error of no class: %v", err))
}

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadInput, fmt.Sprintf(format, args...))
}

// Model decides requests for many keys of one limiter. inputs are the
// request's string inputs by name: those the algorithm takes (meta_window's
// meta, which it records) are checked and read, "" when left out; the
// others are ignored.
type Model interface {
	Decide(key string, nowMs, cost int64, inputs map[string]string) (Result, error)
	// Force decides as Decide and reports that decision, but charges the
	// cost even when the decision denies, up to the bound of
	// docs/semantics.md, "Force": the state then holds at most twice the
	// limit's worth, and the result describes the state after the charge.
	// Its input is checked as Decide's, with the same messages.
	Force(key string, nowMs, cost int64, inputs map[string]string) (Result, error)
	// Check refuses a request as Decide does, deciding nothing.
	Check(key string, nowMs, cost int64, inputs map[string]string) error
}

// Entry is one admitted request recorded by meta_window.
type Entry struct {
	TMs, Cost int64
	Meta      string
}

// Row is the entry as the entries view returns it: its fields in order.
func (e Entry) Row() []any { return []any{e.TMs, e.Cost, e.Meta} }

// EntryLister is implemented by the models that record entries
// (meta_window): Entries reads a key's entries back at nowMs.
type EntryLister interface {
	Entries(key string, nowMs int64) ([]Entry, error)
}

// The input domains of docs/semantics.md.
const (
	nowMax   = 1 << 45
	costMax  = 1<<53 - 1
	inputMax = 256 // bytes, of each string input
)

// The time bounds of docs/semantics.md, "State and time".
const (
	// MaxSkewMs is how far a key's last admission may be ahead of a
	// request's now and still be trusted; further ahead, the key is
	// decided as if it had no state.
	MaxSkewMs = 60000
	// TTLMarginMs is kept past a key's reset time in its TTL.
	TTLMarginMs = 60000
)

type paramSpec struct {
	name   string
	lo, hi int64
	// optional parameters may be missing: they are 0 then.
	optional bool
	// amount: the parameter is an amount (a limit, a burst, a capacity),
	// which the state is not measured in: limits that differ only in
	// amounts share their state (docs/semantics.md, "Keys").
	amount bool
}

type algorithm struct {
	params []paramSpec
	// joint checks the joint bound; it returns the refusal or nil.
	joint func(p map[string]int64) error
	make  func(p map[string]int64) decider
	// inputs name the string inputs the algorithm takes.
	inputs []string
	// horizon is the longest reset_after_ms a caller whose clock is not
	// behind the key's can be told: how long state can matter.
	horizon func(p map[string]int64) int64
	// inFlight: the algorithm keeps no state, and counts only the holds
	// of a holding policy; decided alone, or in a policy without holds,
	// it is refused (docs/semantics.md, "Holds").
	inFlight bool
}

// windowMs is the horizon of the algorithms whose state matters for one
// window_ms.
func windowMs(p map[string]int64) int64 { return p["window_ms"] }

// debtMs is the horizon of a bucket of count units refilled (or drained)
// at tokens per per ms: twice the time to go from empty to full, since a
// forced call can leave it one count in debt. It is the longest
// reset_after_ms a caller on time can be told, ceil(2·count·per/tokens).
func debtMs(count, per, tokens string) func(p map[string]int64) int64 {
	return func(p map[string]int64) int64 {
		return ceilRat(new(big.Rat).Mul(rat(2*p[count]), ratFrac(p[per], p[tokens])))
	}
}

// bucketJoint is the joint domain of a bucket of count that per ms move
// tokens of: count times per at most 1e15, and what (the time to move
// count) within the horizon.
func bucketJoint(count, per, tokens, what string) func(p map[string]int64) error {
	return func(p map[string]int64) error {
		if err := productAtMost(p[count], p[per], 1e15, count+" times "+per); err != nil {
			return err
		}
		return horizon(p[count], p[per], p[tokens], what)
	}
}

// decider decides one valid request for one key's state (nil if none).
// It returns the result and the state to keep, or nil when the request
// writes nothing: it writes when it is admitted with cost > 0, or when it
// is forced (force) and charges more than 0 although denied. A decider
// never modifies the state it is given.
type decider interface {
	decide(st any, now, cost int64, inputs map[string]string, force bool) (Result, any)
}

// charged is the cost a request applies to its key's state: all of it
// when admitted; when denied, nothing, or, when forced, as much as room
// allows (how far the state is from holding twice the limit's worth).
func charged(allowed, force bool, cost, room int64) int64 {
	switch {
	case allowed:
		return cost
	case force:
		return max(0, min(cost, room))
	}
	return 0
}

func noJoint(map[string]int64) error { return nil }

var algorithms = map[string]algorithm{
	"fixed_window": perWindow(1e12, func(limit, window int64) decider { return fixedWindow{limit: limit, window: window} }),
	"sliding_log":  perWindow(1e5, func(limit, window int64) decider { return slidingLog{limit: limit, window: window} }),
	"bucket_window": {
		horizon: func(p map[string]int64) int64 { return max(p["window_ms"], p["window_ms_2"], p["window_ms_3"]) },
		params: []paramSpec{
			{name: "limit", lo: 1, hi: 5e11, amount: true},
			{name: "window_ms", lo: 1, hi: 1e11},
			{name: "bucket_ms", lo: 1, hi: 1e11},
			{name: "limit_2", lo: 0, hi: 5e11, optional: true, amount: true},
			{name: "window_ms_2", lo: 0, hi: 1e11, optional: true},
			{name: "limit_3", lo: 0, hi: 5e11, optional: true, amount: true},
			{name: "window_ms_3", lo: 0, hi: 1e11, optional: true},
		},
		joint: bucketWindowJoint,
		make:  newBucketWindow,
	},
	"meta_window": perWindow(1e5, func(limit, window int64) decider { return metaWindow{limit: limit, window: window} }).
		but(func(a *algorithm) { a.inputs = []string{"meta"} }),
	"sliding_window": perWindow(1e12, func(limit, window int64) decider { return slidingWindow{limit: limit, window: window} }).
		but(func(a *algorithm) {
			a.horizon = func(p map[string]int64) int64 { return 2 * p["window_ms"] } // the current window and the next
			a.joint = func(p map[string]int64) error {
				return productAtMost(p["limit"], p["window_ms"], 1e15, "limit times window_ms")
			}
		}),
	"token_bucket": refilled("capacity", "refill_tokens", "refill_ms", "the time to refill from empty",
		func(capacity, tokens, per int64) decider {
			return tokenBucket{capacity: capacity, tokens: tokens, per: per}
		}),
	"leaky_bucket": refilled("capacity", "rate", "period_ms", "the time to drain a full queue",
		func(capacity, rate, period int64) decider {
			return leakyBucket{capacity: capacity, rate: rate, period: period}
		}),
	"gcra": refilled("burst", "rate", "period_ms", "the time to drain a full burst",
		func(burst, rate, period int64) decider { return gcra{burst: burst, rate: rate, period: period} }),
	"concurrency": {
		horizon:  func(map[string]int64) int64 { return 0 },
		params:   []paramSpec{{name: "limit", lo: 1, hi: 1e12, amount: true}},
		joint:    noJoint,
		make:     func(p map[string]int64) decider { return concurrency{limit: p["limit"]} },
		inFlight: true,
	},
}

// perWindow is an algorithm of a limit in [1, hi] per window_ms, whose
// state matters for one window.
func perWindow(hi int64, make func(limit, window int64) decider) algorithm {
	return algorithm{
		horizon: windowMs,
		params:  []paramSpec{{name: "limit", lo: 1, hi: hi, amount: true}, {name: "window_ms", lo: 1, hi: 1e11}},
		joint:   noJoint,
		make:    func(p map[string]int64) decider { return make(p["limit"], p["window_ms"]) },
	}
}

// refilled is an algorithm of a bucket of count, refilled (or drained)
// by tokens per per ms; what names the time to move count in its
// refusals.
func refilled(count, tokens, per, what string, make func(count, tokens, per int64) decider) algorithm {
	return algorithm{
		horizon: debtMs(count, per, tokens),
		params:  []paramSpec{{name: count, lo: 1, hi: 1e12, amount: true}, {name: tokens, lo: 1, hi: 1e12}, {name: per, lo: 1, hi: 1e11}},
		joint:   bucketJoint(count, per, tokens, what),
		make:    func(p map[string]int64) decider { return make(p[count], p[tokens], p[per]) },
	}
}

// but is a with change made.
func (a algorithm) but(change func(*algorithm)) algorithm {
	change(&a)
	return a
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

// InFlight reports whether the named algorithm is in flight: it keeps
// no state, counts only the holds of a holding policy, and is refused
// decided alone or in a policy without holds.
func InFlight(name string) bool { return algorithms[name].inFlight }

// Algorithms lists the algorithms the oracle models, sorted.
func Algorithms() []string {
	var out []string
	for n := range algorithms {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// MaxTTL is the longest TTL any key of the named limiter may carry, in
// ms, whatever the times of the calls: its horizon (the longest
// reset_after_ms of a caller on time) plus MaxSkewMs plus TTLMarginMs.
// ok is false for an unknown algorithm; the parameters must be accepted
// by New.
func MaxTTL(name string, params map[string]int64) (ms int64, ok bool) {
	a, ok := algorithms[name]
	if !ok {
		return 0, false
	}
	return a.horizon(params) + MaxSkewMs + TTLMarginMs, true
}

// Params lists an algorithm's parameter names, in their declared order,
// with their domains.
func Params(algorithm string) (names []string, lo, hi []int64) {
	for _, p := range algorithms[algorithm].params {
		names = append(names, p.name)
		lo = append(lo, p.lo)
		hi = append(hi, p.hi)
	}
	return names, lo, hi
}

// Optional reports whether an algorithm's parameter may be missing (it is
// 0 then).
func Optional(algorithm, param string) bool {
	for _, p := range algorithms[algorithm].params {
		if p.name == param {
			return p.optional
		}
	}
	return false
}

// Amount reports whether an algorithm's parameter is an amount (a limit,
// a burst, a capacity): a parameter the state is not measured in, which
// may change between calls on the same state (see Store).
func Amount(algorithm, param string) bool {
	for _, p := range algorithms[algorithm].params {
		if p.name == param {
			return p.amount
		}
	}
	return false
}

// New returns the model of the named algorithm, or an error matching
// ErrBadInput for an unknown algorithm or refused parameters.
func New(name string, params map[string]int64) (Model, error) {
	return NewStore().Limit(name, params)
}

// Store holds the state of every limit decided through it, as Redis
// holds it under docs/semantics.md, "Keys": the limits of one algorithm
// whose parameters differ only in amounts (Amount) share each key's
// state, and any other difference keeps them apart. A state is read
// clamped into the domains of the limit that reads it, as every stored
// field is.
type Store struct {
	states map[string]*model // by algorithm and the parameters states are measured in
}

// NewStore returns a store holding no state.
func NewStore() *Store { return &Store{states: map[string]*model{}} }

// Limit returns the model of the named algorithm under params, deciding
// on the store's state, or an error matching ErrBadInput for an unknown
// algorithm or refused parameters.
func (s *Store) Limit(name string, params map[string]int64) (Model, error) {
	a, full, err := accept(name, params)
	if err != nil {
		return nil, err
	}
	id := name
	for _, p := range a.params {
		if !p.amount {
			id += fmt.Sprintf(":%d", full[p.name])
		}
	}
	shared, ok := s.states[id]
	if !ok {
		shared = &model{states: map[string]any{}, clocks: map[string]int64{}}
		s.states[id] = shared
	}
	m := &model{d: a.make(full), name: name, inFlight: a.inFlight, inputs: a.inputs, states: shared.states, clocks: shared.clocks}
	if a.inputs != nil {
		return entryModel{m}, nil
	}
	return m, nil
}

// accept checks params against the named algorithm's domains and joint
// bounds, and returns them with every optional parameter set.
func accept(name string, params map[string]int64) (algorithm, map[string]int64, error) {
	a, ok := algorithms[name]
	if !ok {
		return a, nil, bad("unknown algorithm %q", name)
	}
	for k := range params {
		known := false
		for _, p := range a.params {
			known = known || p.name == k
		}
		if !known {
			return a, nil, bad("unknown parameter %q", k)
		}
	}
	full := map[string]int64{}
	for _, p := range a.params {
		v, ok := params[p.name]
		if !ok && !p.optional {
			return a, nil, bad("missing parameter %s", p.name)
		}
		if v < p.lo || v > p.hi {
			return a, nil, bad("parameter %s out of [%d, %d]: %d", p.name, p.lo, p.hi, v)
		}
		full[p.name] = v
	}
	return a, full, a.joint(full)
}

type model struct {
	d        decider
	name     string
	inFlight bool             // refused alone (algorithm.inFlight)
	inputs   []string         // the string inputs, whose lengths are checked
	states   map[string]any   // nil: no state
	clocks   map[string]int64 // the time of each key's last admission
}

// trusted is the key's state for a request at now: none when its last
// admission is more than MaxSkewMs ahead of now, since one wrong clock
// must not hold the key.
func (m *model) trusted(key string, now int64) any {
	if m.clocks[key] > now+MaxSkewMs {
		return nil
	}
	return m.states[key]
}

func checkKeyNow(key string, now int64) error {
	switch {
	case key == "":
		return bad("empty key")
	case key[0] == '}':
		return bad("key begins with '}': its hash tag would be empty")
	case now < 0 || now > nowMax:
		return bad("now_ms out of range: %d", now)
	}
	return nil
}

// Decide decides a request of cost at now for key, and keeps the state
// an admission with cost > 0 leaves.
func (m *model) Decide(key string, now, cost int64, inputs map[string]string) (Result, error) {
	if err := m.alone(); err != nil {
		return Result{}, err
	}
	return m.call(key, now, cost, inputs, false)
}

// alone refuses a decision of an in-flight limit by itself: its quota
// counts the holds of a holding policy, and its decision writes nothing.
func (m *model) alone() error {
	if m.inFlight {
		return bad("%s: decided alone, or in a policy without holds, an in-flight limit would admit every request", m.name)
	}
	return nil
}

// Force decides a request as Decide does, but charges it even when the
// decision denies (docs/semantics.md, "Force").
func (m *model) Force(key string, now, cost int64, inputs map[string]string) (Result, error) {
	if err := m.alone(); err != nil {
		return Result{}, err
	}
	return m.call(key, now, cost, inputs, true)
}

// call checks a request, decides it (forced or not) and keeps the state it
// writes, if any. Whatever is written sets the key's clock as an
// admission does; a state untrusted under MaxSkewMs is replaced whole.
func (m *model) call(key string, now, cost int64, inputs map[string]string, force bool) (Result, error) {
	if err := m.check(key, now, cost, inputs); err != nil {
		return Result{}, err
	}
	st := m.trusted(key, now)
	r, next := m.d.decide(st, now, cost, inputs, force)
	if next != nil {
		m.states[key] = next
		if st == nil {
			m.clocks[key] = now
		} else {
			m.clocks[key] = max(now, m.clocks[key])
		}
	}
	return r, nil
}

// check refuses a request's input in the order of docs/semantics.md: the
// key, now, cost, the string inputs in order.
func (m *model) check(key string, now, cost int64, inputs map[string]string) error {
	if err := checkKeyNow(key, now); err != nil {
		return err
	}
	if cost < 0 || cost > costMax {
		return bad("cost out of range: %d", cost)
	}
	for _, name := range m.inputs {
		if n := len(inputs[name]); n > inputMax {
			return bad("%s longer than %d bytes: %d", name, inputMax, n)
		}
	}
	return nil
}

// Resetter is implemented by every Model: Reset deletes a key's state, so
// that the next request is decided as on a fresh key.
type Resetter interface {
	Reset(key string) error
}

// Reset deletes the key's state; an empty key, or one beginning with '}',
// is refused.
func (m *model) Reset(key string) error {
	if err := checkKeyNow(key, 0); err != nil {
		return err
	}
	delete(m.states, key)
	delete(m.clocks, key)
	return nil
}

// entryModel is a model whose decider records entries (meta_window).
type entryModel struct{ *model }

// Entries returns the entries of the key's window if it is open at
// eff = max(nowMs, the key's last admission), oldest first; otherwise an
// empty, non-nil slice.
func (m entryModel) Entries(key string, now int64) ([]Entry, error) {
	if err := checkKeyNow(key, now); err != nil {
		return nil, err
	}
	return m.d.(metaWindow).entries(m.trusted(key, now), now), nil
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
