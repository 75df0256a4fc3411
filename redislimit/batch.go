package redislimit

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// batcher coalesces the script calls of concurrent callers into
// pipelines (see the package doc, "Batching"). Calls are queued per lane:
// a single Redis is one lane, a Cluster has one per master and a Ring one
// per shard, so that a slow server holds back only the calls bound for
// it.
//
// A call that finds fewer than flights batches of its lane in flight is
// sent at once, by its caller, as without batching. Calls that arrive
// while flights are in flight queue, and the flight that lands first
// takes the queue (up to size calls) as its next batch. A flight goes on
// while calls are queued and fewer than flights others are in the air,
// or the others have been in the air for wait or longer; otherwise it
// ends. When the oldest queued call has waited for wait and every flight
// has been in the air that long (a slow reply, a connection that lost its
// packets), another flight takes the queue, up to maxFlights. Flights are
// goroutines, each sending its batches one after the other: none outlives
// the calls it sends (a Limiter needs no Close).
type batcher struct {
	rdb  redis.UniversalClient
	size int
	wait time.Duration
	// route names a key's lane: its server's client, or nil (one lane).
	route func(ctx context.Context, key string) (any, error)

	mu    sync.Mutex
	lanes map[any]*lane // the lanes with calls queued or in flight
	// spare is a lane forgotten whose timer will not run, kept for the
	// next lane, so that a lone call at low load allocates none.
	spare *lane
	// flown numbers the flights.
	flown uint64
}

// flights is how many batches a lane keeps in flight while calls are
// queued: with two, two callers at a time never wait for each other, and
// under load one batch gathers while the other is on the wire or in
// Redis. maxFlights is the most in flight at once, overdue ones
// included: more do not make a server that does not answer answer.
const (
	flights    = 2
	maxFlights = 4
)

// lane is the queue of one server's calls and its flights.
type lane struct {
	id    any
	queue []*waiter
	air   []flight    // in flight, the lone calls sent by their callers included
	timer *time.Timer // armed while calls are queued: at the oldest's wait
	armed bool
}

// A flight is a batch (or a lone call) in the air since start; id tells
// it from the others.
type flight struct {
	id    uint64
	start time.Time
}

// A waiter is one queued call; state is guarded by the batcher's mu.
type waiter struct {
	ctx   context.Context
	cmd   onceCmd
	since time.Time
	// done receives once cmd holds its reply or error: its batch sends,
	// never waiting (it holds one), the call receives.
	done  chan struct{}
	state waitState
}

// waiters holds the waiters of calls that have received their replies,
// for the calls to come: nothing refers to one then (its batch took it
// off the queue, sent it and is done with it). A waiter whose call
// returned before its reply (its context ended) is left to the garbage
// collector: its batch may still send it, or answer it.
var waiters = sync.Pool{New: func() any { return &waiter{done: make(chan struct{}, 1)} }}

// answered returns the error of w's call, which has its reply, and w to
// the waiters.
func (w *waiter) answered() error {
	err := w.cmd.Err()
	w.ctx, w.cmd = nil, onceCmd{}
	waiters.Put(w)
	return err
}

type waitState uint8

const (
	queued  waitState = iota
	taken             // in a batch: its outcome is the batch's
	dropped           // left the queue unsent: its context ended first
)

// newBatcher is the batcher of rdb with o's settings, nil when batching
// is off or rdb is of a type whose pipelines are not known never to
// re-send a NoRetry command (see the package doc).
func newBatcher(rdb redis.UniversalClient, o Options) *batcher {
	if o.NoBatching {
		return nil
	}
	b := &batcher{rdb: rdb, size: o.BatchSize, wait: o.BatchWait, lanes: map[any]*lane{}}
	switch c := rdb.(type) {
	case *redis.Client:
		b.route = func(context.Context, string) (any, error) { return nil, nil }
	case *redis.ClusterClient:
		b.route = func(ctx context.Context, key string) (any, error) { return c.MasterForKey(ctx, key) }
	case *redis.Ring:
		b.route = func(_ context.Context, key string) (any, error) { return c.GetShardClientForKey(key) }
	default:
		return nil
	}
	return b
}

