package main

import (
	"fmt"
	"strconv"
	"time"
)

// incrScript is the common fixed-window counter: INCR the window's key,
// PEXPIRE it on the window's first request, as one script so that the
// two are atomic (an INCR whose PEXPIRE never ran would live forever).
// The caller admits when the count is at most the limit.
const incrScript = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return n
`

// incrDecider decides fixed_window's limit by incrScript, on the key
// "fw:<id>:<window index>".
func incrDecider() *redisDecider {
	windowMs := Per.Milliseconds()
	return scriptPeer("fixed_window", "INCR + PEXPIRE script", incrScript,
		func(reply any) (bool, error) {
			n, ok := reply.(int64)
			if !ok {
				return false, fmt.Errorf("unexpected reply %v", reply)
			}
			return n <= Amount, nil
		},
		func(id string, now time.Time) ([]string, []any) {
			return []string{"fw:" + id + ":" + strconv.FormatInt(now.UnixMilli()/windowMs, 10)}, []any{windowMs}
		})
}

// rollingScript is rolling-rate-limiter's (peterkhayes/rolling-rate-limiter,
// src/index.ts, RedisRateLimiter) MULTI as one script: remove the
// timestamps older than the interval, add this request's (in µs, under
// a UUID member: added even when it will be blocked), read every
// timestamp back with their scores, and EXPIRE the key after the
// interval in whole seconds. The client blocks when more than the limit
// are read back. ARGV: now_us, interval_us, member, ttl_s.
const rollingScript = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, tonumber(ARGV[1]) - tonumber(ARGV[2]))
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
local ts = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
redis.call('EXPIRE', KEYS[1], ARGV[4])
return ts
`

// rollingDecider decides sliding_log's limit by rollingScript.
func rollingDecider() *redisDecider {
	intervalUs := Per.Microseconds()
	ttl := int64(Per / time.Second)
	return scriptPeer("sliding_log", "rolling-rate-limiter's log (ZREMRANGEBYSCORE, ZADD, ZRANGE WITHSCORES, EXPIRE)", rollingScript,
		func(reply any) (bool, error) {
			ts, ok := reply.([]any)
			if !ok {
				return false, fmt.Errorf("unexpected reply %v", reply)
			}
			return len(ts)/2 <= LogAmount, nil
		},
		func(id string, now time.Time) ([]string, []any) {
			return []string{"rrl:" + id}, []any{now.UnixMicro(), intervalUs, member(), ttl}
		})
}

// zcardScript is the sorted-set log of many blog posts: remove the
// entries older than the window, count the rest (ZCARD), and when under
// the limit add this request's and PEXPIRE the key. ARGV: now_ms,
// window_ms, limit, member.
const zcardScript = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`

// zcardDecider decides sliding_log's limit by zcardScript.
func zcardDecider() *redisDecider {
	windowMs := Per.Milliseconds()
	return scriptPeer("sliding_log", "ZCARD log script (ZREMRANGEBYSCORE, ZCARD, ZADD, PEXPIRE)", zcardScript, isOne,
		func(id string, now time.Time) ([]string, []any) {
			return []string{"zlog:" + id}, []any{now.UnixMilli(), windowMs, LogAmount, member()}
		})
}
