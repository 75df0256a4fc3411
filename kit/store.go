package kit

import (
	"bytes"
	"hash/maphash"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
	"weak"
)

// Shards is the number of independently locked parts of a store.
const Shards = 64

// minSweep is the size below which a shard's growth alone never starts a
// pass.
const minSweep = 1024

// callBatch is the most entries a call moves while a pass is under way.
const callBatch = 8

// sweepBatch is the most entries the sweeper moves per hold of a lock.
const sweepBatch = 64

// sampleSize is the number of entries the sweeper looks at to decide
// whether a shard is worth a pass.
const sampleSize = 32

// sweepInterval is the time between two rounds of the sweeper.
const sweepInterval = time.Second

// sweepBurst is about the longest the sweeper works before it sleeps for
// sweepRest, so that it takes at most a tenth of a CPU. A sweeper busy for
// a whole round would keep a thread running beside the callers', and on a
// machine with few CPUs the OS would now and then run it on a caller's
// CPU, holding the caller for a time slice: milliseconds.
const sweepBurst = 100 * time.Microsecond

// sweepRest is how long the sweeper sleeps after each burst.
const sweepRest = time.Millisecond

// Expirer is implemented by the pointer to every state a Store keeps:
// Expires is when the last of the state's Redis keys expires, on the
// caller's clock (0: the state is absent).
type Expirer interface {
	Expires() int64
}

// Key names a state in a Store: Name, the name of the call's state (see
// Call.Key), and Params, the parameters the state is measured in, those
// its Redis keys name. Two calls share a state exactly when their keys
// are equal, as they would share the state's Redis keys.
type Key[P comparable] struct {
	Name   string
	Params P
}

// HashKey is the hash of the key named name measured in params, under
// seed: what a Store's hash function, generated per algorithm, returns.
// The params are mixed in one by one (Mix), with no string built; the
// generated function mixes its params in line, with no loop.
func HashKey(seed maphash.Seed, name string, params ...int64) uint64 {
	h := maphash.String(seed, name)
	for _, p := range params {
		h = Mix(h, p)
	}
	return h
}

// Mix is the hash h with the parameter p mixed in (see HashKey).
func Mix(h uint64, p int64) uint64 {
	h = (h ^ uint64(p)) * 0x9e3779b97f4a7c15
	return h ^ h>>32
}

// Store keeps per-key state in shards, each behind its own mutex. A key
// is found by its hash (Hash), computed once per call, which picks its
// shard and finds its position in the shard; the key kept there is
// compared in full, so that two keys of one hash never share a state.
//
// Expired keys are reclaimed by passes, as Redis rehashes a dictionary: a
// pass starts a fresh generation for new keys and moves the old
// generation's entries into it a batch at a time, in the order they came,
// dropping those that have expired; lookups try both generations, and once
// the old one has been walked it is dropped, so that a shard's memory
// follows its live keys down as well as up. No call does work that grows
// with the number of keys.
//
// The sweeper, a goroutine started with the first key, starts a pass where
// a sample of keys has expired and moves its entries, a batch at a time,
// letting go of the lock as soon as a call waits for it, yielding its CPU
// after each batch, and resting after each burst of batches (see
// sweepBurst). Calls start a pass when a shard has doubled since the
// last, and move a few of its entries each; they help with the sweeper's
// passes only when the shard doubles during one or the sweeper has been
// stopped.
type Store[P comparable, S any] struct {
	seed   maphash.Seed
	hash   func(maphash.Seed, Key[P]) uint64
	sw     *sweeper
	shards [Shards]Shard[P, S]
}

// Shard is one part of a store. Its fields but wanted are guarded by mu.
type Shard[P comparable, S any] struct {
	mu      sync.Mutex
	wanted  atomic.Int32     // calls waiting for mu; the sweeper lets go for them
	cur     generation[P, S] // where new keys go
	old     generation[P, S] // walked into cur by a pass; m is nil between passes
	cursor  int              // the position in old the pass has reached
	kept    int              // entries the pass under way has kept
	helped  bool             // whether calls move entries of the pass under way
	sweepAt int              // len(cur.m) at which calls start or help a pass
	now     int64            // nowMs of the latest call, -1 before any
	seenNow int64            // now when the sweeper last looked, -1 before
	seenAt  time.Duration    // the sweeper's clock when it first saw seenNow
	store   *Store[P, S]     // for the hash of the entries a pass moves
	sw      *sweeper
}