// errNotSent is matched by the error of a call that left its lane's
// queue before a batch took it: its context ended first. It was not
// sent, and never will be.
var errNotSent = errors.New("not sent: the context ended while the call waited for its batch")

// notSent is a call's error when it was not sent: errNotSent, and the
// context's error.
type notSent struct{ cause error }

func (e notSent) Error() string   { return errNotSent.Error() + ": " + e.cause.Error() }
func (e notSent) Unwrap() []error { return []error{errNotSent, e.cause} }

// do runs cmd, a call whose first key is key, and returns its error once
// it has its reply, or at once when ctx ends first: notSent while it was
// still queued (it is not sent), ctx's error once a batch has taken it
// (its outcome is unknown).
func (b *batcher) do(ctx context.Context, key string, cmd onceCmd) error {
	id, err := b.route(ctx, key)
	if err != nil { // no server known for the key: go-redis says why
		return b.rdb.Process(ctx, cmd)
	}
	now := time.Now()
	b.mu.Lock()
	ln := b.lane(id)
	if len(ln.air) < flights { // room in the air: sent at once, by its caller
		f := b.launch(ln, now)
		b.mu.Unlock()
		defer b.hand(ln, f) // even if a hook panics
		return b.rdb.Process(ctx, cmd)
	}
	w := waiters.Get().(*waiter)
	w.ctx, w.cmd, w.since, w.state = ctx, cmd, now, queued
	ln.queue = append(ln.queue, w)
	b.arm(ln)
	b.mu.Unlock()
	return b.await(w)
}

// lane is the lane of id: the lane held, or else the spare one or a new
// one, then held; b.mu is held.
func (b *batcher) lane(id any) *lane {
	if ln := b.lanes[id]; ln != nil {
		return ln
	}
	ln := b.spare
	if ln == nil {
		ln = &lane{}
	}
	b.spare, ln.id = nil, id
	b.lanes[id] = ln
	return ln
}

// launch puts a new flight of ln in the air since now and returns its
// id; b.mu is held.
func (b *batcher) launch(ln *lane, now time.Time) uint64 {
	b.flown++
	ln.air = append(ln.air, flight{id: b.flown, start: now})
	return b.flown
}

// await waits for w's reply, or for its context to end: then w leaves
// the queue unsent (notSent) if it is still there, and otherwise returns
// the context's error (a batch took it: its outcome is unknown).
func (b *batcher) await(w *waiter) error {
	select {
	case <-w.done:
		return w.answered()
	case <-w.ctx.Done():
	}
	b.mu.Lock()
	state := w.state
	if state == queued {
		w.state = dropped
	}
	b.mu.Unlock()
	if state != taken {
		return notSent{w.ctx.Err()}
	}
	select {
	case <-w.done: // the reply came as the context ended
		return w.answered()
	default:
		return w.ctx.Err()
	}
}

// hand lands f, a lone call's flight, and hands the next batch it gives,
// if any, to a goroutine of its own.
func (b *batcher) hand(ln *lane, f uint64) {
	if batch := b.landed(ln, f); batch != nil {
		go b.fly(ln, f, batch)
	}
}

// fly sends batch, and then the batches landed gives f, until it gives
// none.
func (b *batcher) fly(ln *lane, f uint64, batch []*waiter) {
	for batch != nil {
		b.exec(batch)
		batch = b.landed(ln, f)
	}
}

// landed is called as f lands. It returns the lane's next batch, f flying
// again, when calls are queued and fewer than flights others are in the
// air, or every other one has been in the air for wait or longer;
// otherwise f ends (and the lane is forgotten when it has nothing queued
// or in flight).
func (b *batcher) landed(ln *lane, f uint64) []*waiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	ln.air = slices.DeleteFunc(ln.air, func(g flight) bool { return g.id == f })
	var batch []*waiter
	if len(ln.air) < flights || b.overdue(ln, now) {
		if batch = b.take(ln); batch != nil {
			ln.air = append(ln.air, flight{id: f, start: now})
		}
	}
	if len(ln.air) == 0 {
		b.forget(ln)
	} else {
		b.arm(ln)
	}
	return batch
}

// overdue reports whether every flight of ln has been in the air for
// wait or longer at now (true with none); b.mu is held.
func (b *batcher) overdue(ln *lane, now time.Time) bool {
	for _, g := range ln.air {
		if now.Sub(g.start) < b.wait {
			return false
		}
	}
	return true
}

