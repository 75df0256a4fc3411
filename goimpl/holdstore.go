package goimpl

import (
	"hash/maphash"
	"sync"

	"github.com/limitspec/limitspec/kit"
)

// The holds of holding policies (docs/semantics.md, "Holds") in process
// memory. Each limit keeps its holds under its name and the value it
// counts (its hash tag), as the Redis key {tag}:<limit>:hz names them,
// whatever its algorithm: limits of one name share their holds, as they
// share their state. A key's holds (keyHolds, keyholds.go) are its live
// holds in order of their ends, each found by its id, and the ends that
// a commit or release made, remembered for REQUEST_MS with the call's
// reply.
//
// The keys are spread over holdShards shards by the hash of their name,
// each behind its own mutex, as the states are: unrelated keys seldom
// share a lock, and a call locks only the shards of its own keys. A
// shard finds a key by that hash, worked out once per call (the limit's
// part once per plan), and compares the name of the key it finds.
//
// A key's holds are dropped as they end, by the first call on the key at
// or after their end (each once), and its remembered ends REQUEST_MS
// after their reach; a key left with neither is deleted at once. A key
// that no call comes back to is deleted once its last hold and its last
// reach are TTL_MARGIN_MS behind the time of a call that comes across it
// (as its Redis key expires). Each shard lists its keys with the time
// each expires, noted at the end of every call on the key, so that
// coming across a key compares two times in a list and never visits the
// key itself: every walkEvery calls of a shard look at the next walkBatch
// keys of its list, and of another shard's in turn, so that memory
// follows the holds live, not every key that ever held, at a price per
// call of a fraction of a look.
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
	mu sync.Mutex
	// keys are the keys by the hash of their name (keyHash); keys of one
	// hash (rare as a 64-bit collision) are chained (keyHolds.next).
	keys map[uint64]*keyHolds
	// all are the keys, in no order, each with when it expires, for the
	// walk that deletes the keys no call comes back to: cursor is where
	// it goes on.
	all    []heldKey
	cursor int
	calls  uint32 // the calls that locked the shard and took effect
}

// heldKey is a key of a shard and when it expires (keyHolds.expires),
// as the last call on it left it.
type heldKey struct {
	expires int64
	kh      *keyHolds
}

// walkEvery is how many calls of a shard pass between two walks, and
// walkBatch how many keys a walk looks at in the shard, then in another.
const (
	walkEvery = 16
	walkBatch = 32
)

// limitHash is the hash of the name of a limit, from which keyHash
// works out each of its keys': a plan works it out once per limit.
func (s *holdStore) limitHash(limit string) uint64 {
	s.once.Do(func() { s.seed = maphash.MakeSeed() })
	return maphash.String(s.seed, limit)
}

// keyHash is the hash of the key of tag's holds under the limit whose
// name hashes to lh (limitHash).
func (s *holdStore) keyHash(lh uint64, tag string) uint64 {
	return kit.Mix(maphash.String(s.seed, tag), int64(lh))
}

// index is the index of the shard of the key of hash h.
func index(h uint64) int { return int(h % holdShards) }

// idHash is the hash of a hold's id, by which a key's remembered ends
// are told apart before their ids are compared.
func (s *holdStore) idHash(id string) uint64 { return maphash.String(s.seed, id) }

// get returns the holds of k, of hash h, nil when it has none; the shard
// is locked.
func (sh *holdShard) get(k holdKey, h uint64) *keyHolds {
	kh := sh.keys[h]
	for kh != nil && kh.key != k {
		kh = kh.next
	}
	return kh
}

// add returns new, empty holds of k, of hash h, which has none; the
// shard is locked. Their time of expiry is noted when the call ends
// (settle).
func (sh *holdShard) add(k holdKey, h uint64) *keyHolds {
	if sh.keys == nil {
		sh.keys = map[uint64]*keyHolds{}
	}
	kh := &keyHolds{key: k, hash: h, slot: len(sh.all), next: sh.keys[h]}
	sh.keys[h] = kh
	sh.all = append(sh.all, heldKey{kh: kh})
	return kh
}

// drop deletes kh from the shard, which is locked: the last key of the
// list takes its place.
func (sh *holdShard) drop(kh *keyHolds) {
	switch p := sh.keys[kh.hash]; {
	case p == kh && kh.next == nil:
		delete(sh.keys, kh.hash)
	case p == kh:
		sh.keys[kh.hash] = kh.next
	default:
		for p.next != kh {
			p = p.next
		}
		p.next = kh.next
	}
	last := len(sh.all) - 1
	moved := sh.all[last]
	sh.all[kh.slot], moved.kh.slot = moved, kh.slot
	sh.all[last] = heldKey{}
	sh.all = sh.all[:last]
	kh.slot = -1
}

// settle deletes kh, the holds of a call's key (nil: none), when they
// keep nothing, else notes when they expire; the shard is locked.
func (sh *holdShard) settle(kh *keyHolds) {
	switch {
	case kh == nil || kh.slot < 0:
	case kh.live.n == 0 && kh.ended.len() == 0:
		sh.drop(kh)
	default:
		sh.all[kh.slot].expires = kh.expires()
	}
}

// walk looks at the next n keys of the shard, which is locked, and
// deletes those that expired by now.
func (sh *holdShard) walk(now int64, n int) {
	for ; n > 0 && len(sh.all) > 0; n-- {
		if sh.cursor >= len(sh.all) {
			sh.cursor = 0
		}
		if k := sh.all[sh.cursor]; k.expires <= now {
			sh.drop(k.kh) // the last key takes its place: looked at next
			continue
		}
		sh.cursor++
	}
}

// visit walks a batch of keys of shard i, unless a call holds it.
func (s *holdStore) visit(i int, now int64) {
	sh := &s.shards[i%holdShards]
	if sh.mu.TryLock() {
		sh.walk(now, walkBatch)
		sh.mu.Unlock()
	}
}
