// Package redislimit decides rate limits on Redis: each call runs one of
// the Lua scripts generated from the spec, atomically, so that every
// process sharing the Redis shares the limit, and decides exactly as
// package goimpl does in process (the same vectors hold both).
//
//	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
//	lim, err := redislimit.New(ctx, rdb, redislimit.Options{})
//	...
//	res, err := lim.Allow(ctx, "alice", limitspec.GCRA{Burst: 20, Rate: 10, Period: time.Second})
//
// One Limiter per client decides any limit and any policy, per call:
// tenants on different plans share it. A limit is one script call; a
// policy too, by the script that decides any policy of the algorithms of
// one library, all or nothing; the calls of concurrent callers share
// round trips (see Batching). Limits of a user's spec
// (cmd/gen -spec) run the scripts of that spec's package, which registers
// them when it is imported.
//
// A Limiter runs on any go-redis v9 UniversalClient: a single Redis, a
// Sentinel failover client, a Cluster, a Ring. Every key of a limit's
// call shares one hash tag, the request's key; a policy over several
// identities (per IP and per user) may have its keys in several slots or
// shards, and is refused on a Cluster or a Ring (Check says so before any
// request).
//
// # Bound handles
//
// A service that decides by the same limit, or the same policy, call
// after call can bind it once:
//
//	logins, err := lim.Bind(limitspec.GCRA{Burst: 5, Rate: 1, Period: 10 * time.Second})
//	...
//	res, err := logins.Allow(ctx, user) // the limit's LimitResult
//
// Bind checks the limit as Limit checks a request's, with the same
// errors, and prepares its call: the script, its keys' names after the
// hash tag, and its parameters as go-redis sends them. A call then
// builds only the key, now_ms and cost, and its result holds the limit
// the handle was bound to. BindPolicy binds a policy (refusing, on a
// Cluster or a Ring, one whose keys may lie in several slots), and its
// LimitInto decides into a Result the caller reuses. A request to a
// handle names no limit or policy, or the bound one; its Key (or IDs),
// Cost, Now, Force and Inputs are taken as Limit takes them. A handle
// keeps every guarantee of its Limiter's Limit (batching, deadlines, at
// most once, NOSCRIPT, Functions, Cluster redirections, the error
// classes), and is safe for concurrent use.
//
// Limit prepares the call of the first 16 distinct limits (by value) and
// 16 policies (by pointer) it decides once too, and keeps them: a
// service that decides by a few plans prepares each once, whether it
// binds them or not. BenchmarkPrepare measures the work before a call
// reaches Redis (checking the request, building KEYS, ARGV and
// go-redis's command): 5 allocations for a gcra limit, by Limit or by a
// handle, and 10 for the ip_user policy of six limits; BenchmarkCall, a
// whole call one at a time on a local Redis, 15 allocations by Limit and
// 13 by a handle for gcra, go-redis's own included.
//
// # Errors and time
//
// Every call takes a context: its deadline bounds the whole call, reloads
// included. For that the client must be made with ContextTimeoutEnabled
// (go-redis otherwise waits for its ReadTimeout on a silent server); New
// refuses a client without it. Errors match one of
//
//   - limitspec.ErrBadInput: the key, identities, limit, policy, time or
//     cost are refused, with the message package goimpl gives; nothing
//     was written;
//   - limitspec.ErrBadState: a key holds a value the scripts did not
//     write (BADSTATE), or another Redis type (WRONGTYPE); nothing was
//     written;
//   - limitspec.ErrUnavailable: Redis could not be reached, refused to
//     run scripts (LOADING, READONLY, CLUSTERDOWN, ...) or did not answer
//     in time; the error also matches its cause (context.DeadlineExceeded,
//     a net.Error). A call is sent once (go-redis never re-sends it,
//     whatever its MaxRetries), and again only after a Cluster's answer
//     that it did not run it (TRYAGAIN or CLUSTERDOWN while a slot
//     moves), within ctx's deadline. A call whose reply
//     was lost (or did not come in time) may have been applied, once:
//     its error matches limitspec.ErrOutcomeUnknown too, unless it
//     carries a request id (Request.ID): such a call is sent again with
//     the same id while ctx's deadline leaves time, and the script
//     answers the retry with the first call's reply if that one was
//     charged (docs/semantics.md, "Request ids");
//   - limitspec.ErrMisconfigured: the server holds another version of a
//     Functions library this build uses (ErrOtherLibrary), or, with
//     Options.Functions, the client is of a type whose servers the limiter
//     cannot list to load the libraries on.
//
// A call that waits for its batch (see Batching) and whose context ends
// first returns at once with ErrUnavailable and the context's error: it
// was not sent, and never will be. One whose context ends while its
// batch is in flight returns at once too, with ErrOutcomeUnknown.
//
// Request.Now decides at an explicit time (tests); a zero Now decides at
// the caller's clock (time.Now, or Options.Now), or, with
// Options.ServerClock, at the Redis server's clock (the scripts' empty
// now_ms), which every process sharing a Redis agrees on.
//
// # Scripts and Functions
//
// Scripts run by EVALSHA. A server that does not know a script (after
// SCRIPT FLUSH, a restart, a failover to a replica that never ran it)
// answers NOSCRIPT, and the call sends the script with EVAL, which
// decides and caches it again: the decision is made once either way.
// With Options.Functions, calls run the Redis Functions libraries (Redis 7
// and later) by FCALL instead: the catalogue's, limitspec, and one per
// user's spec, named after its package. They are persisted and
// replicated with the data. New loads every library this build holds on
// every master that lacks it, and refuses a server holding another
// version of one (ErrOtherLibrary): that is a configuration to fix, and
// package fallback never decides around it. A server it could not reach
// then is checked at the first call that needs a library.
//
// # Batching
//
// The script calls of concurrent callers are coalesced into pipelines,
// so that under load one round trip, and one read and one write of the
// server's, decide many requests. Calls queue per server: a single Redis
// (or a Sentinel's master) has one queue, a Cluster one per master, a
// Ring one per shard, so that a slow server holds back only its own
// calls. A call is sent at once, by itself, while fewer than two batches
// of its server are in flight: a limiter at low load decides with the
// latency of one round trip, as without batching, and two callers never
// wait for each other. Calls that arrive while two are in flight queue,
// and the first batch to come back takes the queue (up to
// DefaultBatchSize, 64 calls) as its next pipeline: no timer delays a
// call, and a batch holds the calls that came during one round trip.
// When the oldest queued call has waited DefaultBatchWait (2 ms) and
// every batch in flight has been out that long (a slow reply, a
// connection that lost its packets), another batch takes the queue, up
// to four in flight, so that one stalled connection does not hold back
// the calls behind it for longer.
//
// Options.BatchSize and BatchWait set the size and the wait;
// Options.NoBatching sends every call by itself at once, on a connection of its own: the lowest latency
// while many calls overlap (no call waits for another's round trip, up
// to go-redis's PoolSize), at the cost of throughput. Batching is on by
// default: at low load it changes nothing (calls go at once, by
// themselves), and under load it is what lets one Redis decide more.
// BenchmarkThroughput, 64 goroutines on 10,000 keys through one Redis on
// the same 2 cores, decided 56,000 to 65,000 requests per second in
// batches (21 calls per pipeline on average) against 38,000 unbatched,
// the server spending 14 to 16 µs of CPU per decision instead of 24 (its
// reads and writes shared), the client 7 to 8 µs instead of 18, in two
// runs on a virtual machine that ran at about half the speed it had on
// an earlier day, when the same benchmark decided 110,000 to 119,000 in
// batches against 60,000 to 64,000 unbatched. With 8 goroutines (2.6
// calls per pipeline) batching gains less, the calls queued waiting for
// a round trip; with 2, none.
//
// Batching keeps each call's guarantees:
//
//   - deadlines: a call's context bounds it, whether it is queued, in
//     flight, or sent again (above, "Errors and time"). A batch is sent
//     under a context of its own, whose deadline is the latest of its
//     calls' (none if one has none) and which carries none of their
//     values: a go-redis hook (tracing) sees the pipeline, not its
//     callers.
//   - at most once: every script call is a NoRetry command, and go-redis
//     v9 re-sends no pipeline that holds one (on a single Redis, a Ring's
//     shards and a Cluster's nodes alike); it follows MOVED and ASK per
//     call, which run nothing. A call answered NOSCRIPT (or, with
//     Options.Functions, lacking its library), TRYAGAIN or CLUSTERDOWN is sent
//     again as a new call (at once or in a later batch), as it would be
//     unbatched.
//   - a lost reply: a connection that breaks fails every call of its
//     pipeline whose reply had not been read, each with ErrOutcomeUnknown
//     (the calls before the break may have run, those after it did not);
//     a call sent by itself loses only itself. A call with a request id
//     is sent again instead, as above.
//
// Batching applies to a *redis.Client, a *redis.ClusterClient and a
// *redis.Ring, whose pipelines were checked to never re-send a NoRetry
// command; another UniversalClient sends every call by itself. A
// Limiter holds no goroutine of its own: a batch is sent by a goroutine
// that ends once its server's queue is empty, and the queue's timer stops
// then, so there is nothing to close.
package redislimit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/internal/refusal"
	"github.com/limitspec/limitspec/kit"
	_ "github.com/limitspec/limitspec/lua" // the catalogue's scripts
	"github.com/redis/go-redis/v9"
)

