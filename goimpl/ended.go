package goimpl

import "math/bits"

// endedList keeps one key's remembered ends (the ends commits and
// releases made), each found by its id, and drops those whose reach is
// REQUEST_MS past, each once, as the oracle drops them.
//
// A key usually keeps a handful: up to fewEnded are kept in the slots of
// a slice, with each one's id hash and reach in two small arrays beside
// it and the slots in use in a mask, so that finding an id, or the ends
// to drop, reads those arrays (a few cache lines) rather than the ends,
// and dropping an end frees its slot without moving it (a freed slot
// keeps the end's id until a new end takes it). More are kept in a map
// by id, ordered by their reaches in a heap, until they are few again.
// An id's end remembered again replaces the one it had (in the map, its
// entry in the heap stays until it comes out, and is passed over).
type endedList struct {
	used   uint16           // the slots of few in use: bit i for few[i]
	hashes [fewEnded]uint32 // the id hash of few[i] (its low bits)
	untils [fewEnded]int64  // the reach of few[i]
	few    []endedHold
	// many are the ends once there are more than fewEnded (none is then
	// in few), and reaches orders them by their reach.
	many    map[string]endedHold
	reaches reachHeap
	reach   int64 // the latest reach remembered
}

// fewEnded is the most ends a key keeps in the slots of few.
const fewEnded = 16

// len is the number of ends kept.
func (l *endedList) len() int { return bits.OnesCount16(l.used) + len(l.many) }

// find is id's end, if one is kept; h is id's hash (holdStore.idHash).
func (l *endedList) find(id string, h uint64) (endedHold, bool) {
	if l.many != nil {
		x, ok := l.many[id]
		return x, ok
	}
	if i := l.index(id, h); i >= 0 {
		return l.few[i], true
	}
	return endedHold{}, false
}

// index is the slot of id's end in few, -1 if it has none.
func (l *endedList) index(id string, h uint64) int {
	for m := l.used; m != 0; m &= m - 1 {
		if i := bits.TrailingZeros16(m); l.hashes[i] == uint32(h) && l.few[i].id == id {
			return i
		}
	}
	return -1
}

// put keeps x, replacing the end x.id had.
func (l *endedList) put(x endedHold) {
	l.reach = max(l.reach, x.until)
	if l.many != nil {
		l.putMany(x)
		return
	}
	i := l.index(x.id, uint64(x.hash))
	switch {
	case i >= 0:
	case l.used == 1<<fewEnded-1:
		l.grow(x)
		return
	default:
		i = bits.TrailingZeros16(^l.used) // the first free slot
		if i == len(l.few) {
			l.few = append(l.few, endedHold{})
		}
	}
	l.few[i], l.hashes[i], l.untils[i] = x, x.hash, x.until
	l.used |= 1 << i
}

// grow moves the ends from few to many, with x.
func (l *endedList) grow(x endedHold) {
	l.many = make(map[string]endedHold, 2*fewEnded)
	for i := range l.few {
		l.putMany(l.few[i])
	}
	l.putMany(x)
	clear(l.few)
	l.few, l.used = l.few[:0], 0
}

// putMany keeps x in many.
func (l *endedList) putMany(x endedHold) {
	l.many[x.id] = x
	l.reaches.push(reachEntry{until: x.until, id: x.id})
}

// forget drops id's end, if one is kept; h is id's hash.
func (l *endedList) forget(id string, h uint64) {
	if l.many != nil {
		delete(l.many, id) // its entry in reaches is passed over
	} else if i := l.index(id, h); i >= 0 {
		l.used &^= 1 << i
	}
}

// sweep drops the ends whose reach is at or before cutoff.
func (l *endedList) sweep(cutoff int64) {
	if l.many == nil {
		for m := l.used; m != 0; m &= m - 1 {
			if i := bits.TrailingZeros16(m); l.untils[i] <= cutoff {
				l.used &^= 1 << i
			}
		}
		if l.used == 0 {
			clear(l.few) // let go of the ids of the freed slots
			l.few = l.few[:0]
		}
		return
	}
	for len(l.reaches) > 0 && l.reaches[0].until <= cutoff {
		r := l.reaches.pop()
		if x, ok := l.many[r.id]; ok && x.until == r.until {
			delete(l.many, r.id)
		}
	}
	if len(l.many) <= fewEnded/2 {
		l.shrink()
	}
}

// shrink moves the ends from many back to the slots of few.
func (l *endedList) shrink() {
	for _, x := range l.many {
		i := len(l.few)
		l.few = append(l.few, x)
		l.hashes[i], l.untils[i] = x.hash, x.until
		l.used |= 1 << i
	}
	l.many, l.reaches = nil, nil
}

// reachHeap is a min-heap of remembered ends by their reach. An entry
// whose id was remembered again since is left in it, and passed over
// when it comes out.
type reachHeap []reachEntry

type reachEntry struct {
	until int64
	id    string
}

func (h *reachHeap) push(e reachEntry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].until <= s[i].until {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *reachHeap) pop() reachEntry {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0], s[last] = s[last], reachEntry{}
	s = s[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(s) && s[l].until < s[m].until {
			m = l
		}
		if l+1 < len(s) && s[l+1].until < s[m].until {
			m = l + 1
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
