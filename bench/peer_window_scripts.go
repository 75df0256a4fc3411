package main

import (
	"strconv"
	"time"

	"github.com/limitspec/limitspec"
)

// weightedWindowsScript is the sliding window counter as it is written
// by hand (Cloudflare's post "How we built rate limiting capable of
// scaling to millions of domains", and the "weighted sum" of many posts
// since): two fixed-window counters, this window's and the
// one before, the previous count weighted by the part of it still
// inside the sliding window, in floating point; when the estimate is
// under the limit, this window's counter is INCRed and, at its first
// request, PEXPIREd after two windows. KEYS: this window's counter, the
// previous one's; ARGV: now_ms, window_ms, limit. The reply is 1 when
// it admits, else 0.
const weightedWindowsScript = `
local window = tonumber(ARGV[2])
local c = redis.call('MGET', KEYS[1], KEYS[2])
local cur, prev = tonumber(c[1]) or 0, tonumber(c[2]) or 0
local elapsed = tonumber(ARGV[1]) % window
if prev * (window - elapsed) / window + cur >= tonumber(ARGV[3]) then
  return 0
end
if redis.call('INCR', KEYS[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], 2 * window)
end
return 1
`

// weightedWindowsDecider decides lim by weightedWindowsScript, on the
// keys "{sw:<id>}:<window index>", one hash tag for both.
func weightedWindowsDecider(lim limitspec.SlidingWindow) *redisDecider {
	windowMs := lim.Window.Milliseconds()
	return scriptPeer("sliding_window", "two weighted window counters script (MGET, INCR, PEXPIRE)", weightedWindowsScript, isOne,
		func(id string, now time.Time) ([]string, []any) {
			ms := now.UnixMilli()
			i := ms / windowMs
			tag := "{sw:" + id + "}:"
			return []string{tag + strconv.FormatInt(i, 10), tag + strconv.FormatInt(i-1, 10)}, []any{ms, windowMs, lim.Limit}
		})
}

// bucketKeysScript is the per-second counters of the Japanese post
// "RedisのRate Limit Pattern 3種類" (its third pattern): a key per
// identity and bucket under one hash tag (so that MGET works on Redis
// Cluster), the buckets of the window summed with one MGET and, when
// the sum is under the limit, this bucket's counter INCRed and EXPIREd
// a bucket after the window. The post counts first and reads after,
// outside the script; here both are in it (one round trip, the count
// checked before it is written). KEYS: the window's buckets, this one
// first; ARGV: limit, ttl_s. The reply is 1 when it admits, else 0.
const bucketKeysScript = `
local sum = 0
for _, c in ipairs(redis.call('MGET', unpack(KEYS))) do
  if c then
    sum = sum + tonumber(c)
  end
end
if sum >= tonumber(ARGV[1]) then
  return 0
end
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
`

// bucketKeysDecider decides lim by bucketKeysScript, on the keys
// "{bw:<id>}:<bucket index>", one per bucket of lim's window; lim's
// buckets must be whole seconds.
func bucketKeysDecider(lim limitspec.BucketWindow) *redisDecider {
	bucketMs := lim.Bucket.Milliseconds()
	n := lim.Window.Milliseconds() / bucketMs
	ttl := int64((lim.Window + lim.Bucket) / time.Second)
	return scriptPeer("bucket_window", "per-bucket keys script (MGET, INCR, EXPIRE)", bucketKeysScript, isOne,
		func(id string, now time.Time) ([]string, []any) {
			b := now.UnixMilli() / bucketMs
			tag := "{bw:" + id + "}:"
			keys := make([]string, n)
			for i := range keys {
				keys[i] = tag + strconv.FormatInt(b-int64(i), 10)
			}
			return keys, []any{lim.Limit, ttl}
		})
}

// metaListScript is the second pattern of "RedisのRate Limit Pattern
// 3種類": a list per
// identity whose entries carry who made each request (the meta), its
// length (LLEN, O(1)) the count of the window, the key PEXPIREd a
// window after its first entry, so that the window opens at the first
// request. The post checks LLEN and pushes in two calls; here both
// are one script (no request pushed past the limit). ARGV: meta, limit,
// window_ms. The reply is 1 when it admits, else 0.
const metaListScript = `
local n = redis.call('LLEN', KEYS[1])
if n >= tonumber(ARGV[2]) then
  return 0
end
redis.call('RPUSH', KEYS[1], ARGV[1])
if n == 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 1
`

// metaListDecider decides lim by metaListScript, on the key "mw:<id>",
// each request's meta Meta.
func metaListDecider(lim limitspec.MetaWindow) *redisDecider {
	return scriptPeer("meta_window", "meta list script (LLEN, RPUSH, PEXPIRE)", metaListScript, isOne,
		func(id string, _ time.Time) ([]string, []any) {
			return []string{"mw:" + id}, []any{Meta, lim.Limit, lim.Window.Milliseconds()}
		})
}
