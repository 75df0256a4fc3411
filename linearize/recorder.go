package linearize

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitspec/limitspec"
)

// Limiter is what a Recorder calls: a limiter that decides and holds
// (package redislimit's, goimpl's, fallback's).
type Limiter interface {
	limitspec.Limiter
	limitspec.Holder
}

// Recorder records the calls many clients make on one Limiter, for a
// holding policy, as a history. Each call carries an explicit Now from a
// logical clock the clients share, which moves forward by one ms at each
// call's invocation: a call that returns before another is invoked has
// the earlier Now, so that time agrees with the real-time order
// linearizability keeps. Each call runs under a deadline of its own. Its
// methods are safe for concurrent use.
type Recorder struct {
	lim      Limiter
	spec     Spec
	policy   *limitspec.Policy
	deadline time.Duration
	clock    atomic.Int64
	start    time.Time

	mu    sync.Mutex
	calls []Call
}

// NewRecorder records calls on lim of spec's holding policy, each under
// deadline, their Now counted from startMs (ms since the epoch).
func NewRecorder(lim Limiter, spec Spec, startMs int64, deadline time.Duration) (*Recorder, error) {
	p, err := spec.Policy()
	if err != nil {
		return nil, err
	}
	r := &Recorder{lim: lim, spec: spec, policy: p, deadline: deadline, start: time.Now()}
	r.clock.Store(startMs)
	return r, nil
}

// Do makes the call in for client (its Now is the clock's, whatever
// in.Now says), records it, and returns its outcome.
func (r *Recorder) Do(ctx context.Context, client int, in Input) Output {
	invoked := time.Since(r.start).Nanoseconds()
	in.Now = r.clock.Add(1)
	ctx, cancel := context.WithTimeout(ctx, r.deadline)
	res, err := r.call(ctx, in)
	cancel()
	returned := time.Since(r.start).Nanoseconds()
	out := Outcome(res, err)
	r.mu.Lock()
	r.calls = append(r.calls, Call{Client: client, Input: in, Output: out, Call: invoked, Return: returned, TimedOut: err != nil && timeout(err)})
	r.mu.Unlock()
	return out
}

// call is in on the limiter.
func (r *Recorder) call(ctx context.Context, in Input) (limitspec.Result, error) {
	req := limitspec.Request{Policy: r.policy, IDs: map[string]string{r.spec.Identity: in.Value}, Cost: in.Cost, Peek: in.Cost == 0, Now: time.UnixMilli(in.Now)}
	if in.Op == Decide {
		return r.lim.Limit(ctx, req)
	}
	op, ok := holdOps[in.Op]
	if !ok {
		return limitspec.Result{}, fmt.Errorf("linearize: unknown op %q", in.Op)
	}
	return r.lim.Hold(ctx, req, limitspec.Hold{Op: op, ID: in.ID, For: time.Duration(in.HoldMs) * time.Millisecond})
}

var holdOps = map[string]limitspec.HoldOp{Reserve: limitspec.Reserve, Commit: limitspec.Commit, Release: limitspec.Release, Renew: limitspec.Renew}

// Calls are the calls recorded so far, in the order they returned.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}