// Limiter decides limits and policies on Redis. It implements
// limitspec.Limiter, limitspec.Resetter and limitspec.Checker, and is
// safe for concurrent use. Make one with New.
type Limiter struct {
	rdb redis.UniversalClient
	o   Options // with its defaults
	// spread: a Cluster or a Ring, whose nodes may hold the keys of one
	// call in several places.
	spread bool
	// loaded holds the names of the libraries known to be on every
	// server (Functions).
	loaded sync.Map
	// batch coalesces concurrent calls into pipelines; nil when off.
	batch *batcher
	// plans are those of the first few limits and policies decided.
	plans plans
	ids   *limiters.IDs // the request ids of Options.RequestIDs
}

// New returns the Redis limiter of rdb, configured by opts, each zero
// field standing for its default. It refuses a nil client, one without
// ContextTimeoutEnabled, and options that cannot work, with an error
// matching limitspec.ErrMisconfigured that names the field. With
// Functions it loads the libraries where they are missing, within ctx,
// and refuses a server that holds another version of one
// (ErrOtherLibrary); a server it cannot reach is not refused (it is
// checked at the first call). Without Functions, New asks the server
// nothing. A Limiter starts no goroutine that outlives its calls, and
// has nothing to close (see Batching).
func New(ctx context.Context, rdb redis.UniversalClient, opts Options) (*Limiter, error) {
	if err := checkClient(rdb, opts.ContextTimeouts); err != nil {
		return nil, err
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	l := &Limiter{rdb: rdb, o: o, ids: limiters.NewIDs("redislimit")}
	switch rdb.(type) {
	case *redis.ClusterClient, *redis.Ring:
		l.spread = true
	}
	l.batch = newBatcher(rdb, l.o)
	if l.o.Functions {
		for _, lib := range kit.Libraries() {
			if err := l.library(ctx, lib.Name); errors.Is(err, limitspec.ErrMisconfigured) {
				return nil, err
			}
		}
	}
	return l, nil
}

// checkClient refuses a missing client, and one that would let a call
// outlive its context: go-redis bounds socket reads and writes by the
// context's deadline only with ContextTimeoutEnabled, and otherwise by
// its ReadTimeout (5 s by default), so that a silent server would hold a
// call past its deadline. A client whose options it cannot read (a
// wrapper without their Options method) is refused unless the caller
// vouches for it (trusted: Options.ContextTimeouts).
func checkClient(rdb redis.UniversalClient, trusted bool) error {
	if limiters.IsNil(rdb) {
		return misconfigured("no Redis client (a nil one was given)")
	}
	enabled, known := contextTimeouts(rdb)
	switch {
	case known && !enabled:
		return misconfigured("the Redis client must have ContextTimeoutEnabled: true, so that a call's context deadline bounds it " +
			"(without it go-redis waits for its ReadTimeout, 5 s by default, on a server that does not answer)")
	case !known && !trusted:
		return misconfigured("cannot tell whether the Redis client (%T) has ContextTimeoutEnabled: give New the go-redis client "+
			"(or a wrapper with its Options method), or set Options.ContextTimeouts if it bounds each call by its context's deadline", rdb)
	}
	return nil
}

// contextTimeouts reports whether rdb, a go-redis client or a wrapper
// with its Options method (an embedded *redis.Client's), has
// ContextTimeoutEnabled, and whether it could tell.
func contextTimeouts(rdb redis.UniversalClient) (enabled, known bool) {
	switch c := rdb.(type) {
	case interface{ Options() *redis.Options }:
		return c.Options().ContextTimeoutEnabled, true
	case interface{ Options() *redis.ClusterOptions }:
		return c.Options().ContextTimeoutEnabled, true
	case interface{ Options() *redis.RingOptions }:
		return c.Options().ContextTimeoutEnabled, true
	}
	return false, false
}

// Allow decides a request of cost 1 for key by limit.
func (l *Limiter) Allow(ctx context.Context, key string, limit limitspec.Limit) (limitspec.Result, error) {
	return l.Limit(ctx, limitspec.Request{Key: key, Limit: limit, Cost: 1})
}

// Limit decides req on Redis (see the package doc for time and errors):
// by req.Limit for req.Key, or by req.Policy for req.IDs.
func (l *Limiter) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	p, err := l.plan(req)
	if err != nil {
		return limitspec.Result{}, err
	}
	decision, binding, limits, err := l.decide(ctx, p, req, make([]limitspec.LimitResult, 0, len(p.limits)))
	if err != nil {
		return limitspec.Result{}, err
	}
	return limitcall.Result(decision, binding, limits), nil
}

