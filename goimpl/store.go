package goimpl

import (
	"hash/maphash"
	"sync"
)

// shardCount is the number of independently locked parts of a store.
const shardCount = 64

// minSweep is the size below which a shard never sweeps expired entries.
const minSweep = 1024

// stateOf is the per-key state of one algorithm.
type stateOf interface {
	// expires is when the last of the state's keys expires, on the
	// caller's clock.
	expires() int64
}

// store keeps per-key state in shards, each behind its own mutex.
type store[S any] struct {
	seed   maphash.Seed
	shards [shardCount]shard[S]
}

type shard[S any] struct {
	mu      sync.Mutex
	m       map[string]*entry[S]
	sweepAt int
}

type entry[S any] struct {
	state S
}

func newStore[S any]() *store[S] {
	s := &store[S]{seed: maphash.MakeSeed()}
	for i := range s.shards {
		s.shards[i].m = map[string]*entry[S]{}
		s.shards[i].sweepAt = minSweep
	}
	return s
}

// shard returns the shard of key; the caller locks it.
func (s *store[S]) shard(key string) *shard[S] {
	return &s.shards[maphash.String(s.seed, key)%shardCount]
}

// put stores st for key, reusing e when the key already has an entry, and
// returns the entry. A new key may first trigger a sweep of the entries
// whose state expired by nowMs, so that the shard's memory stays
// proportional to its live keys.
func (sh *shard[S]) put(key string, e *entry[S], st S, nowMs int64) *entry[S] {
	if e != nil {
		e.state = st
		return e
	}
	if len(sh.m) >= sh.sweepAt {
		for k, old := range sh.m {
			if expiry(old.state) <= nowMs {
				delete(sh.m, k)
			}
		}
		sh.sweepAt = max(2*len(sh.m), minSweep)
	}
	e = &entry[S]{state: st}
	sh.m[key] = e
	return e
}

func expiry[S any](st S) int64 {
	if x, ok := any(&st).(stateOf); ok {
		return x.expires()
	}
	return 0
}

// len returns the number of keys held, expired or not; for tests.
func (s *store[S]) len() int {
	n := 0
	for i := range s.shards {
		s.shards[i].mu.Lock()
		n += len(s.shards[i].m)
		s.shards[i].mu.Unlock()
	}
	return n
}