// Entry is a key's state, where a generation keeps it with the key's
// parameters; the key's name is in its chunk's names. An entry that Get
// or Put returns stays where it is until the shard is unlocked.
type Entry[P comparable, S any] struct {
	State  S
	params P
	off    uint32 // where the key's name starts in its chunk's names
	size   uint32 // the length of the key's name
}

// chunkSize is the number of entries in each chunk of a generation.
const chunkSize = 256

// generation holds entries in chunks, in the order their keys came, so
// that adding one never moves the others and a pass walks them by
// position; m maps the top 32 bits of each key's hash (the low ones pick
// its shard) to its position, and more the keys whose top bits an
// earlier key of the generation has (few: one in 2^32 pairs). Entries are
// values in their chunk rather than objects of their own, the names of a
// chunk's keys are bytes one after another in one slice, and the maps
// hold positions rather than keys, so that a new key allocates nothing
// but, now and then, a chunk, its names or map growth, a key is kept
// once, and the garbage collector has a few large objects to scan rather
// than one per key (none at all in a chunk of states without pointers).
// Positions are int32s: a shard never holds 2^31 keys (they would take
// terabytes).
type generation[P comparable, S any] struct {
	m      map[uint32]int32
	more   map[Key[P]]int32
	chunks []*[chunkSize]Entry[P, S]
	names  [][]byte // per chunk, the names of its entries' keys
	n      int      // entries added
}

func newGeneration[P comparable, S any]() generation[P, S] {
	return generation[P, S]{m: map[uint32]int32{}}
}

// at returns the entry at position i.
func (g *generation[P, S]) at(i int) *Entry[P, S] {
	return &g.chunks[uint(i)/chunkSize][uint(i)%chunkSize]
}

// name returns the name of the key of the entry at position i, in the
// chunk's names: to be copied before they are let go of.
func (g *generation[P, S]) name(i int) []byte {
	e := g.at(i)
	return g.names[uint(i)/chunkSize][e.off : e.off+e.size]
}

// find returns the entry of k, whose hash is h, nil when the generation
// has none at a position from on (those before have been moved on).
func (g *generation[P, S]) find(k Key[P], h uint64, from int) *Entry[P, S] {
	if i, ok := g.m[top(h)]; ok && int(i) >= from {
		if e := g.at(int(i)); e.params == k.Params && string(g.names[uint(i)/chunkSize][e.off:e.off+e.size]) == k.Name {
			return e
		}
	}
	if g.more == nil {
		return nil
	}
	if i, ok := g.more[k]; ok && int(i) >= from {
		return g.at(int(i))
	}
	return nil
}

// top is the part of a hash that finds a key in its shard.
func top(h uint64) uint32 { return uint32(h >> 32) }

// add adds k, whose hash is h and which the generation does not hold,
// with st, and returns its entry. It copies k's name: k may be the
// caller's, or a view of another generation's names.
func (g *generation[P, S]) add(k Key[P], h uint64, st S) *Entry[P, S] {
	c := g.n / chunkSize
	if g.n%chunkSize == 0 {
		g.chunks = append(g.chunks, new([chunkSize]Entry[P, S]))
		g.names = append(g.names, nil)
	}
	if _, taken := g.m[top(h)]; !taken {
		g.m[top(h)] = int32(g.n)
	} else {
		if g.more == nil {
			g.more = map[Key[P]]int32{}
		}
		g.more[Key[P]{Name: strings.Clone(k.Name), Params: k.Params}] = int32(g.n)
	}
	names := g.names[c]
	e := g.at(g.n)
	e.State, e.params, e.off, e.size = st, k.Params, uint32(len(names)), uint32(len(k.Name))
	names = append(names, k.Name...)
	if g.n%chunkSize == chunkSize-1 {
		names = bytes.Clone(names) // the chunk is full: no room to spare
	}
	g.names[c] = names
	g.n++
	return e
}

