package oracle

import (
	"maps"
	"math/big"
)

// Each model below decides one valid request from the key's state (nil if
// the key has none) and returns the result and the state to keep, nil when
// the request writes nothing (see decider). A request is decided at
// eff = max(now, time of the key's last admission), and durations count
// from the caller's now.
//
// A forced request (force) that is denied is charged anyway, up to the
// bound of docs/semantics.md, "Force": the state then holds at most twice
// the limit's worth, and the result describes the state after the charge.
// So the state may be past the limit: remaining is at least 0, and every
// wait is found from the state after the charge.
//
// A state may have been written under other amounts (a limit raised or
// lowered between calls: Store). Each model reads its counts clamped into
// its own bounds, the most a forced call can leave: no more than twice
// the limit's worth, and a bucket no fuller than its capacity. A log of
// entries (sliding_log) is not clamped: every entry counts until it
// leaves the window (docs/semantics.md, "Keys").

// fixedWindow: at most limit in each window floor(t / window).
type fixedWindow struct{ limit, window int64 }

type fixedWindowState struct {
	last int64 // time of the last admission
	used int64 // cost admitted in the window of last
}

func (m fixedWindow) decide(st any, now, cost int64, _ map[string]string, force bool) (Result, any) {
	eff, used := now, int64(0)
	if s, ok := st.(fixedWindowState); ok {
		eff = max(now, s.last)
		if s.last/m.window == eff/m.window {
			used = min(s.used, 2*m.limit)
		}
	}
	end := (eff/m.window + 1) * m.window // the first ms of the next window
	allowed := used+cost <= m.limit
	add := charged(allowed, force, cost, 2*m.limit-used)
	after := used + add
	r := Result{Allowed: allowed, Limit: m.limit, Remaining: max(0, m.limit-after), RetryAfterMs: -1}
	if !allowed && cost <= m.limit {
		r.RetryAfterMs = end - now // the next window starts empty
	}
	if after > 0 {
		r.ResetAfterMs = end - now
	}
	if add == 0 {
		return r, nil
	}
	return r, fixedWindowState{last: eff, used: after}
}

// tokenBucket: starts full, gains tokens/per per ms up to capacity. Its
// state is the tokens taken and not yet refilled, so that a capacity
// changed between calls reads it as taken from the new capacity: a key
// kept until it has refilled and a key gone decide alike.
type tokenBucket struct{ capacity, tokens, per int64 }

type bucketState struct {
	last  int64
	taken *big.Rat // tokens taken and not refilled at last
}

// takenAt is the tokens taken and not yet refilled at eff: at most twice
// the capacity (what a forced call can leave), less what refilled since.
func (m tokenBucket) takenAt(st any, now int64) (eff int64, taken *big.Rat) {
	s, ok := st.(bucketState)
	if !ok {
		return now, rat(0)
	}
	eff = max(now, s.last)
	refilled := new(big.Rat).Mul(rat(eff-s.last), ratFrac(m.tokens, m.per))
	taken = new(big.Rat).Sub(clampRat(s.taken, 0, 2*m.capacity), refilled)
	if taken.Sign() < 0 {
		taken = rat(0)
	}
	return eff, taken
}

// clampRat is x clamped into [lo, hi].
func clampRat(x *big.Rat, lo, hi int64) *big.Rat {
	switch {
	case x.Cmp(rat(lo)) < 0:
		return rat(lo)
	case x.Cmp(rat(hi)) > 0:
		return rat(hi)
	}
	return x
}

// msUntil is the ms, rounded up, for the bucket to gain the given tokens.
func (m tokenBucket) msUntil(tokens *big.Rat) int64 {
	return ceilRat(new(big.Rat).Quo(tokens, ratFrac(m.tokens, m.per)))
}

