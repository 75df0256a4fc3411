package goimpl

import (
	"hash/maphash"
	"slices"
	"sync"

	"github.com/limitspec/limitspec/kit"
)

// The holds of holding policies (docs/semantics.md, "Holds") in process
// memory. Each limit keeps its holds under its name and the value it
// counts (its hash tag), as the Redis key {tag}:<limit>:hz names them,
// whatever its algorithm: limits of one name share their holds, as they
// share their state. A key's holds (keyHolds) are its live holds in order
// of their ends (holdList), each found by its id, and the ends that a
// commit or release made, remembered for REQUEST_MS with the call's reply.
//
// The keys are spread over holdShards shards by the hash of their name,
// each behind its own mutex, as the states are: unrelated keys seldom
// share a lock, and a call locks only the shards of its own keys.
//
// A key's holds are dropped as they end, by the first call on the key at
// or after their end (each once), and its remembered ends REQUEST_MS
// after their reach; a key left with neither is deleted at once. A key
// that no call comes back to is deleted once its last hold and its last
// reach are TTL_MARGIN_MS behind the time of a call that comes across it
// (as its Redis key expires): each call looks at a few keys of its shards
// in turn, and now and then at a few of another shard's, so that memory
// follows the holds live, not every key that ever held.
type holdStore struct {
	once   sync.Once
	seed   maphash.Seed
	shards [holdShards]holdShard
}

// holdShards is the number of independently locked parts of the holds.
const holdShards = 64

// holdKey names one limit's holds: the limit's name and its hash tag.
type holdKey struct{ limit, tag string }

// holdShard is one part of the holds. Its fields are guarded by mu.
type holdShard struct {
	mu   sync.Mutex
	keys map[holdKey]*keyHolds
	// all are the keys, in no order, for the walk that deletes the keys
	// no call comes back to: cursor is where it goes on.
	all    []*keyHolds
	cursor int
	calls  uint32 // the calls that locked the shard
}

// keyHolds are one key's holds.
type keyHolds struct {
	key  holdKey
	slot int // where the key is in its shard's all
	live holdList
	byID map[string]holdRef // the live holds, by id
	// ended are the ends a commit or release made, by id, within reach or
	// less than REQUEST_MS past it; reaches orders them by their reach.
	ended   map[string]endedHold
	replies map[string]keptReply // the replies kept with this limit, by id
	reaches reachHeap
	reach   int64 // the latest reach remembered
}

// holdRef is a live hold, found by its id.
type holdRef struct{ end, amount int64 }

// endedHold is a hold that a commit or release ended: what the call
// charged on the limit (0 for a release), until when a retry of the call
// gets its reply (its reach), and whether that reply is kept with this
// limit's, the first (in the policy's order) the call ended a hold on.
type endedHold struct {
	op     string
	amount int64
	until  int64
	kept   bool
}

// keptReply is the reply of a commit or release, kept for its retries:
// each limit's, in the policy's order, from which the call's result is
// composed again. A reply of a few limits is kept in place, so that a
// commit allocates nothing for it.
type keptReply struct {
	n    int
	in   [replyInline]kit.Reply
	more []kit.Reply // beyond replyInline limits
}

const replyInline = 4

// keepReplies returns the replies kept.
func keepReplies(replies []kit.Reply) keptReply {
	k := keptReply{n: len(replies)}
	if len(replies) > replyInline {
		k.more = slices.Clone(replies)
		return k
	}
	copy(k.in[:], replies)
	return k
}

// replies are the replies kept.
func (k *keptReply) replies() []kit.Reply {
	if k.more != nil {
		return k.more
	}
	return k.in[:k.n]
}

// reachHeap is a min-heap of remembered ends by their reach. An entry
// whose id was remembered again since is left in it, and skipped when it
// comes out.
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

// index is the index of k's shard.
func (s *holdStore) index(k holdKey) int {
	s.once.Do(func() { s.seed = maphash.MakeSeed() })
	return int(maphash.Comparable(s.seed, k) % holdShards)
}

// get returns k's holds, nil when it has none; the shard is locked.
func (sh *holdShard) get(k holdKey) *keyHolds { return sh.keys[k] }

// add returns k's holds, made empty if it had none; the shard is locked.
func (sh *holdShard) add(k holdKey) *keyHolds {
	if kh := sh.keys[k]; kh != nil {
		return kh
	}
	if sh.keys == nil {
		sh.keys = map[holdKey]*keyHolds{}
	}
	kh := &keyHolds{key: k, slot: len(sh.all)}
	sh.keys[k] = kh
	sh.all = append(sh.all, kh)
	return kh
}

