// Package standin is an in-process stand-in for the Redis commands that
// the generated Lua scripts call, so that conformance can run those
// scripts in gopher-lua without a server. It is not a Redis: it keeps one
// keyspace in memory, answers only the commands below, only in the forms
// the scripts use, and its clock is frozen, so that no key ever expires
// (the TTLs scripts set are recorded for the conformance runner to check).
//
// The commands, a file per family as the Redis command reference groups
// them:
//
//   - keys.go, the keyspace: DEL, EXISTS, TYPE, PEXPIRE, PTTL
//   - strings.go: GET, SET key value [PX ms], PSETEX
//   - hashes.go: HGET, HMGET, HSET, HGETALL
//   - sortedsets.go: ZADD (no flags), ZRANGE by index, ZRANGEBYSCORE,
//     ZREVRANGEBYSCORE, ZREMRANGEBYSCORE, ZREMRANGEBYRANK, ZREM, ZCARD,
//     ZCOUNT, ZSCORE
//   - lists.go: RPUSH, LRANGE, LLEN, LTRIM
//   - server.go: TIME, the wall clock (only the keys' clock is frozen)
//
// An option of a supported command that the scripts never use (ZADD NX,
// ZRANGE BYSCORE, SET EX, ...) is refused with an error that says the
// stand-in does not support it, never answered differently from Redis.
//
// Replies are those a Lua script sees through redis.call, which converts
// Redis's RESP2 replies: nil (a nil bulk string, which Lua sees as
// false), int64 (an integer), string (a bulk string: a sorted set's
// scores as Redis 7.0 prints them), Status (a status reply such as OK)
// and []any (an array of those). Errors carry Redis's own texts
// (errors.go): WRONGTYPE, ERR syntax error, wrong number of arguments,
// not an integer, ... The tests run every command sequence they check on
// this store and on a real redis-server and require the same replies and
// the same keys left.
//
// The package was written from the Redis command reference and shares no
// code with miniredis, the other Redis conformance runs the scripts on.
package standin
