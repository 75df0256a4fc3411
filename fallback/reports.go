package fallback

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/keyed"
	"github.com/limitspec/limitspec/internal/limiters"
)

// reports remembers, per key and limit, and per limit of a policy and
// the value of its identity (a part), how much of the limit the primary
// last reported used, so that the local limiter starts each limit from
// there instead of from a full limit; and, per part, what the local
// limiter admitted on it, in its limit's unit, that the primary is to be
// told. It holds at most about max entries; a full shard forgets an
// entry at random (whose local limit then starts from what it holds, and
// whose debt is lost).
type reports struct {
	m *keyed.Map[report]
	// parts holds each policy's limits as policies of one limit (a
	// *limitspec.Policy to its []*limitspec.Policy), whose states are
	// the policy's own (same limit names); at most maxPolicies
	// policies, then forgotten all at once (a program that builds a
	// policy per request would otherwise grow it without end), and
	// policies counts them.
	parts    sync.Map
	policies atomic.Int64
	// shared maps each part's policy to the part whose report it shares
	// (a *limitspec.Policy to a *limitspec.Policy): the first part made of
	// the same state (limits of one name and limitspec.StateNamer's
	// State in several policies, the plans of a service, share it, their
	// amounts apart), so that the local state is started once, from the
	// primary's last word on it, whichever plan spoke. byState finds that
	// part by the state's name and identity. Both are forgotten with
	// parts.
	shared, byState sync.Map
	// owing counts the reports that owe the primary (owed is not 0, or
	// a payment is under way), so that a key owes nothing, without a
	// lock, while no key does.
	owing atomic.Int64
	// sent counts the primary calls sent, so that a reply is known to
	// come from a call sent after another's reply was recorded.
	sent atomic.Uint64
}

// report is the primary's last word on one limit of a key (a request's
// limit, or one limit of a policy for one value of its identity: a
// part): the amount it had used, until when that amount matters (its
// ResetAfter), and whether the local limiter has been started from it
// (seeded). A seeded part's local state is kept: every admission the
// primary reports for it from then on is forced on the local limiter too
// (mirrored), and no report replaces it. A part's report also holds its
// debt (owed, paying), in the unit of its limit: a policy's limits are
// paid each its own amounts.
type report struct {
	used  int64
	until time.Time
	// seeded is nil until a call starts the local limiter from the
	// report, and closed once it has: the key's other local decisions
	// and mirrored admissions wait for it, lest the start (a reset)
	// erase them.
	seeded chan struct{}
	// heard is reports.sent when the last reply was recorded: a call
	// numbered above it was sent after, and decided after, that reply.
	heard uint64
	// owed is what the local limiter admitted on the part (the sum of
	// the amounts of its limit, in its unit) since the primary was last
	// told, which the primary is told (forced) before its next decision
	// of a request of the part, so that it counts them too.
	owed int64
	// seedHold names the local hold an in-flight limit's part was last
	// started with (seedHold), released when it starts again.
	seedHold string
	// paying is not nil while a call tells the primary what was owed; it
	// is closed when that call has returned. The key's other primary
	// decisions wait for it: sent before the payment lands, they would be
	// decided as if the local admissions had not been made.
	paying chan struct{}
	// unsure is a payment that failed (its reply lost, or the primary
	// down), sent again with its request id before anything else is
	// paid: the primary replays it if it was applied, and applies it if
	// it was not (docs/semantics.md, "Request ids").
	unsure payment
}

// payment is what one call tells the primary of a part: an amount of
// its limit's unit, forced, under a request id.
type payment struct {
	amount int64
	id     string
}

// owes reports whether rep counts in reports.owing.
func (rep *report) owes() bool { return rep.owed != 0 || rep.paying != nil || rep.unsure.amount != 0 }

// owes reports whether any part owes the primary, without a lock.
func (r *reports) owes() bool { return r.owing.Load() != 0 }

func newReports(max int) *reports {
	r := &reports{}
	r.m = keyed.New(max, func(gone *report) {
		if gone.owes() {
			r.owing.Add(-1)
		}
	})
	return r
}

// with calls f with req's report, under its shard's lock: nil when
// there is none and create is false. It keeps owing up to date with
// what f does to the report's debt.
func (r *reports) with(req limitspec.Request, create bool, f func(*report)) {
	if p, ok := r.shared.Load(req.Policy); ok && req.Policy != nil {
		req.Policy = p.(*limitspec.Policy)
	}
	r.m.With(req, create, func(rep *report) {
		owed := rep != nil && rep.owes()
		f(rep)
		switch now := rep != nil && rep.owes(); {
		case now && !owed:
			r.owing.Add(1)
		case owed && !now:
			r.owing.Add(-1)
		}
	})
}

// send numbers a primary call about to be sent, for record.
func (r *reports) send() uint64 { return r.sent.Add(1) }

