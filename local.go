package limitspec

import (
	"context"
	"time"

	"github.com/limitspec/limitspec/goimpl"
)

// windowed is implemented by goimpl's limiters: the window of the spec's
// `window` expression, in ms (0: none).
type windowed interface{ WindowMs() int64 }

// policyWindows is implemented by goimpl.Policy: each limit's window.
type policyWindows interface{ LimitWindowsMs() []int64 }

// Local makes a goimpl limiter a Limiter, deciding in process memory;
// name names its quota in Result.Limits (the algorithm's name, for
// example). A zero Request.Now decides at the process clock. Inputs
// reach the limiters that take them (goimpl.InputLimiter).
func Local(name string, l goimpl.Limiter) Limiter {
	var window time.Duration
	if w, ok := l.(windowed); ok {
		window = time.Duration(w.WindowMs()) * time.Millisecond
	}
	return &local{name: name, l: l, window: window}
}

type local struct {
	name   string
	l      goimpl.Limiter
	window time.Duration
}

func (a *local) Limit(ctx context.Context, req Request) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	now := nowMs(req.Now)
	var r goimpl.Result
	var err error
	in, ok := a.l.(goimpl.InputLimiter)
	switch {
	case ok:
		args := inputs(in.Inputs(), req.Inputs)
		if req.Force {
			r, err = in.ForceInputs(req.Key, now, req.Cost, args...)
		} else {
			r, err = in.AllowInputs(req.Key, now, req.Cost, args...)
		}
	case req.Force:
		f, ok := a.l.(goimpl.Forcer)
		if !ok {
			return Result{}, &goimpl.InputError{Msg: a.name + ": this limiter has no forced call"}
		}
		r, err = f.Force(req.Key, now, req.Cost)
	default:
		r, err = a.l.Allow(req.Key, now, req.Cost)
	}
	if err != nil {
		return Result{}, err
	}
	return Result{Result: r, Limits: []Quota{{Name: a.name, Window: a.window, Result: r}}}, nil
}

// Reset deletes the state of req.Key.
func (a *local) Reset(ctx context.Context, req Request) error {
	r, ok := a.l.(goimpl.Resetter)
	if !ok {
		return &goimpl.InputError{Msg: a.name + ": this limiter has no reset"}
	}
	return r.Reset(req.Key)
}

// LocalPolicy makes a goimpl policy a Limiter, deciding in process
// memory; Request.IDs are its identity values. A zero Request.Now
// decides at the process clock.
func LocalPolicy(p *goimpl.Policy) Limiter {
	lp := &localPolicy{p: p, names: p.LimitNames(), windows: make([]time.Duration, len(p.LimitNames()))}
	if w, ok := any(p).(policyWindows); ok {
		for i, ms := range w.LimitWindowsMs() {
			lp.windows[i] = time.Duration(ms) * time.Millisecond
		}
	}
	return lp
}

type localPolicy struct {
	p       *goimpl.Policy
	names   []string
	windows []time.Duration
}

func (a *localPolicy) Limit(ctx context.Context, req Request) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	call := a.p.Allow
	if req.Force {
		call = a.p.Force
	}
	r, err := call(req.IDs, nowMs(req.Now), req.Cost)
	if err != nil {
		return Result{}, err
	}
	return PolicyResult(a.names, a.windows, r.Result, r.Index, r.Limits), nil
}

// Reset deletes every limit's state for req.IDs.
func (a *localPolicy) Reset(ctx context.Context, req Request) error { return a.p.Reset(req.IDs) }

// PolicyResult assembles a policy's Result from the binding result, its
// index from 1 and each limit's result, named and windowed in order.
func PolicyResult(names []string, windows []time.Duration, binding goimpl.Result, index int, limits []goimpl.Result) Result {
	out := Result{Result: binding, Index: index, Limits: make([]Quota, len(limits))}
	for i, r := range limits {
		out.Limits[i] = Quota{Name: names[i], Window: windows[i], Result: r}
	}
	return out
}

// nowMs is t in ms since the epoch, or goimpl.Now for the zero Time.
func nowMs(t time.Time) int64 {
	if t.IsZero() {
		return goimpl.Now
	}
	return t.UnixMilli()
}

// inputs orders the named inputs as names lists them.
func inputs(names []string, byName map[string]string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = byName[n]
	}
	return out
}

// Resetter is implemented by the limiters that can delete a key's state
// (an algorithm's: req.Key; a policy's: every limit's for req.IDs), so
// that the next request is decided as on a fresh key.
type Resetter interface {
	Reset(ctx context.Context, req Request) error
}