// clear empties the entry at i, which the maps still hold the position
// of, and lets go of its chunk once i is the chunk's last; a pass clears
// the entries in order.
func (g *generation[P, S]) clear(i int) {
	c := g.chunks[i/chunkSize]
	c[i%chunkSize] = Entry[P, S]{}
	if i%chunkSize == chunkSize-1 {
		g.chunks[i/chunkSize], g.names[i/chunkSize] = nil, nil
	}
}

// NewStore returns an empty store with its sweeper, whose keys hash by
// hash (HashKey of the key's name and parameters, under the seed it is
// given), which must not keep the key: its name may be a view of the
// store's own bytes.
func NewStore[P comparable, S any](hash func(maphash.Seed, Key[P]) uint64) *Store[P, S] {
	s := &Store[P, S]{seed: maphash.MakeSeed(), hash: hash, sw: newSweeper()}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.cur = newGeneration[P, S]()
		sh.sweepAt = minSweep
		sh.now, sh.seenNow = -1, -1
		sh.store, sh.sw = s, s.sw
	}
	// The goroutine must not refer to s: it holds wp and w alone.
	wp, w := weak.Make(s), s.sw
	w.launch = func() { sweepLoop(wp, w) }
	runtime.AddCleanup(s, (*sweeper).signal, w)
	return s
}

// Hash is the hash of k, by which the store finds it: a call computes it
// once, for Index, Get and Put. The generated code calls the store's hash
// function itself, under Seed, which spares a call through a func value.
func (s *Store[P, S]) Hash(k Key[P]) uint64 { return s.hash(s.seed, k) }

// Seed is the seed of the store's hash function.
func (s *Store[P, S]) Seed() maphash.Seed { return s.seed }

// Index is the index of the shard holding the key of hash h.
func (s *Store[P, S]) Index(h uint64) int { return int(h % Shards) }

// Shard returns the shard at index i; the caller locks it.
func (s *Store[P, S]) Shard(i int) *Shard[P, S] { return &s.shards[i] }

// Lock locks the shard for a call. A call that has to wait says so, and
// the sweeper, if it holds the lock, lets go after the entry at hand.
func (sh *Shard[P, S]) Lock() {
	if !sh.mu.TryLock() {
		sh.wait()
	}
}

// wait locks the shard for a call that found it locked.
func (sh *Shard[P, S]) wait() {
	sh.wanted.Add(1)
	sh.mu.Lock()
	sh.wanted.Add(-1)
}

// Unlock unlocks the shard.
func (sh *Shard[P, S]) Unlock() { sh.mu.Unlock() }

// Get returns the entry of k, whose hash is h, nil when it has none. It
// first records nowMs as the shard's time and reclaims a bounded number
// of the keys expired by nowMs. Once the shard has doubled since the
// last pass, it starts a pass, or helps the sweeper's: it moves at most
// callBatch entries of a pass that calls help, or of any pass once the
// sweeper has stopped. The sweeper moves the entries of the others.
func (sh *Shard[P, S]) Get(k Key[P], h uint64, nowMs int64) *Entry[P, S] {
	sh.now = nowMs
	if sh.old.m == nil && len(sh.cur.m) < sh.sweepAt {
		return sh.cur.find(k, h, 0) // no pass under way, none due
	}
	return sh.getSweeping(k, h, nowMs)
}

// getSweeping is Get once a pass is under way or due.
func (sh *Shard[P, S]) getSweeping(k Key[P], h uint64, nowMs int64) *Entry[P, S] {
	if len(sh.cur.m) >= sh.sweepAt {
		if sh.old.m == nil {
			sh.begin()
		}
		sh.helped = true
	}
	if sh.old.m != nil && (sh.helped || sh.sw.stopped.Load()) {
		sh.migrate(callBatch, nowMs, false)
	}
	return sh.find(k, h)
}