// arm sets ln's timer, unless it is set, for the time its oldest queued
// call will have waited for wait and every flight will have been in the
// air that long; not while maxFlights are in the air (a landing takes the
// queue then). b.mu is held.
func (b *batcher) arm(ln *lane) {
	for len(ln.queue) > 0 && ln.queue[0].state != queued {
		ln.queue[0] = nil
		ln.queue = ln.queue[1:]
	}
	if ln.armed || len(ln.queue) == 0 || len(ln.air) >= maxFlights {
		return
	}
	at := ln.queue[0].since
	for _, g := range ln.air {
		if g.start.After(at) {
			at = g.start
		}
	}
	d := time.Until(at.Add(b.wait))
	if ln.timer == nil {
		ln.timer = time.AfterFunc(d, func() { b.late(ln) })
	} else {
		ln.timer.Reset(d)
	}
	ln.armed = true
}

// late runs when ln's oldest queued call may have waited for wait: if it
// has, and every flight has been in the air that long, another flight
// takes the queue. The timer is set again for the calls still queued.
func (b *batcher) late(ln *lane) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ln.armed = false
	if b.lanes[ln.id] != ln {
		return // forgotten: nothing queued, nothing in flight
	}
	now := time.Now()
	due := len(ln.queue) > 0 && now.Sub(ln.queue[0].since) >= b.wait
	if due && len(ln.air) < maxFlights && b.overdue(ln, now) {
		if batch := b.take(ln); batch != nil {
			go b.fly(ln, b.launch(ln, now), batch)
		}
	}
	b.arm(ln)
}

// take removes from ln's queue its next batch: up to size calls still
// wanted (a call whose context has ended is dropped, unsent); nil when
// none is. b.mu is held.
func (b *batcher) take(ln *lane) []*waiter {
	if len(ln.queue) == 0 {
		return nil
	}
	batch := make([]*waiter, 0, min(b.size, len(ln.queue)))
	i := 0
	for ; i < len(ln.queue) && len(batch) < b.size; i++ {
		w := ln.queue[i]
		switch {
		case w.state != queued:
		case w.ctx.Err() != nil:
			w.state = dropped
		default:
			w.state = taken
			batch = append(batch, w)
		}
	}
	n := copy(ln.queue, ln.queue[i:])
	clear(ln.queue[n:])
	ln.queue = ln.queue[:n]
	if len(batch) == 0 {
		return nil
	}
	return batch
}

// forget drops ln, which has nothing in flight and nothing wanted queued
// (a queued call whose context ended is dropped), and keeps it as the
// spare lane when its timer will not run (late of a forgotten lane does
// nothing, but it must not find the lane serving again); b.mu is held.
func (b *batcher) forget(ln *lane) {
	for _, w := range ln.queue {
		if w.state == queued {
			w.state = dropped
		}
	}
	clear(ln.queue)
	ln.queue = ln.queue[:0]
	idle := !ln.armed || ln.timer.Stop() // armed: late runs, unless stopped now
	ln.armed = false
	delete(b.lanes, ln.id)
	if idle {
		ln.id, b.spare = nil, ln
	}
}

// exec sends batch as one pipeline, under a context whose deadline is the
// latest of its calls' (none if one has none), and wakes its callers.
// go-redis does not re-send a pipeline that holds a NoRetry command
// (every script call is one); it follows MOVED and ASK per command.
func (b *batcher) exec(batch []*waiter) {
	ctx, cancel := batchContext(batch)
	defer cancel()
	pipe := b.rdb.Pipeline()
	for _, w := range batch {
		_ = pipe.Process(ctx, w.cmd)
	}
	_, _ = pipe.Exec(ctx) // each command holds its own reply or error
	for _, w := range batch {
		w.done <- struct{}{}
	}
}

// batchContext is a context whose deadline is the latest of batch's
// calls' contexts, or none when one of them has none. It carries none of
// their values: the batch is no one caller's.
func batchContext(batch []*waiter) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, w := range batch {
		d, ok := w.ctx.Deadline()
		if !ok {
			return context.WithCancel(context.Background())
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(context.Background(), latest)
}
