package fallback

import (
	"context"
	"errors"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limiters"
)

// Holds (docs/semantics.md, "Holds") through the fallback. A holding
// policy's calls, its decisions and the operations on its holds, go to
// the primary while the breaker lets them; while it fails, the mode
// decides:
//
//   - Local: while the breaker is closed, a decision or a reserve that
//     fails is denied (Side limitspec.FailClosed, RetryAfter 1 ms: the
//     next call tries the primary), not decided locally: other calls
//     still reach the primary meanwhile, and what they hold there, the
//     local limiter cannot know of (an in-flight limit's holds are never
//     told to the primary afterwards either). Once the breaker is open
//     (the primary failing, not one call), the local limiter, a
//     limitspec.Holder, runs the call on its own holds, with each amount (its Cost and each of its Costs) times
//     Processes, as for any decision; an operation on a hold the local
//     limiter does not have (one the primary holds) returns the
//     primary's error; a commit or release so failed is kept and sent
//     to the primary again once it answers (settle.go), as is a
//     release of a reserve whose outcome was unknown. Once the
//     primary answers again, a commit, release or renew it answers with
//     ErrNoHold runs on the local limiter, which may hold the id
//     (reserved while the primary failed): a local hold ends when its
//     holder ends it, not only at its length. The local limiter starts
//     each limit from the primary's last answer to a holding call, at
//     each outage (a rate limit's amount used forced on it, an in-flight
//     limit's held until the end of the primary's last hold:
//     reports.go's seedHold); what it charges (an admitted decision, a
//     commit) is told to the primary before its next call, as a
//     decision's local admissions are; its holds are not.
//   - FailOpen admits a decision or a reserve; FailClosed denies them.
//     A commit, release or renew returns the primary's error (a commit
//     or release is kept, and sent again, as in Local mode).
//
// So while the primary is away, each process holds and charges at most
// its share of what each limit had left when the primary last answered;
// the primary keeps counting what it held until each hold ends (at most
// the hold's length) or it hears of its end afterwards:
// docs/semantics.md, "Holds behind the fallback", states the bound.

// Hold runs h on req's holding policy (see limitspec.Holder), by the
// primary, or without it as the mode says. Both limiters must implement
// limitspec.Holder, else the error matches limitspec.ErrMisconfigured.
func (l *Limiter) Hold(ctx context.Context, req limitspec.Request, h limitspec.Hold) (limitspec.Result, error) {
	if err := limiters.Defaults(&req, limiters.TakesAmount(h.Op)); err != nil {
		return limitspec.Result{}, err
	}
	return l.holding(ctx, req, &h)
}

// holding runs h on req's holding policy, or decides it when h is nil.
func (l *Limiter) holding(ctx context.Context, req limitspec.Request, h *limitspec.Hold) (limitspec.Result, error) {
	if err := ctx.Err(); err != nil {
		return l.fail(err)
	}
	var failure error = limitspec.ErrUnavailable
	fault, closed := downed, false
	if call, probe := l.br.acquire(l.now()); call {
		closed = !probe
		sent := l.reports.send()
		var res limitspec.Result
		var err error
		res, fault, err = l.callPrimary(ctx, probe, func(pctx context.Context) (limitspec.Result, bool, error) {
			if err := l.pay(pctx, req); err != nil {
				return limitspec.Result{}, false, err
			}
			res, err := runHold(pctx, l.primary, req, h)
			return res, true, err
		})
		if fault == answered && err == nil && l.modeOf(req) == Local && !limiters.IsNil(l.local) {
			l.reports.recordHolds(req, res, l.now(), sent)
		}
		if fault == answered && !l.localHolds(req, h, err) {
			l.settleOwed(ctx)
			return res, err
		}
		failure = err
	}
	if fault == ranMaybe && h != nil && h.Op == limitspec.Reserve && l.modeOf(req) != FailOpen {
		l.owed.owe(undoReserve(req, h.ID, l.now().Add(undoAfter)))
	}
	if closed && fault != answered && (h == nil || h.Op == limitspec.Reserve) && l.modeOf(req) == Local {
		return l.failClosed(), nil
	}
	res, err := l.holdWithout(ctx, req, h, failure)
	if owed(h, err) {
		l.owed.owe(settle{req: req, h: *h})
	}
	return res, err
}

