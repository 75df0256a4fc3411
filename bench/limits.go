package main

import (
	"fmt"
	"time"

	"github.com/limitspec/limitspec"
)

// The one limit every figure decides by: a burst of Amount at once and
// Amount per Per (gcra and its peers), or Amount per window of Per (the
// windows), so large that every measured decision admits (the admitting
// path: the one that writes state).
const (
	Amount = 1_000_000
	Per    = time.Minute
	// LogAmount is the limit of the logs (sliding_log, meta_window and
	// the peers' sorted-set logs), the largest sliding_log and
	// meta_window take.
	LogAmount = 100_000
	// Meta is the meta_window input of every request.
	Meta = "user:12345"
)

// limits are limitspec's limits of every algorithm, in the order the
// tables list them.
var limits = []limitspec.Limit{
	limitspec.GCRA{Burst: Amount, Rate: Amount, Period: Per},
	limitspec.FixedWindow{Limit: Amount, Window: Per},
	limitspec.SlidingLog{Limit: LogAmount, Window: Per},
	limitspec.SlidingWindow{Limit: Amount, Window: Per},
	limitspec.TokenBucket{Capacity: Amount, RefillTokens: Amount, Refill: Per},
	limitspec.LeakyBucket{Capacity: Amount, Rate: Amount, Period: Per},
	limitspec.BucketWindow{Limit: Amount, Window: Per, Bucket: time.Second},
	limitspec.MetaWindow{Limit: LogAmount, Window: Per},
}

// gcraLimit is limits' gcra.
var gcraLimit = limitspec.GCRA{Burst: Amount, Rate: Amount, Period: Per}

// fixedWindowLimit is limits' fixed_window.
var fixedWindowLimit = limitspec.FixedWindow{Limit: Amount, Window: Per}

// slidingLogLimit is limits' sliding_log.
var slidingLogLimit = limitspec.SlidingLog{Limit: LogAmount, Window: Per}

// checkLimits validates every limit, so that a bound the spec sets is
// reported before anything is measured.
func checkLimits() error {
	for _, l := range limits {
		if err := l.Validate(); err != nil {
			return fmt.Errorf("limit %s: %w", l.Algorithm(), err)
		}
	}
	return nil
}

// LimitText says the limits in words, for the report's header.
func LimitText() string {
	a := groupThousands(Amount)
	return fmt.Sprintf("Every limiter is given the same limit, so large that every measured decision admits (the admitting path, which writes state): "+
		"gcra and its peers a burst of %s and %s per minute; the windows and buckets %s per minute (bucket_window in buckets of 1 s); "+
		"the logs (sliding_log, meta_window and their peers) %s per minute, the largest limit sliding_log takes. "+
		"Each cell gives the value and, in parentheses, its ratio to the best peer's value in the same column for the same algorithm.\n\n",
		a, a, a, groupThousands(LogAmount))
}

// ids are the limited identities: "user:00000" to "user:<n-1>".
func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("user:%05d", i)
	}
	return out
}
