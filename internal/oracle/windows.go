package oracle

import "slices"

// The window models added beside those of models.go, under the same rules:
// decide gets the key's state (nil if none) and returns the result and the
// state to keep, nil when the request writes nothing; a forced request
// that is denied is charged up to twice the limit's worth.

// slidingLog: every admitted request is kept with its time t; at time τ
// the requests with t > τ - window count.
type slidingLog struct{ limit, window int64 }

type logEntry struct{ t, cost int64 }

type logState struct {
	last    int64
	entries []logEntry // oldest first
}

// used is the cost of the entries still in the window at t.
func (m slidingLog) used(entries []logEntry, t int64) int64 {
	var u int64
	for _, e := range entries {
		if e.t > t-m.window {
			u += e.cost
		}
	}
	return u
}

// firstTime is the first τ >= eff at which ok(used(τ)) holds. With no new
// admissions the used cost only drops, when an entry leaves at t + window,
// so those are the only times to try after eff.
func (m slidingLog) firstTime(entries []logEntry, eff int64, ok func(used int64) bool) int64 {
	var leaves []int64
	for _, e := range entries {
		leaves = append(leaves, e.t+m.window)
	}
	return firstLeave(eff, leaves, func(tau int64) bool { return ok(m.used(entries, tau)) })
}

// firstLeave is the first of eff and the times in leaves after it at
// which ok holds; it must hold at one of them.
func firstLeave(eff int64, leaves []int64, ok func(tau int64) bool) int64 {
	times := []int64{eff}
	for _, tau := range leaves {
		if tau > eff {
			times = append(times, tau)
		}
	}
	slices.Sort(times)
	for _, tau := range times {
		if ok(tau) {
			return tau
		}
	}
	panic("oracle: the condition never holds")
}

func (m slidingLog) decide(st any, now, cost int64, _ map[string]string, force bool) (Result, any) {
	s, ok := st.(logState)
	eff := now
	if ok {
		eff = max(now, s.last)
	}
	used := m.used(s.entries, eff)
	allowed := used+cost <= m.limit
	next := logState{last: eff}
	for _, e := range s.entries {
		if e.t > eff-m.window { // an entry that has left never counts again
			next.entries = append(next.entries, e)
		}
	}
	// Recorded with the cost charged: the window sums to 2·limit at most.
	add := charged(allowed, force, cost, 2*m.limit-used)
	if add > 0 {
		next.entries = append(next.entries, logEntry{t: eff, cost: add})
	}
	after := m.used(next.entries, eff)
	r := Result{Allowed: allowed, Limit: m.limit, Remaining: max(0, m.limit-after), RetryAfterMs: -1}
	if !allowed && cost <= m.limit {
		r.RetryAfterMs = m.firstTime(next.entries, eff, func(u int64) bool { return u+cost <= m.limit }) - now
	}
	if after > 0 {
		// Nothing counts any more once the newest entry has left.
		r.ResetAfterMs = next.entries[len(next.entries)-1].t + m.window - now
	}
	if add == 0 {
		return r, nil
	}
	return r, next
}

// bucketWindow: costs are counted per bucket of bucket ms; each tier
// counts the buckets of its window ending with the current one.
type bucketWindow struct {
	bucket int64
	tiers  []tier // the used tiers, lowest number first
}

// tier is one (limit, window) pair of bucket_window; n is its number.
type tier struct{ n, limit, window int64 }

type bucketWindowState struct {
	last   int64
	counts map[int64]int64 // cost admitted per bucket start
}

func newBucketWindow(p map[string]int64) decider {
	m := bucketWindow{bucket: p["bucket_ms"], tiers: []tier{{1, p["limit"], p["window_ms"]}}}
	if p["limit_2"] > 0 {
		m.tiers = append(m.tiers, tier{2, p["limit_2"], p["window_ms_2"]})
	}
	if p["limit_3"] > 0 {
		m.tiers = append(m.tiers, tier{3, p["limit_3"], p["window_ms_3"]})
	}
	return m
}

// bucketWindowJoint: every used window is a multiple of bucket_ms of at
// most 3600 buckets, and an optional tier is set whole or not at all.
func bucketWindowJoint(p map[string]int64) error {
	b := p["bucket_ms"]
	check := func(name string) error {
		w := p[name]
		if w%b != 0 {
			return bad("%s must be a multiple of bucket_ms: %d, %d", name, w, b)
		}
		if w/b > 3600 {
			return bad("%s / bucket_ms must not exceed 3600: %d", name, w/b)
		}
		return nil
	}
	if err := check("window_ms"); err != nil {
		return err
	}
	for _, k := range []string{"2", "3"} {
		l, w := p["limit_"+k], p["window_ms_"+k]
		if (l == 0) != (w == 0) {
			return bad("limit_%s and window_ms_%s must be both 0 or both set: %d, %d", k, k, l, w)
		}
		if w > 0 {
			if err := check("window_ms_" + k); err != nil {
				return err
			}
		}
	}
	return nil
}

// start is the start of the bucket holding t.
func (m bucketWindow) start(t int64) int64 { return t - t%m.bucket }

// used is a tier's count at t: the buckets starting in (s(t) - window, s(t)].
func (m bucketWindow) used(counts map[int64]int64, tr tier, t int64) int64 {
	s := m.start(t)
	var u int64
	for b, c := range counts {
		if b > s-tr.window && b <= s {
			u += c
		}
	}
	return u
}

