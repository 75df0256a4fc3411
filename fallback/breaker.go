package fallback

import (
	"fmt"
	"sync/atomic"
	"time"
)

// State is the circuit breaker's state.
type State uint8

const (
	// Closed: every call goes to the primary.
	Closed State = iota
	// Open: no call goes to the primary until OpenFor has passed.
	Open
	// HalfOpen: one call, the probe, is with the primary; the others are
	// decided without it.
	HalfOpen
)

// String is the state's name: closed, open or half-open.
func (s State) String() string { return name(s, "State", "closed", "open", "half-open") }

// name is the name of v among names, by its value, or typ(v) for a value
// none names: the String of State and Mode.
func name[T ~uint8](v T, typ string, names ...string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, uint8(v))
}

// breaker is the circuit breaker. Its state and the time at which an open
// breaker lets a probe through are one atomic word, so that every change
// is one compare-and-swap and no call takes a lock.
type breaker struct {
	// word is at<<2 | state: at is the time of the next probe (Open) or of
	// the probe being made (HalfOpen), as the duration since base; 0 when
	// Closed.
	word     atomic.Int64
	failures atomic.Int64 // consecutive primary failures while closed
	// counted is when the last failure counted in failures was seen, as
	// the duration since base: a failure of a call that started before
	// it is of the same stall, and not counted again.
	counted   atomic.Int64
	opens     atomic.Uint64
	threshold int64
	openFor   time.Duration
	base      time.Time
	onChange  func(from, to State)
}

// maxAt bounds the times the word holds (about 36 years from base either
// way), so that at<<2 cannot overflow whatever a test's clock says.
const maxAt = time.Duration(1 << 60)

func pack(at time.Duration, s State) int64 {
	return int64(max(-maxAt, min(at, maxAt)))<<2 | int64(s)
}

func unpack(w int64) (at time.Duration, s State) {
	return time.Duration(w >> 2), State(w & 3)
}

// since is now as a duration since base, within the word's bounds.
func (b *breaker) since(now time.Time) time.Duration {
	return max(-maxAt, min(now.Sub(b.base), maxAt))
}

// state is the breaker's current state.
func (b *breaker) state() State {
	_, s := unpack(b.word.Load())
	return s
}

// acquire says whether a call at now goes to the primary (call), and
// whether it is the half-open probe, which must then be ended by
// succeed, failed or release with probe true.
func (b *breaker) acquire(now time.Time) (call, probe bool) {
	w := b.word.Load()
	at, s := unpack(w)
	switch s {
	case Closed:
		return true, false
	case Open:
		if b.since(now) >= at && b.word.CompareAndSwap(w, pack(at, HalfOpen)) {
			b.changed(Open, HalfOpen)
			return true, true
		}
	}
	return false, false
}

// succeed records a primary call that answered.
func (b *breaker) succeed(probe bool) {
	if b.failures.Load() != 0 {
		b.failures.Store(0)
	}
	if probe {
		b.word.Store(pack(0, Closed))
		b.changed(HalfOpen, Closed)
	}
}

// failed records a primary call started at start that failed at now.
// While closed, it counts toward the threshold only if the call started
// after the last counted failure was seen: the calls that were waiting
// together when the primary (or this host) stalled make one failure,
// not one each, so that a burst of concurrent calls caught by one slow
// moment does not open the breaker, and a primary that keeps failing
// opens it after Failures rounds of calls, each started after the
// previous round failed (at once for a refused connection; after
// Failures Timeouts for one that does not answer).
func (b *breaker) failed(probe bool, start, now time.Time) {
	next := pack(b.since(now)+b.openFor, Open)
	if probe {
		b.word.Store(next)
		b.opens.Add(1)
		b.changed(HalfOpen, Open)
		return
	}
	last := b.counted.Load()
	if int64(b.since(start)) < last || !b.counted.CompareAndSwap(last, int64(b.since(now))) {
		return // the same stall as a failure counted already
	}
	if b.failures.Add(1) < b.threshold {
		return
	}
	w := b.word.Load()
	if _, s := unpack(w); s == Closed && b.word.CompareAndSwap(w, next) {
		b.opens.Add(1)
		b.changed(Closed, Open)
	}
}

// release ends a primary call that neither succeeded nor failed (bad
// input, a misconfiguration, the caller's ctx done): a probe's breaker goes back to open with
// its probe time, already past, so that the next call probes.
func (b *breaker) release(probe bool) {
	if !probe {
		return
	}
	at, _ := unpack(b.word.Load())
	b.word.Store(pack(at, Open))
	b.changed(HalfOpen, Open)
}

// retryAfter is the time from now until a call may go to the primary
// again, rounded up to a whole ms, at least 1 ms.
func (b *breaker) retryAfter(now time.Time) time.Duration {
	at, s := unpack(b.word.Load())
	if s != Open {
		return time.Millisecond
	}
	d := at - b.since(now)
	return max(time.Millisecond, (d+time.Millisecond-1)/time.Millisecond*time.Millisecond)
}

func (b *breaker) changed(from, to State) {
	if b.onChange != nil {
		b.onChange(from, to)
	}
}
