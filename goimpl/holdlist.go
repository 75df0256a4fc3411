package goimpl

import "slices"

// holdList keeps one key's live holds in order of their ends (then of
// their ids), in sorted blocks of at most blockMax holds, each with the
// sum of its amounts, so that:
//
//   - a hold is added or removed in O(log n + blockMax): a binary search
//     for its block, then one for its place, and a shift within it;
//   - the holds that ended are dropped from the front, each once;
//   - the sum of the live amounts, the earliest and the latest end are at
//     hand;
//   - a walk in order of ends (a denial's wait) passes over a whole block
//     at once by its sum.
//
// A block splits in two when it overflows and merges with the next when
// both fit in half a block, so that n holds take about n/blockMax to
// 2n/blockMax blocks, and the list's memory follows its holds.
type holdList struct {
	blocks []*holdBlock
	n      int   // holds kept
	sum    int64 // their amounts
	// spare is the last block, kept when the list was emptied, so that a
	// key whose holds come and go (a reserve, then its commit) makes no
	// new block each time.
	spare *holdBlock
}

// blockMax is the most holds a block keeps: a few dozen, so that a shift
// within a block is a short copy and the blocks of 20,000 holds are a
// few hundred pointers.
const blockMax = 64

// holdBlock is a run of holds in order, and the sum of their amounts.
type holdBlock struct {
	e   []holdEntry
	sum int64
}

// holdEntry is one hold: id holds amount until end (ms).
type holdEntry struct {
	end, amount int64
	id          string
}

// before reports whether x comes before the hold (end, id) in a list.
func (x *holdEntry) before(end int64, id string) bool {
	return x.end < end || x.end == end && x.id < id
}

// find is the index of the first block whose last hold is not before
// (end, id): where that hold is, or goes; len(blocks) when none is.
func (l *holdList) find(end int64, id string) int {
	lo, hi := 0, len(l.blocks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b := l.blocks[m]; b.e[len(b.e)-1].before(end, id) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// place is the index in b of the first hold not before (end, id).
func (b *holdBlock) place(end int64, id string) int {
	lo, hi := 0, len(b.e)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b.e[m].before(end, id) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// add adds x, whose id the list does not hold.
func (l *holdList) add(x holdEntry) {
	l.n, l.sum = l.n+1, l.sum+x.amount
	if len(l.blocks) == 0 {
		b := l.spare
		if b == nil {
			b = &holdBlock{}
		}
		b.e, b.sum, l.spare = append(b.e[:0], x), x.amount, nil
		l.blocks = append(l.blocks, b)
		return
	}
	i := min(l.find(x.end, x.id), len(l.blocks)-1)
	b := l.blocks[i]
	at := b.place(x.end, x.id)
	b.e = append(b.e, holdEntry{})
	copy(b.e[at+1:], b.e[at:])
	b.e[at], b.sum = x, b.sum+x.amount
	if len(b.e) > blockMax {
		l.split(i)
	}
}

// split cuts block i in two halves.
func (l *holdList) split(i int) {
	b := l.blocks[i]
	half := len(b.e) / 2
	next := &holdBlock{e: make([]holdEntry, len(b.e)-half, blockMax+1)}
	copy(next.e, b.e[half:])
	for j := range next.e {
		next.sum += next.e[j].amount
	}
	clear(b.e[half:]) // let go of the ids
	b.e, b.sum = b.e[:half], b.sum-next.sum
	l.blocks = append(l.blocks, nil)
	copy(l.blocks[i+2:], l.blocks[i+1:])
	l.blocks[i+1] = next
}

// remove removes the hold (end, id), which the list holds.
func (l *holdList) remove(end int64, id string) {
	i := l.find(end, id)
	b := l.blocks[i]
	at := b.place(end, id)
	x := b.e[at]
	l.n, l.sum, b.sum = l.n-1, l.sum-x.amount, b.sum-x.amount
	copy(b.e[at:], b.e[at+1:])
	b.e[len(b.e)-1] = holdEntry{}
	b.e = b.e[:len(b.e)-1]
	l.settle(i)
}

// settle drops block i when it is empty, or merges it with the next when
// both fit in half a block.
func (l *holdList) settle(i int) {
	b := l.blocks[i]
	switch {
	case len(b.e) == 0:
		l.blocks = slices.Delete(l.blocks, i, i+1)
		if len(l.blocks) == 0 && cap(b.e) <= blockMax+1 {
			l.spare = b
		}
	case i+1 < len(l.blocks) && len(b.e)+len(l.blocks[i+1].e) <= blockMax/2:
		next := l.blocks[i+1]
		b.e, b.sum = append(b.e, next.e...), b.sum+next.sum
		l.blocks = slices.Delete(l.blocks, i+1, i+2)
	}
}

// dropEnded drops the holds whose end is at or before now, calling
// dropped with each one's id, and returns how many it dropped.
func (l *holdList) dropEnded(now int64, dropped func(id string)) int {
	n := 0
	for len(l.blocks) > 0 && l.blocks[0].e[0].end <= now {
		b := l.blocks[0]
		k := b.place(now+1, "") // the first hold that ends after now
		for j := range k {
			dropped(b.e[j].id)
			b.sum -= b.e[j].amount
			l.sum -= b.e[j].amount
		}
		rest := copy(b.e, b.e[k:])
		clear(b.e[rest:])
		b.e = b.e[:rest]
		l.n, n = l.n-k, n+k
		l.settle(0)
	}
	return n
}

// lookup is id's hold, found by a look at each: for a list of a few.
func (l *holdList) lookup(id string) (holdRef, bool) {
	for _, b := range l.blocks {
		for i := range b.e {
			if x := &b.e[i]; x.id == id {
				return holdRef{end: x.end, amount: x.amount}, true
			}
		}
	}
	return holdRef{}, false
}

// first and last are the earliest and the latest end held; only when n
// > 0.
func (l *holdList) first() int64 { return l.blocks[0].e[0].end }

func (l *holdList) last() int64 {
	b := l.blocks[len(l.blocks)-1]
	return b.e[len(b.e)-1].end
}

// holdWalk walks a list's holds in order of their ends, keeping the sum
// of the holds not yet passed: those live after the end it has reached.
type holdWalk struct {
	l      *holdList
	bi, ei int   // the next hold to pass
	held   int64 // the sum of the holds from it on
}

// walk starts a walk at the list's first hold; l may be nil (no holds).
func walk(l *holdList) holdWalk {
	if l == nil {
		return holdWalk{}
	}
	return holdWalk{l: l, held: l.sum}
}

// next is the next end to reach, false when every hold has been passed.
func (w *holdWalk) next() (int64, bool) {
	if w.l == nil || w.bi == len(w.l.blocks) {
		return 0, false
	}
	return w.l.blocks[w.bi].e[w.ei].end, true
}

// advance reaches the next end and passes every hold that ends there,
// returning it. A whole block is passed at once, without a look at its
// ends, when even the holds after it leave more than room: before its
// last end nothing of room could fit.
func (w *holdWalk) advance(room int64) int64 {
	b := w.l.blocks[w.bi]
	at := b.e[w.ei].end
	if w.ei == 0 && w.held-b.sum > room {
		at, w.held, w.bi = b.e[len(b.e)-1].end, w.held-b.sum, w.bi+1
	}
	for w.bi < len(w.l.blocks) {
		b = w.l.blocks[w.bi]
		if b.e[w.ei].end > at {
			break
		}
		w.held -= b.e[w.ei].amount
		if w.ei++; w.ei == len(b.e) {
			w.bi, w.ei = w.bi+1, 0
		}
	}
	return at
}