// Reset deletes the state of req.Key under req.Limit, or of every limit
// of req.Policy for req.IDs, so that the next request is decided as on a
// fresh key.
func (l *Limiter) Reset(ctx context.Context, req limitspec.Request) error {
	p, err := l.plan(req)
	if err != nil {
		return err
	}
	return l.reset(ctx, p, req)
}

// reset deletes the state of req's keys under p (a holding policy's
// limits' state: their holds stay).
func (l *Limiter) reset(ctx context.Context, p *plan, req limitspec.Request) error {
	if p.resets != nil { // a holding policy's: its state, not its holds
		p = p.resets
	}
	args, first, err := l.resetArgs(p, req, false)
	if err != nil {
		return err
	}
	_, err = l.run(ctx, p.reset, args, first, notRunAgain)
	return err
}

// View runs a read-only view of req.Key's state under req.Limit, by name
// (meta_window's "entries": who used the limit), at req.Now or the
// limiter's clock (or the server's), and returns its entries, each its
// fields in order (int64s, and a string where the entry holds one). It
// writes nothing.
func (l *Limiter) View(ctx context.Context, view string, req limitspec.Request) ([][]any, error) {
	if limiters.IsNil(req.Limit) || req.Policy != nil {
		return nil, kit.BadInput("a view needs a Limit (and no Policy)")
	}
	p, err := l.plan(req)
	if err != nil {
		return nil, err
	}
	args, first, err := l.resetArgs(p, req, true)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(p.scripts.Views, func(v kit.View) bool { return v.Name == view })
	if i < 0 {
		return nil, unknownView(req.Limit.Algorithm().Name, view, p.scripts.Views)
	}
	reply, err := l.run(ctx, scriptOf(p.scripts.Library, p.scripts.Views[i].Script), args, first, notRunAgain)
	if err != nil {
		return nil, err
	}
	return entries(reply)
}