// record keeps the primary's result for req, decided at now by the call
// numbered call (send), in the report of each of req's parts. It returns
// the start channels of the parts the local limiter has been started
// from (seeded): the primary's admission is to be mirrored to the local
// limiter once they are closed. Replies of calls that overlapped may
// arrive in another order than the primary decided them: a reply
// replaces the report of a call decided before it (the call was sent
// after that report was recorded), and is otherwise merged with it, the
// larger amount used kept, so that the local limiter never starts from
// less than the primary's last word.
func (r *reports) record(req limitspec.Request, res limitspec.Result, now time.Time, call uint64) (seeded []chan struct{}) {
	for i, part := range r.partsOf(req) {
		if i < len(res.Limits) {
			seeded = r.recordPart(part, res.Limits[i], now, call, seeded, false)
		}
	}
	return seeded
}

// recordHolds keeps the primary's word res on req, a call of a holding
// policy, as record does, but that a part started already is started
// again, from this word, at the next outage: the local limiter is not
// told what the primary holds and charges meanwhile (holds are not
// mirrored), so that its state would be stale.
func (r *reports) recordHolds(req limitspec.Request, res limitspec.Result, now time.Time, call uint64) {
	for i, part := range r.partsOf(req) {
		if i < len(res.Limits) {
			r.recordPart(part, res.Limits[i], now, call, nil, true)
		}
	}
}

// recordPart is record's work for one part, decided as lr says, its
// start channel appended to seeded if it was started.
func (r *reports) recordPart(part limitspec.Request, lr limitspec.LimitResult, now time.Time, call uint64, seeded []chan struct{}, reseed bool) []chan struct{} {
	r.with(part, true, func(rep *report) {
		switch {
		case rep.seeded != nil && reseed && closed(rep.seeded):
			rep.seeded = nil // started from this word at the next outage
		case rep.seeded != nil:
			seeded = append(seeded, rep.seeded)
			return
		}
		used, reset := lr.Quota-lr.Remaining, lr.ResetAfter
		if call <= rep.heard {
			used, reset = max(used, rep.used), max(reset, rep.until.Sub(now))
		}
		rep.used, rep.until, rep.heard = used, now.Add(reset), r.sent.Load()
	})
	return seeded
}

// start is the start of one part of a request's local state: the amount
// the local limiter is to start it from, with the channel the caller
// closes once it has (seeding); or, when another call has taken it, that
// call's channel (wait), closed once the part has been started. Both are
// nil when the part has no report: it starts from what the local limiter
// holds (full, for a limit it never decided). An in-flight limit's
// amount is held (seedHold) until the report's until, the end of the
// primary's last hold; hold names the hold of its previous start, which
// the new one replaces.
type start struct {
	part          limitspec.Request
	amount        int64
	until         time.Time
	hold          string
	seeding, wait chan struct{}
}

// closed reports whether ch is closed.
func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// take returns, once per part of req, the start of its local state at
// now (an amount of 0 once the report's ResetAfter has passed).
func (r *reports) take(req limitspec.Request, now time.Time) []start {
	parts := r.partsOf(req)
	starts := make([]start, len(parts))
	for i, part := range parts {
		starts[i] = r.takePart(part, now)
	}
	return starts
}

// takePart is take's work for one part.
func (r *reports) takePart(part limitspec.Request, now time.Time) start {
	st := start{part: part}
	r.with(part, false, func(rep *report) {
		switch {
		case rep == nil:
		case rep.seeded != nil:
			st.wait = rep.seeded
		default:
			st.seeding = make(chan struct{})
			rep.seeded = st.seeding
			if now.Before(rep.until) {
				st.amount, st.until = rep.used, rep.until
			}
			st.hold = rep.seedHold
		}
	})
	return st
}

// partsOf is req's parts, each a request of one limit whose report is
// kept apart: req itself for a limit; for a policy, a request of each of
// its limits alone for the value of its identity, so that a limit
// shared by requests of other identities (an IP's, by each user behind
// it) has one report. A policy's part costs its limit's amount of req
// (limitspec.Policy.Costs: its unit's in req.Costs, else req.Cost), in
// Cost, as a policy of one limit counts it.
func (r *reports) partsOf(req limitspec.Request) []limitspec.Request {
	if req.Policy == nil {
		return []limitspec.Request{req}
	}
	ones := r.onesOf(req.Policy)
	limits := req.Policy.Limits()
	var costs []int64
	if len(req.Costs) > 0 {
		// A unit no limit counts is the limiters' to refuse; each
		// limit's amount is given all the same.
		costs, _ = req.Policy.Costs(req, make([]int64, 0, len(limits)))
	}
	parts := make([]limitspec.Request, len(limits))
	for i, pl := range limits {
		cost := req.Cost
		if costs != nil {
			cost = costs[i]
		}
		parts[i] = limitspec.Request{Policy: ones[i], Now: req.Now, Cost: cost, Force: req.Force, Inputs: req.Inputs}
		if pl.Identity != "" {
			parts[i].IDs = map[string]string{pl.Identity: req.IDs[pl.Identity]}
		}
	}
	return parts
}

