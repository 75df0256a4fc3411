package goimpl

import (
	"sync/atomic"
	"time"
)

// clockResync is how long systemClock goes on from one reading of the
// wall clock.
const clockResync = time.Second

// systemClock is the limiter's clock unless Options.Now gives another: the
// system's wall clock in ms since the epoch, as time.Now().UnixMilli()
// reads it, with one clock read where time.Now makes two (the wall clock
// and the monotonic one): systemClock reads both once a second, and in
// between advances that reading by the monotonic clock alone
// (time.Since). The two advance alike (what slews the wall clock slews
// the monotonic one too), so its readings are time.Now's but after a step
// of the wall clock (set by hand, by NTP at start-up, or a leap second),
// which it follows within a second. The zero systemClock is ready; it is
// safe for concurrent use.
type systemClock struct {
	last atomic.Pointer[clockReading]
}

// clockReading is a reading of time.Now: itself, with its monotonic
// reading, and its wall clock as whole ms since the epoch and the ns past
// them.
type clockReading struct {
	at       time.Time
	ms, past int64
}

// nowMs is the wall clock in ms since the epoch.
func (c *systemClock) nowMs() int64 {
	if r := c.last.Load(); r != nil {
		if d := time.Since(r.at); d >= 0 && d < clockResync {
			return r.ms + (r.past+int64(d))/int64(time.Millisecond)
		}
	}
	return c.read()
}

// read reads time.Now, keeps it as the last reading, and returns it in
// ms since the epoch.
func (c *systemClock) read() int64 {
	now := time.Now()
	ms := now.UnixMilli()
	c.last.Store(&clockReading{at: now, ms: ms, past: int64(now.Nanosecond()) % int64(time.Millisecond)})
	return ms
}