func (m tokenBucket) decide(st any, now, cost int64, _ map[string]string, force bool) (Result, any) {
	eff, taken := m.takenAt(st, now)
	lag := eff - now
	level := new(big.Rat).Sub(rat(m.capacity), taken) // below 0 after forced calls
	allowed := level.Cmp(rat(cost)) >= 0
	after := new(big.Rat).Set(taken)
	switch {
	case allowed:
		after.Add(after, rat(cost))
	case force: // up to twice the capacity taken at most
		after.Add(after, rat(cost))
		if ceiling := rat(2 * m.capacity); after.Cmp(ceiling) > 0 {
			after = ceiling
		}
	}
	left := new(big.Rat).Sub(rat(m.capacity), after)
	r := Result{
		Allowed:      allowed,
		Limit:        m.capacity,
		Remaining:    max(0, floorRat(left)),
		RetryAfterMs: -1,
		ResetAfterMs: lag + m.msUntil(after),
	}
	if !allowed && cost <= m.capacity {
		r.RetryAfterMs = lag + m.msUntil(new(big.Rat).Sub(rat(cost), left))
	}
	if after.Cmp(taken) == 0 {
		return r, nil
	}
	return r, bucketState{last: eff, taken: after}
}

// gcra: the generic cell rate algorithm with emission interval
// T = period/rate and tolerance tau = burst*T, kept as its theoretical
// arrival time (TAT).
type gcra struct{ burst, rate, period int64 }

type gcraState struct {
	last int64
	tat  *big.Rat // theoretical arrival time, in ms
}

// tau is the tolerance, burst·T.
func (m gcra) tau() *big.Rat { return new(big.Rat).Mul(rat(m.burst), ratFrac(m.period, m.rate)) }

// read is the time a request is decided at and the TAT then, at least
// eff: a fresh key's is eff, a state's at most 2·tau after its last
// admission (the most a forced call leaves).
func (m gcra) read(st any, now int64) (eff int64, tat *big.Rat) {
	s, ok := st.(gcraState)
	if !ok {
		return now, rat(now)
	}
	eff = max(now, s.last)
	most := new(big.Rat).Add(rat(s.last), new(big.Rat).Mul(rat(2), m.tau()))
	tat = s.tat
	if tat.Cmp(most) > 0 {
		tat = most
	}
	if tat.Cmp(rat(eff)) < 0 {
		tat = rat(eff)
	}
	return eff, tat
}

func (m gcra) decide(st any, now, cost int64, _ map[string]string, force bool) (Result, any) {
	T := ratFrac(m.period, m.rate)
	tau := m.tau()
	eff, tat := m.read(st, now)
	lag := eff - now
	// The request conforms iff its new TAT minus the tolerance is not
	// after eff.
	newTAT := new(big.Rat).Add(tat, new(big.Rat).Mul(rat(cost), T))
	allowAt := new(big.Rat).Sub(newTAT, tau)
	allowed := allowAt.Cmp(rat(eff)) <= 0
	final := tat
	switch {
	case allowed:
		final = newTAT
	case force: // at most 2·tau ahead of eff: one burst in debt
		final = newTAT
		if most := new(big.Rat).Add(rat(eff), new(big.Rat).Mul(rat(2), tau)); final.Cmp(most) > 0 {
			final = most
		}
	}
	// Remaining: how many more cells fit at eff: floor((tau - (final - eff)) / T).
	ahead := new(big.Rat).Sub(final, rat(eff))
	room := new(big.Rat).Quo(new(big.Rat).Sub(tau, ahead), T)
	r := Result{
		Allowed:      allowed,
		Limit:        m.burst,
		Remaining:    max(0, floorRat(room)),
		RetryAfterMs: -1,
		ResetAfterMs: lag + ceilRat(ahead), // until TAT: the bucket is empty again
	}
	if !allowed && cost <= m.burst {
		// From the state after the charge: the same request conforms once
		// final + cost·T - tau is not after the time.
		again := new(big.Rat).Sub(new(big.Rat).Add(final, new(big.Rat).Mul(rat(cost), T)), tau)
		r.RetryAfterMs = lag + ceilRat(new(big.Rat).Sub(again, rat(eff)))
	}
	if final.Cmp(tat) == 0 {
		return r, nil
	}
	return r, gcraState{last: eff, tat: final}
}

