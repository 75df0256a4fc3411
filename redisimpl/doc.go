// Package redisimpl holds the Redis limiters of every algorithm and policy
// of the spec: each call runs the generated Lua script of package lua
// atomically on Redis, so every process sharing the Redis shares the
// limit, and decides exactly as package goimpl does in process (package
// conformance holds both to the same vectors).
//
// Make a limiter with a typed constructor (NewGCRA, NewTokenBucket, ...;
// NewBurstQuota, ... for the policies of spec/policies.yaml), or by name
// with New and NewPolicy. Each checks its parameters as goimpl does, with
// the same errors (matching limitspec.ErrBadInput), before any call to
// Redis. A Limiter runs on any go-redis v9 UniversalClient: a single
// Redis, a Sentinel failover client, a Cluster, a Ring. A policy whose
// limits count several identities (ip_user) may have its keys in several
// slots or shards, so its constructor refuses a Cluster or a Ring.
//
// Every call takes a context: its deadline bounds the whole call, reloads
// included. For that the client must be made with ContextTimeoutEnabled
// (go-redis otherwise waits for its ReadTimeout on a silent server); the
// constructors refuse a client without it. Errors match one of
//
//   - limitspec.ErrBadInput: the key, identities, time or cost are
//     refused, with the message goimpl gives; nothing was written;
//   - limitspec.ErrBadState: a key holds a value the scripts did not write
//     (BADSTATE), or another Redis type (WRONGTYPE); nothing was written;
//   - limitspec.ErrUnavailable: Redis could not be reached, refused to
//     run scripts (LOADING, READONLY, CLUSTERDOWN, ...) or did not answer
//     in time; the error also matches its cause (context.DeadlineExceeded,
//     a net.Error). A call whose reply was lost may or may not have been
//     applied.
//
// Scripts run by EVALSHA. A server that does not know a script (after
// SCRIPT FLUSH, a restart, a failover to a replica that never ran it)
// answers NOSCRIPT, and the call sends the script with EVAL, which
// decides and caches it again: the decision is made once either way.
// With WithFunctions, calls run the Redis Functions library (lua/library.lua,
// Redis 7 and later) by FCALL instead; it is persisted and replicated with
// the data, and a server that lacks it gets it loaded (FUNCTION LOAD, on
// every master) at the first call that needs it. LibraryLoaded tells
// whether the servers hold this build's version.
//
// Time: Request.Now decides at an explicit time (tests); a zero Now
// decides at the caller's clock (time.Now, or WithClock's), or, with
// WithServerClock, at the Redis server's clock (the scripts' empty
// now_ms), which every process sharing a Redis agrees on.
//
// Local returns a goimpl limiter with the same parameters, for package
// fallback to decide with while Redis is unavailable.
package redisimpl
