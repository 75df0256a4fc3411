package main

import (
	"context"
	"fmt"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/redis/go-redis/v9"
)

// bucketArgs reads the ARGV of the two bucket scripts below: now_ms, the
// capacity, a rate as an amount per a period in ms (per_ms, the amount
// per ms) and the cost, all numbers.
const bucketArgs = `
local now = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local per_ms = tonumber(ARGV[3]) / tonumber(ARGV[4])
local cost = tonumber(ARGV[5])
`

// tokenHashScript is the token bucket most hand-written limiters keep:
// the tokens left and the time they were counted, the tokens refilled
// by the time since on each read (never above the capacity), the cost
// taken when enough are left, the key kept until the bucket would be
// full again. node-redis-token-bucket-ratelimiter and Spring Cloud
// Gateway's request_rate_limiter.lua keep the two in two strings; here
// they are two fields of one hash (HMGET, HSET, PEXPIRE), one key per
// identity. It counts in floating point, as they do. ARGV: now_ms,
// capacity, refill_tokens, refill_ms, cost; the reply is 1 when it
// admits, else 0.
const tokenHashScript = bucketArgs + `local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(b[1]) or capacity
local ts = tonumber(b[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - ts) * per_ms)
if tokens < cost then
  return 0
end
redis.call('HSET', KEYS[1], 'tokens', tokens - cost, 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens + cost) / per_ms))
return 1
`

// tokenHashDecider decides lim by tokenHashScript, on the key
// "tb:<id>".
func tokenHashDecider(lim limitspec.TokenBucket) *redisDecider {
	return scriptPeer("token_bucket", "token hash script (HMGET, HSET, PEXPIRE)", tokenHashScript, isOne,
		func(id string, now time.Time) ([]string, []any) {
			return []string{"tb:" + id}, []any{now.UnixMilli(), lim.Capacity, lim.RefillTokens, lim.Refill.Milliseconds(), 1}
		})
}

// queueLevelScript is the leaky bucket as hand-written limiters keep it
// when they do not list every queued request: the level of the queue
// and the time it was measured, drained by the time since on each
// request at the rate, a request admitted while the level plus its cost
// fits the capacity and told how long the work queued ahead of it takes
// to drain. One hash per identity (HMGET, HSET, PEXPIRE until the queue
// is empty), in floating point. ARGV: now_ms, capacity, rate,
// period_ms, cost; the reply is the wait in ms when it admits, else -1.
const queueLevelScript = bucketArgs + `local b = redis.call('HMGET', KEYS[1], 'level', 'ts')
local level = tonumber(b[1]) or 0
local ts = tonumber(b[2]) or now
level = math.max(0, level - math.max(0, now - ts) * per_ms)
if level + cost > capacity then
  return -1
end
redis.call('HSET', KEYS[1], 'level', level + cost, 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((level + cost) / per_ms))
return math.ceil(level / per_ms)
`

// queueLevelDecider decides lim by queueLevelScript, on the key
// "lb:<id>".
func queueLevelDecider(lim limitspec.LeakyBucket) *redisDecider {
	return scriptPeer("leaky_bucket", "queue level script (HMGET, HSET, PEXPIRE)", queueLevelScript, notNegative,
		func(id string, now time.Time) ([]string, []any) {
			return []string{"lb:" + id}, []any{now.UnixMilli(), lim.Capacity, lim.Rate, lim.Period.Milliseconds(), 1}
		})
}

// peerCall gives the KEYS and ARGV of a hand-written script's call for
// a request of id at now.
type peerCall func(id string, now time.Time) (keys []string, args []any)

// scriptPeer decides by the hand-written script src (EVALSHA), calling
// it as call says; admitted reads its reply.
func scriptPeer(group, name, src string, admitted func(any) (bool, error), call peerCall) *redisDecider {
	script := redis.NewScript(src)
	return &redisDecider{
		Group: group, Name: name, Command: evalSHA,
		load: loader(src),
		queue: func(ctx context.Context, p redis.Pipeliner, id string, now time.Time) *redis.Cmd {
			keys, args := call(id, now)
			return p.EvalSha(ctx, script.Hash(), keys, args...)
		},
		admitted: admitted,
		keys: func(id string, now time.Time) []string {
			keys, _ := call(id, now)
			return keys
		},
	}
}

// isOne reads a reply that is 1 when admitted.
func isOne(reply any) (bool, error) {
	n, ok := reply.(int64)
	if !ok {
		return false, fmt.Errorf("unexpected reply %v", reply)
	}
	return n == 1, nil
}

// notNegative reads a reply that is negative when denied.
func notNegative(reply any) (bool, error) {
	n, ok := reply.(int64)
	if !ok {
		return false, fmt.Errorf("unexpected reply %v", reply)
	}
	return n >= 0, nil
}