// plan is the plan of req's limit or policy, req's rule checked
// (limitcall.CheckRule) and, on a Cluster or a Ring, a policy whose keys may lie
// in several slots refused. Its caller checks the key or identities.
func (l *Limiter) plan(req limitspec.Request) (*plan, error) {
	if err := limitcall.CheckRule(req); err != nil {
		return nil, err
	}
	if req.Policy == nil {
		return l.plans.limit(req.Limit)
	}
	if err := l.checkSlots(req.Policy); err != nil {
		return nil, err
	}
	p, err := l.plans.policy(req.Policy)
	if err != nil {
		// The identities are refused first, as package goimpl refuses them.
		if _, idErr := limitcall.PolicyKeys(req.Policy, req.IDs); idErr != nil {
			return nil, idErr
		}
	}
	return p, err
}

// unknownView refuses a view alg does not have, naming those it has, as
// package goimpl does.
func unknownView(alg, view string, views []kit.View) error {
	if len(views) == 0 {
		return kit.BadInput("%s: unknown view %q (it has none)", alg, view)
	}
	names := make([]string, len(views))
	for i, v := range views {
		names[i] = v.Name
	}
	return kit.BadInput("%s: unknown view %q (views: %s)", alg, view, strings.Join(names, ", "))
}

// entries decodes a view's reply: an array of entries, each an array.
func entries(reply any) ([][]any, error) {
	list, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("redislimit: a view replied %v, not an array", reply)
	}
	out := make([][]any, len(list))
	for i, x := range list {
		if out[i], ok = x.([]any); !ok {
			return nil, fmt.Errorf("redislimit: a view's entry %v is not an array", x)
		}
	}
	return out, nil
}

