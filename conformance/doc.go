// Package conformance replays time-stamped vectors against every
// implementation of the algorithms and policies and reports the first
// step where any target departs from the vector or from another target.
//
// A vector (docs/vectors.md; Load, Vector) decides its steps by one
// algorithm and its parameters, which a step may change from that step
// on (a limit changing between calls), or by a policy written inline as a
// policy file writes it, whose steps give identity values instead of a
// key. A step decides, runs the forced call, resets, or runs a view.
//
// Targets decide per call, as a service calls a limiter: each step names
// the limit or the policy it is decided by.
//
//   - goimpl: package goimpl's Limiter (GoimplTarget), given the typed
//     limit policyfile.NewLimit makes of the step's algorithm and
//     parameters, or the policy limitspec.NewPolicy makes of its limits.
//   - goimpl-bound: the same Limiter through the handles of its Bind and
//     BindPolicy, each limit and policy bound at its first step
//     (GoimplBoundTarget); resets and views through the Limiter.
//   - gopherlua: the generated Lua run in gopher-lua, with a redis.call
//     of this package's own over package standin, an in-process
//     stand-in for the Redis commands the scripts call (LuaTarget).
//   - miniredis, redis, cluster: the same Lua through go-redis on
//     miniredis in process, on a real Redis server by URL, or on a Redis
//     Cluster (RedisTarget). UseFunctions makes a real server's target
//     call the Redis Functions libraries (FCALL) instead of EVALSHA, and
//     appends -functions to its name.
//   - redis-client, cluster-client, and their -functions twins: package
//     redislimit's Limiter, the client a service uses, on a RedisTarget's
//     server (ClientTarget), so that its typed limits, ARGV, key names,
//     reply decoding and error classes are held to every vector too.
//   - redis-bound, cluster-bound, and their -functions twins: the
//     handles of that Limiter bound to one limit or one policy
//     (RedisBoundTarget), each step decided by the handle of its limit or
//     policy, bound at the first step that names it.
//
// The targets that run the scripts themselves call them as a client in
// any language would, from the vector's raw input. Every script of every
// library linked in is available: the catalogue's, and those of a user's
// package that registers its own, and those RegisterScripts reads from a
// spec compiled at run time (cmd/verify -spec).
//
// A Go test replays vectors with Test: on the embedded targets, or on
// targets it hands over, such as NewLimiterTarget's of any
// limitspec.Limiter. The test cmd/gen writes into a package compiled from
// a user's spec calls it on the package's testdata/vectors.
//
// At each step the runner (Run, RunVector) checks each target's outcome
// against the vector's expectations and against the outcome of the first
// target that passed the step; errors are compared by class (BADINPUT, BADSTATE,
// WRONGTYPE), not by message. On a target with a Redis keyspace it also
// checks that every key carries a TTL, no longer than the oracle's bound
// (internal/oracle.MaxTTL) where the oracle knows the algorithm, and that
// a refused step changed no key. A step that plants a value of another
// Redis type (wrong_type) runs only on those targets; a Cluster skips a
// vector whose policy counts several identities or a constant
// (ErrNotApplicable), since no script can decide it atomically there.
package conformance
