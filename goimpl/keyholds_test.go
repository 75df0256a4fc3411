package goimpl

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"unsafe"

	"github.com/limitspec/limitspec/kit"
)

// TestEndedListMatchesMap: a key's remembered ends keep and drop what a
// map by id does, as the oracle keeps them, through the moves between
// their slots and their map (a few ids, then many, then a few again),
// ends remembered again, forgotten, and swept at times that go back.
func TestEndedListMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	var s holdStore
	s.limitHash("l") // seeds the store
	var l endedList
	ref := map[string]endedHold{}
	now := int64(1_000_000)
	grew, shrank := 0, 0
	for step := range 30000 {
		ids := 6 + 60*(step/5000%2) // a few ids, then many, in turn
		many := l.many != nil
		id := "id" + strconv.Itoa(rng.IntN(ids))
		h := s.idHash(id)
		now += rng.Int64N(400) - 100
		switch k := rng.IntN(10); {
		case k < 6:
			x := endedHold{id: id, hash: uint32(h), commit: rng.IntN(2) == 0, amount: rng.Int64N(5), until: now + requestMs, kept: true}
			x.reply.one = kit.Reply{Allowed: true, Remaining: int64(step)}
			l.put(x)
			ref[id] = x
		case k < 7:
			l.forget(id, h)
			delete(ref, id)
		default:
			l.sweep(now - requestMs)
			for id, x := range ref {
				if x.until <= now-requestMs {
					delete(ref, id)
				}
			}
		}
		checkEnded(t, step, &s, &l, ref)
		switch {
		case !many && l.many != nil:
			grew++
		case many && l.many == nil:
			shrank++
		}
	}
	if grew < 2 || shrank < 2 {
		t.Errorf("the ends moved to their map %d times and back %d times; want both at least twice", grew, shrank)
	}
}

// TestEndedHoldInPlace: a remembered end takes at most 128 bytes, so
// that the map of a key with many keeps it in place: remembering an end
// of a new id allocates nothing but the map's growth.
func TestEndedHoldInPlace(t *testing.T) {
	if n := unsafe.Sizeof(endedHold{}); n > 128 {
		t.Errorf("an endedHold takes %d bytes; want at most 128", n)
	}
}

// checkEnded fails the test unless l keeps the ends of ref, and no other.
func checkEnded(t *testing.T, step int, s *holdStore, l *endedList, ref map[string]endedHold) {
	t.Helper()
	if l.len() != len(ref) {
		t.Fatalf("step %d: %d ends kept, want %d", step, l.len(), len(ref))
	}
	for id, want := range ref {
		if got, ok := l.find(id, s.idHash(id)); !ok || !sameEnd(got, want) {
			t.Fatalf("step %d: %s: %+v, %v; want %+v", step, id, got, ok, want)
		}
	}
	for i := range 80 {
		id := "id" + strconv.Itoa(i)
		if _, ok := l.find(id, s.idHash(id)); ok != (ref[id].id != "") {
			t.Fatalf("step %d: %s found %v, want %v", step, id, ok, !ok)
		}
	}
}

// sameEnd reports whether x and y are the same end, kept reply included.
func sameEnd(x, y endedHold) bool {
	return x.id == y.id && x.hash == y.hash && x.commit == y.commit && x.amount == y.amount &&
		x.until == y.until && x.kept == y.kept && x.reply.one == y.reply.one && len(x.reply.more) == len(y.reply.more)
}

// TestKeyHoldsIndex: a key finds its live holds by id whether they are
// few (by a look at each) or many (by its index), through the index's
// making and letting go as they grow and shrink.
func TestKeyHoldsIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 9))
	var kh keyHolds
	ref := map[string]holdRef{}
	changes, indexed := 0, false // the index made or let go of; whether it is
	for step := range 20000 {
		n := 3 + 30*(step/2000%2) // a few ids, then many, in turn
		if step%2000 == 0 {
			for i := n; i < 33; i++ { // the many's holds end: a few are left
				if id := "h" + strconv.Itoa(i); ref[id] != (holdRef{}) {
					kh.unhold(id)
					delete(ref, id)
				}
			}
		}
		id := "h" + strconv.Itoa(rng.IntN(n))
		switch _, held := ref[id]; {
		case rng.IntN(2) == 0:
			x := holdRef{end: rng.Int64N(1000), amount: 1 + rng.Int64N(3)}
			kh.put(id, x.amount, x.end)
			ref[id] = x
		case held:
			kh.unhold(id)
			delete(ref, id)
		}
		if ix := kh.byID != nil; ix != indexed {
			changes, indexed = changes+1, ix
		}
		if ix := kh.byID != nil; kh.live.n != len(ref) || ix && (len(kh.byID) != kh.live.n || kh.live.n <= fewHolds/2) || !ix && kh.live.n > fewHolds {
			t.Fatalf("step %d: %d holds (index %v), want %d", step, kh.live.n, ix, len(ref))
		}
		for i := range 40 {
			id := "h" + strconv.Itoa(i)
			got, ok := kh.find(id)
			if want, held := ref[id]; ok != held || got != want {
				t.Fatalf("step %d: %s: %+v, %v; want %+v, %v", step, id, got, ok, want, held)
			}
		}
	}
	if changes < 4 {
		t.Errorf("the index was made or let go of %d times; want each at least twice", changes)
	}
}