// find returns the entry of k, whose hash is h, nil when it has none.
func (sh *Shard[P, S]) find(k Key[P], h uint64) *Entry[P, S] {
	if e := sh.cur.find(k, h, 0); e != nil {
		return e
	}
	if sh.old.m == nil {
		return nil
	}
	return sh.old.find(k, h, sh.cursor)
}

// Reset forgets k's state: its entry, if any, holds the zero state,
// which reads as absent (expired at 0) and is reclaimed as expired.
func (s *Store[P, S]) Reset(k Key[P]) {
	h := s.Hash(k)
	sh := s.Shard(s.Index(h))
	sh.Lock()
	defer sh.Unlock()
	if e := sh.find(k, h); e != nil {
		var zero S
		e.State = zero
	}
}

// Put stores st for k, whose hash is h: in e, the key's entry from Get,
// or in a new entry when e is nil, which it returns. A new entry keeps a
// copy of k's name, so that the store holds none of the caller's memory
// (such as a larger string the name was cut from).
func (sh *Shard[P, S]) Put(k Key[P], h uint64, e *Entry[P, S], st S) *Entry[P, S] {
	if e != nil {
		e.State = st
		return e
	}
	return sh.add(k, h, st)
}

// add adds k, whose hash is h, with st (see Put).
func (sh *Shard[P, S]) add(k Key[P], h uint64, st S) *Entry[P, S] {
	e := sh.cur.add(k, h, st)
	sh.sw.start()
	return e
}

// begin starts a pass: the keys become the old generation, new keys go
// to a fresh one.
func (sh *Shard[P, S]) begin() {
	sh.old, sh.cur = sh.cur, newGeneration[P, S]()
	sh.cursor, sh.kept, sh.helped = 0, 0, false
}

// migrate moves up to n entries from the old generation to the current
// one, dropping those expired by nowMs, and ends the pass when it has
// walked them all. An expired entry costs no lookup: it is left in old.m,
// behind the cursor, until old is dropped. With yield, it stops after the
// first entry once a call waits for the lock.
func (sh *Shard[P, S]) migrate(n int, nowMs int64, yield bool) {
	for i := 0; i < n && sh.cursor < sh.old.n; i++ {
		if yield && i > 0 && sh.wanted.Load() > 0 {
			break
		}
		if e := sh.old.at(sh.cursor); expiry(&e.State) > nowMs {
			// The key's name is a view of old's names, which add copies.
			name := sh.old.name(sh.cursor)
			k := Key[P]{Name: unsafe.String(unsafe.SliceData(name), len(name)), Params: e.params}
			sh.cur.add(k, sh.store.Hash(k), e.State)
			sh.kept++
		}
		sh.old.clear(sh.cursor)
		sh.cursor++
	}
	if sh.cursor == sh.old.n {
		// The next pass comes when the keys that arrived during this
		// one and as many again as it kept have been added.
		sh.old, sh.cursor = generation[P, S]{}, 0
		sh.sweepAt = max(len(sh.cur.m)+sh.kept, minSweep)
	}
}

// due reports whether a pass would reclaim enough of the keys expired by
// nowMs to be worth its copying: a quarter of a random sample of them.
func (sh *Shard[P, S]) due(nowMs int64) bool {
	n := sh.cur.n
	if n == 0 {
		return false
	}
	expired := 0
	for range sampleSize {
		if expiry(&sh.cur.at(rand.IntN(n)).State) <= nowMs {
			expired++
		}
	}
	return 4*expired >= sampleSize
}

// estimate returns the shard's time as the sweeper reckons it at its
// clock's reading at: the nowMs of the latest call, advanced by the time
// elapsed since the sweeper first saw that nowMs (so never past the
// caller's clock, if that runs at least as fast as the sweeper's). It is
// false before any call.
func (sh *Shard[P, S]) estimate(at time.Duration) (int64, bool) {
	if sh.now < 0 {
		return 0, false
	}
	if sh.now != sh.seenNow {
		sh.seenNow, sh.seenAt = sh.now, at
	}
	return sh.seenNow + int64((at-sh.seenAt)/time.Millisecond), true
}