// Check reports whether the limiter can decide req's limit or policy
// (see limitspec.Checker): a valid limit of an algorithm whose scripts
// are linked in, or a valid policy of such limits whose algorithms are
// of one library (and the catalogue), on one slot when the client is a
// Cluster or a Ring.
func (l *Limiter) Check(req limitspec.Request) error {
	if err := limitcall.CheckRule(req); err != nil {
		return err
	}
	if err := limitcall.CheckCounts(req.Limit, req.Policy); err != nil {
		return err
	}
	if req.Policy != nil {
		if err := l.checkSlots(req.Policy); err != nil {
			return err
		}
		_, err := limitcall.PolicyLibrary(req.Policy)
		return err
	}
	_, _, err := scriptsOf(req.Limit)
	return err
}

// checkSlots refuses, on a Cluster or a Ring, a policy whose keys may lie
// in several slots.
func (l *Limiter) checkSlots(p *limitspec.Policy) error {
	if l.spread && !p.OneSlot() {
		return kit.BadInput("policy %s counts several identities or a constant (%v), whose keys a Redis Cluster or Ring may place on different nodes: "+
			"no script can decide it atomically there; split it into one policy per identity, or count every limit by one identity "+
			"(docs/semantics.md, \"Policies\")", p.Name(), p.Identities())
	}
	return nil
}

// nowMs is the time of a decision in ms: t's, or the clock's; not known
// when it is left to the server's clock.
func (l *Limiter) nowMs(t time.Time) (ms int64, known bool) {
	switch {
	case !t.IsZero():
		return t.UnixMilli(), true
	case l.o.ServerClock:
		return 0, false
	}
	return l.o.Now().UnixMilli(), true
}

// The batching of New's limiters when Options.BatchSize and BatchWait
// are 0 (see the package doc, "Batching").
const (
	// DefaultBatchSize is the most calls a pipeline holds.
	DefaultBatchSize = 64
	// DefaultBatchWait is how long a call waits behind batches that
	// have all been in flight that long before another batch takes it.
	DefaultBatchWait = 2 * time.Millisecond
)

