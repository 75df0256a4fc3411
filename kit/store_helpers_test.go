package kit

import (
	"hash/maphash"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
	"weak"
)

// t0 is a time in ms, 2023-11-14.
const t0 = 1_700_000_000_000

// expiresAt is a state that expires at a given time.
type expiresAt struct{ exp int64 }

// Expires is when the state expires (see Expirer).
func (s *expiresAt) Expires() int64 { return s.exp }

// name is the key of the tests' stores: a name alone.
type name = Key[[0]int64]

// key is the key named n.
func key(n string) name { return name{Name: n} }

// nameHash is the hash of the tests' keys.
func nameHash(seed maphash.Seed, k name) uint64 { return HashKey(seed, k.Name) }

// newStore returns an empty store of the tests' keys.
func newStore[S any]() *Store[[0]int64, S] { return NewStore[[0]int64, S](nameHash) }

// manualClock is a sweeper clock the test sets.
type manualClock struct{ d atomic.Int64 }

// read returns the time set last.
func (c *manualClock) read() time.Duration { return time.Duration(c.d.Load()) }

// set sets the time read returns.
func (c *manualClock) set(d time.Duration) { c.d.Store(int64(d)) }

// setSweeper gives the sweeper another clock and interval; before the
// first key, or once the sweeper has been stopped.
func (s *Store[P, S]) setSweeper(clock func() time.Duration, interval time.Duration) {
	s.sw.clock, s.sw.interval = clock, interval
}

// setSweepAt sets the size at which every shard's growth starts a pass.
func (s *Store[P, S]) setSweepAt(n int) {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.sweepAt = n
		sh.mu.Unlock()
	}
}

// beginAll starts a pass in every shard that has none under way, as the
// sweeper would (calls not helping).
func (s *Store[P, S]) beginAll() {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		if sh.old.m == nil {
			sh.begin()
		}
		sh.mu.Unlock()
	}
}

// passes returns the number of shards with a pass under way.
func (s *Store[P, S]) passes() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		if sh.old.m != nil {
			n++
		}
		sh.mu.Unlock()
	}
	return n
}

// liveKeys returns the keys whose state expires after nowMs, sorted.
func (s *Store[P, S]) liveKeys(nowMs int64) []string {
	var keys []string
	live := func(g *generation[P, S], i int) {
		if expiry(&g.at(i).State) > nowMs {
			keys = append(keys, string(g.name(i)))
		}
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for j := range sh.cur.n {
			live(&sh.cur, j)
		}
		for j := sh.cursor; j < sh.old.n; j++ { // those before are gone
			live(&sh.old, j)
		}
		sh.mu.Unlock()
	}
	slices.Sort(keys)
	return keys
}

// sweepOnce runs one round of the sweeper by hand.
func (s *Store[P, S]) sweepOnce() { sweepRound(weak.Make(s), nil) }

// get looks k up as a call at nowMs does, under the shard's lock.
func (s *Store[P, S]) get(k Key[P], nowMs int64) (st S, ok bool) {
	h := s.Hash(k)
	sh := s.Shard(s.Index(h))
	sh.Lock()
	defer sh.Unlock()
	if e := sh.Get(k, h, nowMs); e != nil {
		return e.State, true
	}
	return st, false
}

// put stores st for k as a call at nowMs does, under the shard's lock.
func (s *Store[P, S]) put(k Key[P], nowMs int64, st S) {
	h := s.Hash(k)
	sh := s.Shard(s.Index(h))
	sh.Lock()
	defer sh.Unlock()
	sh.Put(k, h, sh.Get(k, h, nowMs), st)
}

// touchAll makes a call at nowMs in every shard, on a key none holds.
func (s *Store[P, S]) touchAll(nowMs int64) {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.Lock()
		var none Key[P]
		sh.Get(none, s.Hash(none), nowMs)
		sh.Unlock()
	}
}

// fill puts n keys "k0"... at nowMs, key i expiring at exp(i); it returns
// their names.
func fill(s *Store[[0]int64, expiresAt], n int, nowMs int64, exp func(i int) int64) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
		s.put(key(keys[i]), nowMs, expiresAt{exp(i)})
	}
	return keys
}

// isDone reports whether the sweeper's goroutine has ended (or will never
// be launched).
func (w *sweeper) isDone() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}