// drop deletes kh from the shard, which is locked.
func (sh *holdShard) drop(kh *keyHolds) {
	delete(sh.keys, kh.key)
	last := sh.all[len(sh.all)-1]
	sh.all[kh.slot], last.slot = last, kh.slot
	sh.all[len(sh.all)-1] = nil
	sh.all = sh.all[:len(sh.all)-1]
	kh.slot = -1
}

// tidy deletes kh when it keeps nothing; the shard is locked.
func (sh *holdShard) tidy(kh *keyHolds) {
	if kh != nil && kh.slot >= 0 && kh.live.n == 0 && len(kh.ended) == 0 {
		sh.drop(kh)
	}
}

// lookAt is how many keys a call looks at in its shard, or in another's,
// for the walk that deletes the keys no call comes back to; visitEvery,
// how many calls of a shard pass between two looks at another shard.
const (
	lookAt     = 2
	visitEvery = 16
)

// walk looks at the next n keys of the shard, which is locked, and
// deletes those that expired by now: their last hold and their last
// reach are TTL_MARGIN_MS behind it.
func (sh *holdShard) walk(now int64, n int) {
	for ; n > 0 && len(sh.all) > 0; n-- {
		if sh.cursor >= len(sh.all) {
			sh.cursor = 0
		}
		kh := sh.all[sh.cursor]
		if kh.expires() <= now {
			sh.drop(kh) // the last key takes its place: looked at next
			continue
		}
		sh.cursor++
	}
}

// expires is when kh's Redis key would expire: TTL_MARGIN_MS after its
// last hold's end and its last reach.
func (kh *keyHolds) expires() int64 {
	end := kh.reach
	if kh.live.n > 0 {
		end = max(end, kh.live.last())
	}
	return end + ttlMarginMs
}

// visit looks at a few keys of shard i, unless a call holds it.
func (s *holdStore) visit(i int, now int64) {
	sh := &s.shards[i%holdShards]
	if sh.mu.TryLock() {
		sh.walk(now, visitEvery)
		sh.mu.Unlock()
	}
}

// live is id's hold, if it has one live at now.
func (kh *keyHolds) hold(id string, now int64) (holdRef, bool) {
	if kh == nil {
		return holdRef{}, false
	}
	x, ok := kh.byID[id]
	return x, ok && x.end > now
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
	if x, ok := kh.byID[id]; ok {
		kh.live.remove(x.end, id)
	}
	if kh.byID == nil {
		kh.byID = map[string]holdRef{}
	}
	kh.byID[id] = holdRef{end: end, amount: amount}
	kh.live.add(holdEntry{end: end, amount: amount, id: id})
}

// unhold ends id's hold, which it has.
func (kh *keyHolds) unhold(id string) {
	kh.live.remove(kh.byID[id].end, id)
	delete(kh.byID, id)
}

// remember keeps e, the end a commit or release made of id's hold, and
// the call's replies when e keeps them.
func (kh *keyHolds) remember(id string, e endedHold, replies []kit.Reply) {
	if kh.ended == nil {
		kh.ended = map[string]endedHold{}
	}
	kh.ended[id] = e
	switch {
	case e.kept && kh.replies == nil:
		kh.replies = map[string]keptReply{id: keepReplies(replies)}
	case e.kept:
		kh.replies[id] = keepReplies(replies)
	default:
		delete(kh.replies, id)
	}
	kh.reaches.push(reachEntry{until: e.until, id: id})
	kh.reach = max(kh.reach, e.until)
}

// endedAt is the end of id's hold that a commit or release made, if it
// is within reach at now.
func (kh *keyHolds) endedAt(id string, now int64) (endedHold, bool) {
	if kh == nil {
		return endedHold{}, false
	}
	e, ok := kh.ended[id]
	return e, ok && e.until > now
}

// sweep drops the holds that ended at now, and the remembered ends whose
// reach is REQUEST_MS past.
func (kh *keyHolds) sweep(now int64) {
	if kh == nil {
		return
	}
	if kh.live.n > 0 && kh.live.first() <= now {
		kh.live.dropEnded(now, func(id string) { delete(kh.byID, id) })
	}
	for len(kh.reaches) > 0 && kh.reaches[0].until <= now-requestMs {
		r := kh.reaches.pop()
		if e, ok := kh.ended[r.id]; ok && e.until == r.until {
			delete(kh.ended, r.id)
			delete(kh.replies, r.id)
		}
	}
}