// leakyBucket: a queue drained at one unit per T = period/rate; it admits
// as gcra with burst = capacity, and an admitted request waits until the
// work queued ahead of it has drained. So does a forced one (cost > 0)
// that is denied: its work is queued too.
type leakyBucket struct{ capacity, rate, period int64 }

func (m leakyBucket) decide(st any, now, cost int64, _ map[string]string, force bool) (Result, any) {
	g := gcra{burst: m.capacity, rate: m.rate, period: m.period}
	r, next := g.decide(st, now, cost, nil, force)
	if r.Allowed || (force && cost > 0) {
		// The queue ahead: the TAT before this request, past eff.
		eff, tat := g.read(st, now)
		r.DelayMs = eff - now + ceilRat(new(big.Rat).Sub(tat, rat(eff)))
	}
	return r, next
}

// slidingWindow: the previous fixed window weighted by the part of it the
// sliding window still covers. Its retry and reset times are found by
// searching time, not by formula: the condition only loosens as time
// passes.
type slidingWindow struct{ limit, window int64 }

type slidingState struct {
	last   int64
	counts map[int64]int64 // cost admitted per window number
}

// load is prev*(W-e) + curr*W at time t: the weighted count, times W.
func (m slidingWindow) load(s slidingState, t int64) (prev, curr, weighted int64) {
	w, e := t/m.window, t%m.window
	prev, curr = s.counts[w-1], s.counts[w]
	return prev, curr, prev*(m.window-e) + curr*m.window
}

// firstTime is the smallest t in [from, from+3W] with ok(t), which must
// hold at from+3W.
func (m slidingWindow) firstTime(from int64, ok func(t int64) bool) int64 {
	lo, hi := from, from+3*m.window
	for lo < hi {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// fits reports whether a request of cost c is allowed at t on state s.
// A cost above the limit never is (checked first: c·W could overflow).
func (m slidingWindow) fits(s slidingState, t, c int64) bool {
	_, _, load := m.load(s, t)
	return c <= m.limit && load+c*m.window <= m.limit*m.window
}

func (m slidingWindow) decide(st any, now, cost int64, _ map[string]string, force bool) (Result, any) {
	stored, ok := st.(slidingState)
	eff := now
	if ok {
		eff = max(now, stored.last)
	}
	// The windows that still count at eff, each at most 2·limit.
	s := slidingState{last: eff, counts: map[int64]int64{}}
	for w, c := range stored.counts {
		if w >= eff/m.window-1 {
			s.counts[w] = min(c, 2*m.limit)
		}
	}
	allowed := m.fits(s, eff, cost)
	next := slidingState{last: eff, counts: maps.Clone(s.counts)}
	// The current window's count holds at most 2·limit.
	add := charged(allowed, force, cost, 2*m.limit-next.counts[eff/m.window])
	if add > 0 {
		next.counts[eff/m.window] += add
	}
	_, _, load := m.load(next, eff)
	r := Result{Allowed: allowed, Limit: m.limit, RetryAfterMs: -1,
		Remaining: max(0, (m.limit*m.window-load)/m.window)}
	if !allowed && cost <= m.limit {
		r.RetryAfterMs = m.firstTime(eff, func(t int64) bool { return m.fits(next, t, cost) }) - now
	}
	// Every time before eff is decided at eff: if nothing weighs at eff,
	// remaining is the limit already now.
	if resetAt := m.firstTime(eff, func(t int64) bool { _, _, l := m.load(next, t); return l == 0 }); resetAt > eff {
		r.ResetAfterMs = resetAt - now
	}
	if add == 0 {
		return r, nil
	}
	return r, next
}

// concurrency: at most limit held at once. It keeps no state: alone it
// admits any cost up to limit and charges nothing; what is in flight is
// the holds of its key (holds.go), which count toward admission as any
// limit's do.
type concurrency struct{ limit int64 }

func (m concurrency) decide(_ any, _, cost int64, _ map[string]string, _ bool) (Result, any) {
	r := Result{Allowed: cost <= m.limit, Limit: m.limit, Remaining: m.limit, RetryAfterMs: -1}
	if r.Allowed {
		r.Remaining = m.limit - cost
	}
	return r, nil
}