// undoReserve is the release owed to the primary for a reserve of id
// whose outcome is unknown (its reply lost, or late: the primary may
// hold it), decided without the primary: in mode Local the local
// limiter holds it if it admitted it, and its holder's commit or release
// ends it there (on the primary, whichever of the two comes first ends
// the primary's hold: a commit the primary no longer has runs on the
// local limiter); in mode FailClosed it was denied. Either way no holder
// ends the primary's hold, which would otherwise count until its end. In
// mode FailOpen its holder was admitted with no hold anywhere, and
// commits or releases it on the primary itself. It is due at due
// (settle.go, undoAfter).
func undoReserve(req limitspec.Request, id string, due time.Time) settle {
	req.Cost, req.Costs, req.Peek = 0, nil, false
	return settle{req: req, h: limitspec.Hold{Op: limitspec.Release, ID: id}, due: due}
}

// owed reports whether h, a commit or release, failed for want of the
// primary (err): neither limiter ended its hold, which the primary is
// then owed (settle.go).
func owed(h *limitspec.Hold, err error) bool {
	return h != nil && (h.Op == limitspec.Commit || h.Op == limitspec.Release) && err != nil &&
		limiters.Outage(err) && !errors.Is(err, limitspec.ErrNoHold)
}

// localHolds reports whether h, a commit, release or renew the primary
// answered err, may be the local limiter's: the primary holds nothing
// for its id (ErrNoHold), and the local limiter, in mode Local, may hold
// it, reserved while the primary failed. holdWithout then runs it there,
// and answers the primary's error when the local limiter holds nothing
// either: so a hold reserved locally ends when its holder commits or
// releases it, whichever side answers by then.
func (l *Limiter) localHolds(req limitspec.Request, h *limitspec.Hold, err error) bool {
	return h != nil && h.Op != limitspec.Reserve && errors.Is(err, limitspec.ErrNoHold) &&
		l.modeOf(req) == Local && !limiters.IsNil(l.local)
}

// holdWithout runs h (nil: a decision) on req's holding policy without
// the primary, whose failure was failure.
func (l *Limiter) holdWithout(ctx context.Context, req limitspec.Request, h *limitspec.Hold, failure error) (limitspec.Result, error) {
	settles := h != nil && h.Op != limitspec.Reserve
	switch mode := l.modeOf(req); {
	case settles && mode != Local:
		return l.fail(failure)
	case mode == FailOpen:
		return l.decided(limitspec.Result{Allowed: true}, limitspec.FailOpen), nil
	case mode == FailClosed:
		return l.failClosed(), nil
	case mode != Local || limiters.IsNil(l.local):
		return l.fail(errors.Join(limitspec.ErrMisconfigured, failure))
	}
	scaled, err := l.scaled(req)
	if err != nil {
		return l.fail(err)
	}
	if err := l.start(ctx, req); err != nil {
		return l.fail(err)
	}
	res, err := runHold(ctx, l.local, scaled, h)
	switch {
	case errors.Is(err, limitspec.ErrNoHold):
		return l.fail(failure) // the primary holds it, if anyone does
	case err != nil:
		return l.fail(err)
	case h == nil && res.Allowed, h != nil && h.Op == limitspec.Commit:
		l.reports.owe(req) // charged locally: the primary is told (pay)
	}
	if l.processes > 1 {
		share(&res, l.processes)
	}
	return l.decided(res, limitspec.Fallback), nil
}

// runHold runs h on lim (nil: decides req).
func runHold(ctx context.Context, lim limitspec.Limiter, req limitspec.Request, h *limitspec.Hold) (limitspec.Result, error) {
	if h == nil {
		return lim.Limit(ctx, req)
	}
	holder, ok := lim.(limitspec.Holder)
	if !ok {
		return limitspec.Result{}, misconfigured("fallback: %T keeps no holds (it does not implement limitspec.Holder)", lim)
	}
	return holder.Hold(ctx, req, *h)
}
