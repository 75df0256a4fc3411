package fallback

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/keyed"
)

// reports remembers, per key and limit (or policy and identities), how
// much of the limit the primary last reported used, so that the local
// limiter starts from there instead of from a full limit. It holds at
// most about max entries; a full shard forgets an entry at random (whose
// local limiter then starts from what it holds, and whose debt is lost).
type reports struct {
	m     *keyed.Map[report]
	owing atomic.Int64 // the reports whose owed is not 0
}

// report is the primary's last word on one key: the largest amount any
// of its limits had used, until when that amount matters (the longest of
// its limits' ResetAfter), and whether the local limiter has been started
// from it (seeded). A seeded key's local state is kept: every admission
// the primary reports for it from then on is forced on the local limiter
// too (mirrored), and no report replaces it.
type report struct {
	used   int64
	until  time.Time
	seeded bool
	// owed is what the local limiter admitted since the primary last
	// answered for the key, which the primary is told (forced) before its
	// next decision of it, so that it counts them too.
	owed int64
}

func newReports(max int) *reports {
	r := &reports{}
	r.m = keyed.New(max, func(gone *report) {
		if gone.owed > 0 {
			r.owing.Add(-1)
		}
	})
	return r
}

// with calls f with req's report, under its shard's lock: nil when
// there is none and create is false.
func (r *reports) with(req limitspec.Request, create bool, f func(*report)) {
	r.m.With(req, create, f)
}

// record keeps the primary's result for req, decided at now; it returns
// whether the local limiter has been started from an earlier report, so
// that the primary's admission is to be mirrored to it.
func (r *reports) record(req limitspec.Request, res limitspec.Result, now time.Time) (mirror bool) {
	r.with(req, true, func(rep *report) {
		if mirror = rep.seeded; !mirror {
			var reset time.Duration
			rep.used, reset = used(res)
			rep.until = now.Add(reset)
		}
	})
	return mirror
}

// take returns, once per key, the amount the local limiter is to start
// from for req at now (0 once the report's ResetAfter has passed); ok is
// false when there is no report, or the local limiter has already been
// started from it.
func (r *reports) take(req limitspec.Request, now time.Time) (amount int64, ok bool) {
	r.with(req, false, func(rep *report) {
		if ok = rep != nil && !rep.seeded; ok {
			rep.seeded = true
			if now.Before(rep.until) {
				amount = rep.used
			}
		}
	})
	return amount, ok
}

// owe adds cost, admitted by the local limiter, to what req's primary is
// to be told.
func (r *reports) owe(req limitspec.Request, cost int64) {
	r.with(req, false, func(rep *report) {
		if rep != nil && cost > 0 {
			if rep.owed == 0 {
				r.owing.Add(1)
			}
			rep.owed += cost
		}
	})
}

// debt takes what the primary is to be told of req's key; the caller
// gives it back (owe) when the primary could not be told. It takes no
// lock while nothing is owed for any key.
func (r *reports) debt(req limitspec.Request) (owed int64) {
	if r.owing.Load() == 0 {
		return 0
	}
	r.with(req, false, func(rep *report) {
		if rep != nil && rep.owed > 0 {
			owed, rep.owed = rep.owed, 0
			r.owing.Add(-1)
		}
	})
	return owed
}

// used is the largest amount any limit of res had used (its Quota less
// its Remaining), and the longest of their ResetAfter.
func used(res limitspec.Result) (int64, time.Duration) {
	var u int64
	var reset time.Duration
	for _, l := range res.Limits {
		u, reset = max(u, l.Quota-l.Remaining), max(reset, l.ResetAfter)
	}
	return u, reset
}

// seed starts the local limiter's state of req from amount used: its
// state reset, then amount forced on it at req's time.
func seed(ctx context.Context, local limitspec.Limiter, req limitspec.Request, amount int64) error {
	if r, ok := local.(limitspec.Resetter); ok {
		if err := r.Reset(ctx, req); err != nil {
			return err
		}
	}
	if amount == 0 {
		return nil
	}
	req.Cost, req.Force = amount, true
	_, err := local.Limit(ctx, req)
	return err
}