// firstTime is the first τ >= eff at which ok(used(τ)) holds for the tier.
// With no new admissions a tier's count only drops, when bucket b leaves
// its window at b + window, so those are the only times to try after eff.
func (m bucketWindow) firstTime(counts map[int64]int64, tr tier, eff int64, ok func(used int64) bool) int64 {
	var leaves []int64
	for b := range counts {
		leaves = append(leaves, b+tr.window)
	}
	return firstLeave(eff, leaves, func(tau int64) bool { return ok(m.used(counts, tr, tau)) })
}

func (m bucketWindow) decide(st any, now, cost int64, _ map[string]string, force bool) (Result, any) {
	s, ok := st.(bucketWindowState)
	eff := now
	if ok {
		eff = max(now, s.last)
	}
	allowed := true
	L := m.tiers[0].limit
	longest := int64(0)
	// bound is the most every tier can take before it holds 2·limit_i
	// (negative when one holds more: a limit lowered since).
	bound := 2*m.tiers[0].limit - m.used(s.counts, m.tiers[0], eff)
	for _, tr := range m.tiers {
		u := m.used(s.counts, tr, eff)
		allowed = allowed && u+cost <= tr.limit
		L = min(L, tr.limit)
		longest = max(longest, tr.window)
		bound = min(bound, 2*tr.limit-u)
	}
	next := bucketWindowState{last: eff, counts: map[int64]int64{}}
	for b, c := range s.counts {
		if b > m.start(eff)-longest { // a bucket that has left no window counts again
			next.counts[b] = c
		}
	}
	add := charged(allowed, force, cost, bound)
	if add > 0 {
		next.counts[m.start(eff)] += add
	}

	r := Result{Allowed: allowed, Limit: L, RetryAfterMs: -1}
	// remaining: the tightest tier's room after this request.
	for i, tr := range m.tiers {
		room := tr.limit - m.used(next.counts, tr, eff)
		if i == 0 || room < r.Remaining {
			r.Remaining = room
			if allowed {
				r.Tier = tr.n
			}
		}
	}
	r.Remaining = max(0, r.Remaining)

	switch {
	case allowed:
	case cost > L:
		for _, tr := range m.tiers {
			if tr.limit < cost {
				r.Tier = tr.n
				break
			}
		}
	default:
		// Every tier too full for the request after the charge must
		// drain; the slowest one binds.
		for _, tr := range m.tiers {
			if m.used(next.counts, tr, eff)+cost <= tr.limit {
				continue
			}
			at := m.firstTime(next.counts, tr, eff, func(u int64) bool { return u+cost <= tr.limit })
			if at-now > r.RetryAfterMs {
				r.RetryAfterMs = at - now
				r.Tier = tr.n
			}
		}
	}

	// reset: every tier must drain until its room is at least L.
	for _, tr := range m.tiers {
		full := func(u int64) bool { return u <= tr.limit-L }
		if full(m.used(next.counts, tr, eff)) {
			continue
		}
		r.ResetAfterMs = max(r.ResetAfterMs, m.firstTime(next.counts, tr, eff, full)-now)
	}
	if add == 0 {
		return r, nil
	}
	return r, next
}

// metaWindow: a window opens at the first admission of an idle key and
// lasts window ms; each admission in it is recorded with the caller's meta.
type metaWindow struct{ limit, window int64 }

type metaState struct {
	start   int64 // when the current window opened
	used    int64 // cost admitted since
	last    int64 // time of the last admission
	entries []Entry
}

// open reports whether the state's window is open at eff.
func (m metaWindow) open(s metaState, eff int64) bool {
	return s.used > 0 && eff < s.start+m.window
}

func (m metaWindow) decide(st any, now, cost int64, inputs map[string]string, force bool) (Result, any) {
	s, ok := st.(metaState)
	eff := now
	if ok {
		eff = max(now, s.last)
	}
	open := m.open(s, eff)
	used := int64(0)
	if open {
		used = min(s.used, 2*m.limit)
	}
	allowed := used+cost <= m.limit
	next := metaState{start: s.start, used: used, last: eff, entries: s.entries}
	// A forced denial is recorded with the cost charged, so that the
	// entries always sum to used.
	add := charged(allowed, force, cost, 2*m.limit-used)
	if add > 0 {
		e := Entry{TMs: eff, Cost: add, Meta: inputs["meta"]}
		if open {
			next.used += add
			next.entries = append(append([]Entry(nil), s.entries...), e)
		} else {
			next = metaState{start: eff, used: add, last: eff, entries: []Entry{e}}
		}
	}
	r := Result{Allowed: allowed, Limit: m.limit, Remaining: max(0, m.limit-next.used), RetryAfterMs: -1}
	if !allowed && cost <= m.limit {
		r.RetryAfterMs = next.start + m.window - now // the window is open: it closes then
	}
	if next.used > 0 {
		r.ResetAfterMs = next.start + m.window - now
	}
	if add == 0 {
		return r, nil
	}
	return r, next
}

// entries are the state's entries at max(now, last) if its window is open
// then, oldest first; otherwise an empty, non-nil slice.
func (m metaWindow) entries(st any, now int64) []Entry {
	s, ok := st.(metaState)
	if !ok || !m.open(s, max(now, s.last)) {
		return []Entry{}
	}
	// Read as every stored value is, under this limit's bounds: the
	// newest 2·limit entries, each of cost at most 2·limit.
	out := []Entry{}
	for _, e := range s.entries[max(0, len(s.entries)-int(2*m.limit)):] {
		e.Cost = min(e.Cost, 2*m.limit)
		out = append(out, e)
	}
	return out
}
