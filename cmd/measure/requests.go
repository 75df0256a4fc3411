package main

import (
	"fmt"
	"io"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/redislimit"
)

// The price of request ids (docs/semantics.md, "Request ids"): a gcra
// decision of a key with and without an id, in rounds that alternate
// the two, and the memory of a remembered request whose id is a UUID's
// 36 bytes.
const (
	requestKeys   = 200
	requestRounds = 20
)

// requestCost is what was measured: Redis-side CPU per decision (µs,
// INFO commandstats) without and with an id, and the bytes of one
// request key (MEMORY USAGE).
type requestCost struct {
	plain, withID float64
	bytes         int64
}

// measureRequests decides requestRounds admitted requests for each of
// requestKeys keys, each round once without an id and once with a new
// one, through package redislimit, unbatched.
func (m *measurer) measureRequests() (*requestCost, error) {
	lim, err := redislimit.New(m.ctx, m.rdb, redislimit.Options{Prefix: m.prefix, NoBatching: true})
	if err != nil {
		return nil, err
	}
	gcra := limitspec.GCRA{Burst: 1_000_000, Rate: 1_000_000, Period: time.Minute}
	var usec [2]int64
	for round := range requestRounds {
		for way := range 2 {
			before, err := commandStats(m.ctx, m.rdb)
			if err != nil {
				return nil, err
			}
			for k := range requestKeys {
				req := limitspec.Request{Key: fmt.Sprintf("rq%d:%05d", way, k), Limit: gcra, Cost: 1, Now: time.UnixMilli(now0 + int64(round))}
				if way == 1 {
					req.ID = fmt.Sprintf("%08x-0000-4000-8000-%012x", round, k) // a UUID's 36 bytes
				}
				if res, err := lim.Limit(m.ctx, req); err != nil || !res.Allowed {
					return nil, fmt.Errorf("request ids: %+v, %v", res, err)
				}
			}
			after, err := commandStats(m.ctx, m.rdb)
			if err != nil {
				return nil, err
			}
			usec[way] += after["evalsha"].usec - before["evalsha"].usec
		}
	}
	key := "{" + m.prefix + "rq1:00000}:rq:" + fmt.Sprintf("%08x-0000-4000-8000-%012x", 0, 0)
	bytes, err := m.rdb.MemoryUsage(m.ctx, key, 0).Result()
	if err != nil {
		return nil, fmt.Errorf("MEMORY USAGE %s: %v", key, err)
	}
	n := float64(requestRounds * requestKeys)
	return &requestCost{plain: float64(usec[0]) / n, withID: float64(usec[1]) / n, bytes: bytes}, nil
}

// printRequests prints the price of request ids.
func printRequests(w io.Writer, c *requestCost) {
	fmt.Fprintf(w, "\nRequest ids: a gcra decision with an id (its request key read, then written) took %s µs of Redis-side CPU, against %s µs without (%.2f×); "+
		"a remembered request, its id a UUID's 36 bytes, takes %d bytes (MEMORY USAGE), for REQUEST_MS (60 s) plus the margin.\n",
		micros(c.withID), micros(c.plain), c.withID/c.plain, c.bytes)
}
