package main

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
)

// The limits drawn, one per algorithm of the catalogue, in the order the
// README shows them: each admits 10 requests per 10 s, the nominal rate
// of one a second; but concurrency, which admits 10 in flight, each
// request holding its slot for `work` (holds.go).
var limits = []limitspec.Limit{
	limitspec.FixedWindow{Limit: 10, Window: 10 * time.Second},
	limitspec.SlidingWindow{Limit: 10, Window: 10 * time.Second},
	limitspec.SlidingLog{Limit: 10, Window: 10 * time.Second},
	limitspec.BucketWindow{Limit: 10, Window: 10 * time.Second, Bucket: time.Second},
	limitspec.TokenBucket{Capacity: 10, RefillTokens: 10, Refill: 10 * time.Second},
	limitspec.GCRA{Burst: 10, Rate: 10, Period: 10 * time.Second},
	limitspec.LeakyBucket{Capacity: 10, Rate: 10, Period: 10 * time.Second},
	limitspec.MetaWindow{Limit: 10, Window: 10 * time.Second},
	limitspec.Concurrency{Limit: 10},
}

// A phase of the trace: n requests of cost 1, one every `every`, the
// first at `start` (from the trace's start). A phase of no requests
// names the pause between its neighbours.
type phase struct {
	name  string
	start time.Duration
	every time.Duration
	n     int
}

// trace is the traffic every picture decides: 60 s of one client's
// requests, against limits of 10 per 10 s.
var trace = []phase{
	{"steady 1.25/s", 0, 800 * time.Millisecond, 25},        // 0 s to 19.2 s
	{"burst", 25 * time.Second, 100 * time.Millisecond, 15}, // 25.0 s to 26.4 s
	{"idle", 0, 0, 0},
	{"edge burst", 39 * time.Second, 100 * time.Millisecond, 20}, // 39.0 s to 40.9 s: 10 on each side of 40 s
	{"slow 0.5/s", 42 * time.Second, 2 * time.Second, 9},         // 42 s to 58 s
}

// end is the time of the phase's last request.
func (ph phase) end() time.Duration { return ph.start + time.Duration(ph.n-1)*ph.every }

// middle is the middle of phase i: of its requests, or of the pause
// between its neighbours.
func middle(i int) time.Duration {
	if ph := trace[i]; ph.n > 0 {
		return (ph.start + ph.end()) / 2
	}
	return (trace[i-1].end() + trace[i+1].start) / 2
}

// traceLength is the time the pictures span.
const traceLength = 60 * time.Second

// start is the trace's time 0: a multiple of every window and bucket,
// so that fixed windows begin at 0 s, 10 s, 20 s... of the trace.
var start = time.UnixMilli(1_700_000_000_000)

// decision is one request of the trace and what the limit decided.
type decision struct {
	at        time.Duration // from the trace's start
	phase     int           // index in trace
	allowed   bool
	remaining int64
	delay     time.Duration
}

// decide runs the trace through limit on a fresh goimpl.Limiter, which
// decides exactly as the Lua scripts do, at each request's own time; a
// limit of slots, in a holding policy (decideHeld).
func decide(ctx context.Context, limit limitspec.Limit) ([]decision, error) {
	if holdsOf(limit) {
		return decideHeld(ctx, limit)
	}
	lim, err := goimpl.New(goimpl.Options{NoSweeper: true})
	if err != nil {
		return nil, err
	}
	defer lim.Close()
	var out []decision
	for i, ph := range trace {
		for k := range ph.n {
			at := ph.start + time.Duration(k)*ph.every
			req := limitspec.Request{Key: "client", Limit: limit, Cost: 1, Now: start.Add(at)}
			res, err := lim.Limit(ctx, req)
			if err != nil {
				return nil, fmt.Errorf("%s at %v: %w", limit.Algorithm(), at, err)
			}
			out = append(out, decision{at, i, res.Allowed, res.Limits[0].Remaining, res.Delay})
		}
	}
	return out, nil
}

// describe writes limit as Go would, leaving out the fields left zero:
// FixedWindow{Limit: 10, Window: 10s}.
func describe(limit limitspec.Limit) string {
	v := reflect.ValueOf(limit)
	var fields []string
	for i := range v.NumField() {
		if f := v.Field(i); !f.IsZero() {
			fields = append(fields, fmt.Sprintf("%s: %v", v.Type().Field(i).Name, f.Interface()))
		}
	}
	return v.Type().Name() + "{" + strings.Join(fields, ", ") + "}"
}