// sweepStep starts a pass when begin allows and one is due at the shard's
// estimated time, and moves up to sweepBatch entries of a pass under way.
// It reports whether the shard is left with no pass under way.
func (sh *Shard[P, S]) sweepStep(clock func() time.Duration, begin bool) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now, ok := sh.estimate(clock())
	if !ok {
		return true
	}
	if begin && sh.old.m == nil && sh.due(now) {
		sh.begin()
	}
	if sh.old.m != nil {
		sh.migrate(sweepBatch, now, true)
	}
	return sh.old.m == nil
}

func expiry[S any](st *S) int64 {
	if x, ok := any(st).(Expirer); ok {
		return x.Expires()
	}
	return 0
}

// Len returns the number of keys held, expired or not.
func (s *Store[P, S]) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += sh.cur.n + sh.old.n - sh.cursor
		sh.mu.Unlock()
	}
	return n
}

// StopSweeper stops the sweeper of s and waits for it to end; s may be
// nil. The store goes on as before and reclaims expired keys by the
// nowMs of its calls alone.
func (s *Store[P, S]) StopSweeper() {
	if s != nil {
		s.sw.halt()
	}
}

// sweeper is the background goroutine of a store. It refers to the store
// only by a weak pointer, so that it never keeps it alive, and it ends
// when the store is collected or when halted.
type sweeper struct {
	started  atomic.Bool // launched, or never to be
	mu       sync.Mutex
	stopped  atomic.Bool
	stop     chan struct{} // closed to end the goroutine
	done     chan struct{} // closed when the goroutine has ended
	launch   func()        // the goroutine's body
	interval time.Duration
	clock    func() time.Duration // monotonic
}

func newSweeper() *sweeper {
	start := time.Now()
	return &sweeper{
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		interval: sweepInterval,
		clock:    func() time.Duration { return time.Since(start) },
	}
}

// start launches the goroutine, unless it has been launched or halted.
func (w *sweeper) start() {
	if w.started.Load() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started.Load() {
		w.started.Store(true)
		go w.launch()
	}
}

// signal tells the goroutine to end, without waiting for it.
func (w *sweeper) signal() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped.Load() {
		return
	}
	w.stopped.Store(true)
	close(w.stop)
	if !w.started.Load() {
		w.started.Store(true) // never to be launched
		close(w.done)
	}
}

// halt ends the goroutine and waits until it has ended.
func (w *sweeper) halt() {
	w.signal()
	<-w.done
}

// sweepLoop is the sweeper's goroutine: a round every interval, until
// stopped or until the store has been collected.
func sweepLoop[P comparable, S any](wp weak.Pointer[Store[P, S]], w *sweeper) {
	defer close(w.done)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		if !sweepRound(wp, w.stop) {
			return
		}
	}
}

// sweepRound runs one round over the store wp points to: it starts the
// passes that are due and runs every pass under way to its end, a batch
// of one shard after a batch of the next, so that a call waiting for a
// shard's lock gets it before the sweeper comes back to that shard, and
// resting after each burst. It holds the store only during a batch, and
// returns false when the store has been collected or the sweeper stopped.
func sweepRound[P comparable, S any](wp weak.Pointer[Store[P, S]], stop <-chan struct{}) bool {
	var done [Shards]bool
	burst := time.Now()
	for first, busy := true, true; busy; first = false {
		busy = false
		for i := range done {
			if done[i] {
				continue
			}
			select {
			case <-stop:
				return false
			default:
			}
			s := wp.Value()
			if s == nil {
				return false
			}
			done[i] = s.shards[i].sweepStep(s.sw.clock, first)
			busy = busy || !done[i]
			// Goroutines waiting for a CPU run before the next batch,
			// and threads after a burst.
			runtime.Gosched()
			burst = rest(burst)
		}
	}
	return true
}

// rest sleeps for sweepRest once sweepBurst has passed since burst, the
// start of the burst under way, and returns the start of the next. It
// reads the process clock, not the sweeper's, which tests may hold still.
func rest(burst time.Time) time.Time {
	if time.Since(burst) < sweepBurst {
		return burst
	}
	time.Sleep(sweepRest)
	return time.Now()
}
