package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
)

// A limit of slots (concurrency) keeps no state of its own: what it
// limits are the holds of a holding policy. Drawn on the trace, each
// request it admits holds its slot for work, then commits 1. A reserve
// holds for holdFor, long past the work, so that every hold ends by its
// commit and none by itself.
const (
	work    = 3 * time.Second
	holdFor = time.Minute
)

// holdsOf reports whether limit is decided in a holding policy, its
// requests reserving and committing, rather than by decisions alone.
func holdsOf(limit limitspec.Limit) bool {
	_, ok := limit.(limitspec.Concurrency)
	return ok
}

// decideHeld runs the trace through limit as the only limit of a holding
// policy: each request reserves 1 at its time, and an admitted one
// commits 1 work later. Every call is made in time order: the commits
// due by a request's time before it, the rest after the last request.
func decideHeld(ctx context.Context, limit limitspec.Limit) ([]decision, error) {
	run, err := newHoldRun("slots", limit, "client")
	if err != nil {
		return nil, err
	}
	defer run.close()
	var out []decision
	for i, ph := range trace {
		for k := range ph.n {
			at := ph.start + time.Duration(k)*ph.every
			id := fmt.Sprint("r", len(out))
			res, err := run.reserve(ctx, at, id, 1, ending{at + work, id, limitspec.Commit, 1})
			if err != nil {
				return nil, fmt.Errorf("%s at %v: %w", limit.Algorithm(), at, err)
			}
			out = append(out, decision{at, i, res.Allowed, res.Limits[0].Remaining, res.Delay})
		}
	}
	return out, run.until(ctx, traceLength+work)
}

// holdRun is one holder's calls on a holding policy of one limit, on a
// fresh goimpl.Limiter, made in time order: its reserves, and the commits
// and releases they schedule, each made before any call after its time.
//
// A run that watches (every > 0) also records, after each call and every
// `every` (a decision of cost 0), the tokens held and the remaining.
type holdRun struct {
	lim     *goimpl.Limiter
	req     limitspec.Request // the policy and the IDs of every call
	ends    []ending          // scheduled, in time order
	held    map[string]int64  // the amount of each live hold, by id
	every   time.Duration     // 0: no watching
	next    time.Duration     // the time of the next watch
	samples []sample          // watched, in time order
	events  []event           // the calls made, in time order
}

// ending is a hold's scheduled end: at its time, op (Commit or Release)
// on the hold id, committing spent.
type ending struct {
	at    time.Duration
	id    string
	op    limitspec.HoldOp
	spent int64
}

// sample is the state of the watched limit at a time: the tokens its
// live holds hold, and its remaining (a decision of cost 0).
type sample struct {
	at              time.Duration
	held, remaining int64
}

// event is one call of a run: a reserve (admitted or not), a commit or a
// release, with its amount (reserved, or spent).
type event struct {
	at      time.Duration
	op      limitspec.HoldOp
	id      string
	amount  int64
	allowed bool
}

// newHoldRun makes a run on a holding policy of limit alone, named name,
// counting the identity id (whose value is id too).
func newHoldRun(name string, limit limitspec.Limit, id string) (*holdRun, error) {
	p, err := limitspec.NewPolicy(name, limitspec.PolicyLimit{Name: name, Limit: limit, Identity: id})
	if err != nil {
		return nil, err
	}
	lim, err := goimpl.New(goimpl.Options{NoSweeper: true})
	if err != nil {
		return nil, err
	}
	req := limitspec.Request{Policy: p.WithHolds(), IDs: map[string]string{id: id}}
	return &holdRun{lim: lim, req: req, held: map[string]int64{}}, nil
}

// close closes the run's limiter.
func (r *holdRun) close() { r.lim.Close() }

// reserve makes the calls due by at, then reserves amount for id at at;
// when admitted, it schedules end.
func (r *holdRun) reserve(ctx context.Context, at time.Duration, id string, amount int64, end ending) (limitspec.Result, error) {
	if err := r.until(ctx, at); err != nil {
		return limitspec.Result{}, err
	}
	res, err := r.call(ctx, at, limitspec.Hold{Op: limitspec.Reserve, ID: id, For: holdFor}, amount)
	if err != nil || !res.Allowed {
		return res, err
	}
	i := slices.IndexFunc(r.ends, func(e ending) bool { return e.at > end.at }) // after those of its time
	if i < 0 {
		i = len(r.ends)
	}
	r.ends = slices.Insert(r.ends, i, end)
	return res, nil
}

// until makes, in time order, the scheduled ends and the watches due by
// t; an end and a watch of one time, the end first.
func (r *holdRun) until(ctx context.Context, t time.Duration) error {
	for {
		endDue := len(r.ends) > 0 && r.ends[0].at <= t
		watchDue := r.every > 0 && r.next <= t
		switch {
		case endDue && (!watchDue || r.ends[0].at <= r.next):
			e := r.ends[0]
			r.ends = r.ends[1:]
			if _, err := r.call(ctx, e.at, limitspec.Hold{Op: e.op, ID: e.id}, e.spent); err != nil {
				return err
			}
		case watchDue:
			if err := r.watch(ctx, r.next); err != nil {
				return err
			}
			r.next += r.every
		default:
			return nil
		}
	}
}

// call makes one operation h at at, costing cost, and keeps track of the
// holds; a watching run records it, and watches just before and after.
func (r *holdRun) call(ctx context.Context, at time.Duration, h limitspec.Hold, cost int64) (limitspec.Result, error) {
	if err := r.watch(ctx, at); err != nil {
		return limitspec.Result{}, err
	}
	req := r.req
	req.Cost, req.Peek, req.Now = cost, cost == 0, start.Add(at) // a release or renew takes no amount
	res, err := r.lim.Hold(ctx, req, h)
	if err != nil {
		return res, fmt.Errorf("%s %s at %v: %w", h.Op, h.ID, at, err)
	}
	switch {
	case h.Op == limitspec.Reserve && res.Allowed:
		r.held[h.ID] = cost
	case h.Op != limitspec.Reserve:
		delete(r.held, h.ID)
	}
	if r.every > 0 {
		r.events = append(r.events, event{at, h.Op, h.ID, cost, res.Allowed})
	}
	return res, r.watch(ctx, at)
}

// watch records, in a watching run, the tokens held at at and the
// remaining that a decision of cost 0 reports.
func (r *holdRun) watch(ctx context.Context, at time.Duration) error {
	if r.every == 0 {
		return nil
	}
	req := r.req
	req.Cost, req.Costs, req.Peek, req.Now = 0, nil, true, start.Add(at)
	res, err := r.lim.Limit(ctx, req)
	if err != nil {
		return fmt.Errorf("peek at %v: %w", at, err)
	}
	var held int64
	for _, amount := range r.held {
		held += amount
	}
	r.samples = append(r.samples, sample{at, held, res.Limits[0].Remaining})
	return nil
}
