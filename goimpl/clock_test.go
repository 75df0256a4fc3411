package goimpl

import (
	"testing"
	"time"
)

// TestSystemClockReadsTimeNow: the limiter's own clock reads what
// time.Now reads in ms: every reading lies between time.Now's just
// before and just after it, and readings never go back. Between two
// readings of the wall clock (a resync apart) the clock goes on by the
// monotonic clock, which a wall clock slewed by NTP (at most 500 ppm:
// half a ms in a resync) may outrun by a ms at a ms's edge: a reading
// may lie 1 ms before time.Now's.
func TestSystemClockReadsTimeNow(t *testing.T) {
	var c systemClock
	last := int64(0)
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
		before := time.Now().UnixMilli()
		got := c.nowMs()
		after := time.Now().UnixMilli()
		if got < before-1 || got > after || got < last {
			t.Fatalf("read %d between time.Now's %d and %d, after %d", got, before, after, last)
		}
		last = got
		time.Sleep(100 * time.Microsecond)
	}
}

// TestSystemClockFollowsASetClock: a reading of the wall clock older
// than a resync is read again, so that a step of the wall clock (here, a
// reading kept as if the wall clock had been 5 s behind) is followed
// within a resync; until then the clock goes on from the last reading.
func TestSystemClockFollowsASetClock(t *testing.T) {
	var c systemClock
	now := time.Now()
	c.last.Store(&clockReading{at: now, ms: now.UnixMilli() - 5000})
	got, want := c.nowMs(), time.Now().UnixMilli()-5000
	// A machine that held this goroutine for a resync's time between the
	// two readings has resynced the clock instead: the next check's case.
	if time.Since(now) < clockResync && (got < want-1000 || got > want) {
		t.Errorf("within a resync of the last reading: %d, want about %d (the last reading, advanced)", got, want)
	}
	old := now.Add(-clockResync)
	c.last.Store(&clockReading{at: old, ms: old.UnixMilli() - 5000})
	before := time.Now().UnixMilli()
	if got := c.nowMs(); got < before || got > time.Now().UnixMilli() {
		t.Errorf("a resync after the last reading: %d, want the wall clock's %d or later", got, before)
	}
}