// onesOf is p's limits, each as a policy of its own under p's name, made
// once per policy: a policy's limit's state is named by the limit's name
// (not the policy's), so that each decides the state of p's limit, with
// p's amounts; parts of other policies on the same state share its
// report (shared).
func (r *reports) onesOf(p *limitspec.Policy) []*limitspec.Policy {
	if ones, ok := r.parts.Load(p); ok {
		return ones.([]*limitspec.Policy)
	}
	limits := p.Limits()
	ones := make([]*limitspec.Policy, len(limits))
	for i, pl := range limits {
		one, err := limitspec.NewPolicy(p.Name(), pl)
		if err != nil { // a limit of a valid policy is a valid policy
			panic(err)
		}
		ones[i] = one
		if sn, ok := pl.Limit.(limitspec.StateNamer); ok && sn.State() != "" {
			state := pl.Identity + "\x00" + pl.Constant + "\x00" + limiters.KeyInfix(pl) + "\x00" + sn.State()
			first, _ := r.byState.LoadOrStore(state, one)
			r.shared.Store(one, first)
		}
	}
	got, loaded := r.parts.LoadOrStore(p, ones)
	if !loaded && r.policies.Add(1) > maxPolicies {
		// Forgetting them loses the reports of their parts, whose local
		// limits then start from what they hold, as an entry of a full
		// shard does.
		r.parts.Clear()
		r.shared.Clear()
		r.byState.Clear()
		r.policies.Store(0)
	}
	return got.([]*limitspec.Policy)
}

// maxPolicies is the number of policies whose limits reports keeps as
// policies of one limit.
const maxPolicies = 1024

// owe adds req, admitted by the local limiter (or forced on it), to what
// the primary is to be told: each part's own amount (its Cost, in its
// limit's unit) to the part's debt. A part the primary never reported
// owes it too (a report is made for it): its local state started from
// what the local limiter held, and is kept as started (seeded), so that
// the primary's admissions heard from then on are forced on it, and no
// report made later resets it, erasing admissions the primary is owed.
func (r *reports) owe(req limitspec.Request) {
	for _, part := range r.partsOf(req) {
		if inFlight(part) || part.Cost <= 0 {
			continue // an in-flight limit keeps no state: its holds end by themselves
		}
		r.with(part, true, func(rep *report) {
			if rep.seeded == nil && rep.heard == 0 && rep.until.IsZero() {
				rep.seeded = started // made here: the primary never reported it
			}
			rep.owed += part.Cost
		})
	}
}

// started is the seeded channel of a part whose local state started from
// what the local limiter held (owe).
var started = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// debt takes what the primary is to be told of part (owed, or a payment
// that failed, to be sent again), with the channel the caller closes, by
// paid, once it has told it; or, while another call tells it, that
// call's channel to wait for (wait). It takes no lock while no part owes
// anything.
func (r *reports) debt(part limitspec.Request, newID func() string) (pay payment, paying, wait chan struct{}) {
	if r.owing.Load() == 0 {
		return payment{}, nil, nil
	}
	r.with(part, false, func(rep *report) {
		switch {
		case rep == nil:
		case rep.paying != nil:
			wait = rep.paying
		case rep.unsure.amount > 0:
			pay, rep.unsure = rep.unsure, payment{}
		case rep.owed > 0:
			pay, rep.owed = payment{rep.owed, newID()}, 0
		}
		if pay.amount > 0 {
			paying = make(chan struct{})
			rep.paying = paying
		}
	})
	return pay, paying, wait
}

// paid ends the payment pay of part that debt began with paying: when
// ok is false (the primary could not be told, or its reply was lost),
// pay is sent again, with its id, before anything else is paid.
func (r *reports) paid(part limitspec.Request, pay payment, paying chan struct{}, ok bool) {
	r.with(part, false, func(rep *report) {
		if rep == nil {
			return
		}
		if rep.paying == paying {
			rep.paying = nil
		}
		if !ok {
			rep.unsure = pay
		}
	})
	close(paying)
}

// seedHold starts the local limiter's holds of st's part, a limit in
// flight (concurrency, which keeps no state), from the primary's last
// word: one hold of the amount the primary held (id, a name of its own),
// until the end of the primary's last hold, the previous start's hold
// released. It returns the hold's id ("" when none is held).
func seedHold(ctx context.Context, local limitspec.Limiter, st start, id string, now time.Time) (string, error) {
	holder, ok := local.(limitspec.Holder)
	if !ok {
		return "", nil
	}
	req := st.part
	req.Policy, req.Cost, req.Costs, req.Force, req.Now = req.Policy.WithHolds(), 0, nil, false, now
	if st.hold != "" {
		if _, err := holder.Hold(ctx, req, limitspec.Hold{Op: limitspec.Release, ID: st.hold}); err != nil && !errors.Is(err, limitspec.ErrNoHold) {
			return "", err
		}
	}
	left := st.until.Sub(now)
	if st.amount == 0 || left < time.Millisecond {
		return "", nil
	}
	req.Cost = st.amount
	_, err := holder.Hold(ctx, req, limitspec.Hold{Op: limitspec.Reserve, ID: id, For: min(left, 24*time.Hour)})
	return id, err
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