// Options configure a Limiter. The zero value is the default: time.Now's
// clock, scripts run by EVALSHA, no key prefix, batching with
// DefaultBatchSize and DefaultBatchWait, and no request ids but the
// callers'.
type Options struct {
	// Now is the clock of requests without a Now; nil means time.Now.
	// Tests set it.
	Now func() time.Time
	// ServerClock decides requests without a Now at the Redis server's
	// clock instead (the scripts read TIME when now_ms is empty), which
	// every process sharing the Redis agrees on; Now must then be nil.
	ServerClock bool
	// Functions calls the Redis Functions libraries (FCALL, Redis 7 and
	// later) instead of EVALSHA; see the package doc. False: EVALSHA.
	Functions bool
	// Prefix is put in front of every key and identity value, inside the
	// hash tag ("{" + Prefix + key + "}..."), so that several
	// applications can share a Redis without sharing keys; "" means
	// none. It may not hold '{' or '}', which would move the hash tag.
	Prefix string
	// BatchSize and BatchWait set how the calls of concurrent callers
	// are coalesced into pipelines (see the package doc, "Batching"): at
	// most BatchSize calls per pipeline (2 or more; 0 means
	// DefaultBatchSize), and BatchWait (0 means DefaultBatchWait), how
	// long a call waits in its server's queue behind batches that have
	// all been in flight that long before another batch takes it (up to
	// four in flight). A call that finds fewer than two batches in
	// flight is sent at once, whatever the wait; a call that finds two
	// gathers into the next batch, sent as soon as one of them comes
	// back.
	BatchSize int
	BatchWait time.Duration
	// NoBatching sends every call by itself, at once, on a connection of
	// its own (go-redis's pool holds PoolSize of them), as one round
	// trip: the lowest latency whatever the load, at the cost of
	// throughput under a heavy one. BatchSize and BatchWait must then be
	// 0. False (the default) batches.
	NoBatching bool
	// RequestIDs gives every decision that carries no request id
	// (Request.ID) one of the limiter's own, so that a decision whose
	// reply is lost, by itself or with its whole pipeline, is sent again
	// within its deadline and gets the reply it had, where it would
	// otherwise fail with ErrOutcomeUnknown (docs/semantics.md, "Request
	// ids"). Each decision then costs what one with an id does: a key
	// read, and written with the reply when charged, kept two minutes
	// (`go run ./cmd/measure` prints both). While a Cluster's slot
	// migrates, Redis refuses a call whose request key is new (TRYAGAIN)
	// until the move ends; such a decision is then sent again at once
	// without its id, as a call without one. False: only the callers'
	// ids.
	RequestIDs bool
	// ContextTimeouts vouches that the client bounds each call by its
	// context's deadline, as go-redis's ContextTimeoutEnabled does, for
	// a client New cannot look into: a wrapper that hides the go-redis
	// client's Options method. New reads the go-redis clients' options
	// itself, and refuses one without ContextTimeoutEnabled whatever this
	// says.
	ContextTimeouts bool
}

// withDefaults checks o and returns it with its zero fields set to
// their defaults (BatchSize and BatchWait 0 when NoBatching).
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.ServerClock && o.Now != nil:
		return o, misconfigured("Options.Now and Options.ServerClock are both set: give one clock")
	case strings.ContainsAny(o.Prefix, "{}"):
		return o, misconfigured("Options.Prefix %q holds '{' or '}', which would move the hash tag", o.Prefix)
	case o.NoBatching && (o.BatchSize != 0 || o.BatchWait != 0):
		return o, misconfigured("Options.BatchSize and BatchWait are set with NoBatching, which sends each call by itself")
	case o.BatchSize == 1 || o.BatchSize < 0:
		return o, misconfigured("Options.BatchSize is %d: a pipeline holds 2 calls or more (NoBatching sends each call by itself)", o.BatchSize)
	case o.BatchWait < 0:
		return o, misconfigured("Options.BatchWait is %v: the wait must be more than 0 (NoBatching sends each call at once)", o.BatchWait)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if !o.NoBatching && o.BatchSize == 0 {
		o.BatchSize = DefaultBatchSize
	}
	if !o.NoBatching && o.BatchWait == 0 {
		o.BatchWait = DefaultBatchWait
	}
	return o, nil
}

// misconfigured is New's refusal of what it cannot work with, as every
// constructor's refusal: "redislimit: misconfigured: ...", matching
// limitspec.ErrMisconfigured.
func misconfigured(format string, args ...any) error {
	return refusal.Config("redislimit", format, args...)
}
