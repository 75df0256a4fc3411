// Package keyed holds a value per decision key: what a request is decided
// by, its limit and key or its policy and identity values. Packages
// fallback, lease and denials keep their per-key state in it, and
// answer from a decision held for a key as of a later time (Aged). It
// knows only the contract, package limitspec.
package keyed

import (
	"context"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitspec/limitspec"
)

// shards is the number of locks a Map spreads its keys over.
const shards = 64

// Map holds a *V per decision key, at most about max of them, in shards
// each under its own lock. A full shard forgets one of its values at
// random to make room (after calling forget with it, under the lock).
// The zero Map is not usable: call New.
type Map[V any] struct {
	seed     maphash.Seed
	perShard int
	forget   func(*V)
	shards   [shards]shard[V]
}

type shard[V any] struct {
	mu sync.Mutex
	m  map[Key]*V
	// forgotten counts the values forgotten to make room since m was
	// made: a map whose keys come and go keeps growing its table (each
	// deleted key leaves a tombstone), so that a full shard rebuilds m
	// after as many as it holds, and its memory follows what it holds.
	forgotten int
}

// Key names what a request is decided by: its limit (a comparable
// value) and key, or its policy and identity values.
type Key struct {
	key    string
	limit  limitspec.Limit
	policy *limitspec.Policy
}

// KeyOf is req's decision key.
func KeyOf(req limitspec.Request) Key {
	if req.Policy == nil {
		return Key{key: req.Key, limit: req.Limit}
	}
	ids := make([]string, 0, len(req.IDs))
	for _, name := range req.Policy.Identities() {
		ids = append(ids, name+"="+req.IDs[name])
	}
	slices.Sort(ids)
	return Key{key: strings.Join(ids, "\x00"), policy: req.Policy}
}

// New returns a Map of at most about max values (max ≥ 1); forget, if not
// nil, is called with each value the Map forgets to make room.
func New[V any](max int, forget func(*V)) *Map[V] {
	m := &Map[V]{seed: maphash.MakeSeed(), perShard: max/shards + 1, forget: forget}
	for i := range m.shards {
		m.shards[i].m = map[Key]*V{}
	}
	return m
}

// With calls f with req's value under its shard's lock: nil when there
// is none and create is false, a new zero value when create is true.
func (m *Map[V]) With(req limitspec.Request, create bool, f func(*V)) {
	k := KeyOf(req)
	s := &m.shards[maphash.String(m.seed, k.key)%shards]
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.m[k]
	if v == nil && create {
		if len(s.m) >= m.perShard {
			m.makeRoom(s)
		}
		v = new(V)
		s.m[k] = v
	}
	f(v)
}

// makeRoom forgets one of the values of s, a full shard whose lock is
// held, at random, and rebuilds its map once it has forgotten as many
// as it holds.
func (m *Map[V]) makeRoom(s *shard[V]) {
	for old, gone := range s.m {
		if m.forget != nil {
			m.forget(gone)
		}
		delete(s.m, old)
		break
	}
	if s.forgotten++; s.forgotten >= m.perShard {
		fresh := make(map[Key]*V, m.perShard)
		for k, v := range s.m {
			fresh[k] = v
		}
		s.m, s.forgotten = fresh, 0
	}
}

// Delete forgets req's value, calling forget with it.
func (m *Map[V]) Delete(req limitspec.Request) {
	k := KeyOf(req)
	s := &m.shards[maphash.String(m.seed, k.key)%shards]
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.m[k]; v != nil {
		if m.forget != nil {
			m.forget(v)
		}
		delete(s.m, k)
	}
}

// ResetThrough is the Reset of a limiter in front of primary that keeps
// m (package denials, lease): it counts the reset in resets (so that a
// value decided across it is not kept), forgets req's value and resets
// req on primary. A primary that does not implement limitspec.Resetter
// is an error matching limitspec.ErrBadInput, naming who, and nothing
// changes.
func (m *Map[V]) ResetThrough(ctx context.Context, primary limitspec.Limiter, req limitspec.Request, who string, resets *atomic.Uint64) error {
	r, ok := primary.(limitspec.Resetter)
	if !ok {
		return &limitspec.InputError{Msg: who + ": the primary limiter has no reset"}
	}
	resets.Add(1)
	m.Delete(req)
	return r.Reset(ctx, req)
}

// Aged is the decision res as of since after it was made, if nothing
// else happened meanwhile: its RetryAfter, and each limit's RetryAfter
// and ResetAfter, shortened by since (never below 0; limitspec.Never
// stays), in a copy of its Limits. Nothing else changes.
func Aged(res limitspec.Result, since time.Duration) limitspec.Result {
	if res.RetryAfter != limitspec.Never {
		res.RetryAfter = max(res.RetryAfter-since, 0)
	}
	res.Limits = slices.Clone(res.Limits)
	for i := range res.Limits {
		lr := &res.Limits[i]
		if lr.RetryAfter != limitspec.Never {
			lr.RetryAfter = max(lr.RetryAfter-since, 0)
		}
		lr.ResetAfter = max(lr.ResetAfter-since, 0)
	}
	return res
}

// Len is the number of values held (summed over the shards, each under
// its lock in turn).
func (m *Map[V]) Len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}
