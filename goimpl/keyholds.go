package goimpl

import (
	"slices"

	"github.com/limitspec/limitspec/kit"
)

// keyHolds are one key's holds: its live holds in order of their ends
// (live), each found by its id, and the ends that commits and releases
// made (ended). A key usually holds a handful of each, and a look at
// each one finds an id sooner than a map would; a key that holds more
// finds them through an index, made when they pass a few and let go of
// when they are few again, so that no call's work grows with their
// number.
type keyHolds struct {
	key  holdKey
	hash uint64    // the hash of key (holdStore.keyHash)
	next *keyHolds // the next key of the same hash in its shard
	slot int       // where the key is in its shard's all; -1 once deleted
	live holdList
	// byID finds the live holds by id once there are more than fewHolds;
	// nil while they are few, found in live.
	byID  map[string]holdRef
	ended endedList
}

// fewHolds is the most live holds a key finds by a look at each.
const fewHolds = 8

// holdRef is a live hold, found by its id.
type holdRef struct{ end, amount int64 }

// hold is id's hold, if it has one live at now.
func (kh *keyHolds) hold(id string, now int64) (holdRef, bool) {
	if kh == nil {
		return holdRef{}, false
	}
	x, ok := kh.find(id)
	return x, ok && x.end > now
}

// find is id's hold, if the list keeps one (live or not yet dropped).
func (kh *keyHolds) find(id string) (holdRef, bool) {
	if kh.byID != nil {
		x, ok := kh.byID[id]
		return x, ok
	}
	return kh.live.lookup(id)
}

// sum and last are the sum of the holds kept and their latest end (now
// when none is): after a sweep at now, those live at now.
func (kh *keyHolds) sum() int64 {
	if kh == nil {
		return 0
	}
	return kh.live.sum
}

func (kh *keyHolds) last(now int64) int64 {
	if kh == nil || kh.live.n == 0 {
		return now
	}
	return max(now, kh.live.last())
}

// put holds amount for id until end, replacing the hold id had.
func (kh *keyHolds) put(id string, amount, end int64) {
	if x, ok := kh.find(id); ok {
		kh.live.remove(x.end, id)
	}
	kh.live.add(holdEntry{end: end, amount: amount, id: id})
	switch {
	case kh.byID != nil:
		kh.byID[id] = holdRef{end: end, amount: amount}
	case kh.live.n > fewHolds:
		kh.byID = make(map[string]holdRef, kh.live.n)
		for _, b := range kh.live.blocks {
			for _, x := range b.e {
				kh.byID[x.id] = holdRef{end: x.end, amount: x.amount}
			}
		}
	}
}

// unhold ends id's hold, which it has.
func (kh *keyHolds) unhold(id string) {
	x, _ := kh.find(id)
	kh.live.remove(x.end, id)
	kh.unindex(id)
}

// unindex deletes id from the index, if there is one, and lets go of
// the index once the holds are few again.
func (kh *keyHolds) unindex(id string) {
	if kh.byID == nil {
		return
	}
	delete(kh.byID, id)
	if kh.live.n <= fewHolds/2 {
		kh.byID = nil
	}
}

// sweep drops the holds that ended at now, and the remembered ends whose
// reach is REQUEST_MS past.
func (kh *keyHolds) sweep(now int64) {
	if kh == nil {
		return
	}
	if kh.live.n > 0 && kh.live.first() <= now {
		kh.live.dropEnded(now, kh.unindex)
	}
	kh.ended.sweep(now - requestMs)
}

// expires is when kh's Redis key would expire: TTL_MARGIN_MS after its
// last hold's end and its last reach.
func (kh *keyHolds) expires() int64 {
	end := kh.ended.reach
	if kh.live.n > 0 {
		end = max(end, kh.live.last())
	}
	return end + ttlMarginMs
}

// endedAt is the end of id's hold that a commit or release made, if it
// is within reach at now; h is id's hash (holdStore.idHash).
func (kh *keyHolds) endedAt(id string, h uint64, now int64) (endedHold, bool) {
	if kh == nil {
		return endedHold{}, false
	}
	e, ok := kh.ended.find(id, h)
	return e, ok && e.until > now
}

// endedHold is a hold that a commit (else a release) ended: what the
// call charged on the limit (0 for a release), until when a retry of the
// call gets its reply (its reach), and, on the first limit (in the
// policy's order) the call ended a hold on, the call's reply (kept).
// hash is the low bits of id's hash (holdStore.idHash). It takes at
// most 128 bytes, so that a map keeps it in place.
type endedHold struct {
	id     string
	amount int64
	until  int64
	hash   uint32
	commit bool
	kept   bool
	reply  keptReply
}

// keptReply is the reply of a commit or release, kept for its retries:
// each limit's, in the policy's order, from which the call's result is
// composed again. A policy of one limit keeps its reply in place, so
// that its commits allocate nothing for it.
type keptReply struct {
	one  kit.Reply
	more []kit.Reply // a policy of more limits'; nil for one
}

// keepReplies returns the replies kept.
func keepReplies(replies []kit.Reply) keptReply {
	if len(replies) == 1 {
		return keptReply{one: replies[0]}
	}
	return keptReply{more: slices.Clone(replies)}
}

// copyTo copies the replies kept to out and reports whether it did: not
// when they are another policy's, of another number of limits.
func (k *keptReply) copyTo(out []kit.Reply) bool {
	switch {
	case k.more == nil && len(out) == 1:
		out[0] = k.one
	case k.more != nil && len(k.more) == len(out):
		copy(out, k.more)
	default:
		return false
	}
	return true
}
