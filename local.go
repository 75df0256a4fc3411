package limitspec

import (
	"context"
	"time"

	"github.com/limitspec/limitspec/goimpl"
)

// Local makes a goimpl limiter a Limiter, deciding in process memory;
// name names its quota in Result.Limits (the algorithm's name, for
// example). A zero Request.Now decides at the process clock. Inputs
// reach the limiters that take them (goimpl.InputLimiter).
func Local(name string, l goimpl.Limiter) Limiter {
	return &local{name: name, l: l, window: Window(l)}
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
	return NewResult([]string{a.name}, []time.Duration{a.window}, r, 0, []goimpl.Result{r}), nil
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
	return &localPolicy{p: p, names: p.LimitNames(), windows: PolicyWindows(p)}
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
	return NewResult(a.names, a.windows, r.Result, r.Index, r.Limits), nil
}

// Reset deletes every limit's state for req.IDs.
func (a *localPolicy) Reset(ctx context.Context, req Request) error { return a.p.Reset(req.IDs) }

// NewResult assembles a Result from the decision (a policy's: its
// binding limit's), the binding limit's index from 1 (0 for an
// algorithm) and the result of each limit (an algorithm's one), named
// and windowed in order.
func NewResult(names []string, windows []time.Duration, decision goimpl.Result, index int, limits []goimpl.Result) Result {
	out := Result{Result: decision, Index: index, Limits: make([]Quota, len(limits))}
	for i, r := range limits {
		out.Limits[i] = Quota{Name: names[i], Window: windows[i], Result: r}
	}
	return out
}

// Window is the window a goimpl limiter states (goimpl.Windowed), 0 when
// it has none.
func Window(l goimpl.Limiter) time.Duration {
	if w, ok := l.(goimpl.Windowed); ok {
		return time.Duration(w.WindowMs()) * time.Millisecond
	}
	return 0
}

// PolicyWindows are the windows of a goimpl policy's limits, in order.
func PolicyWindows(p *goimpl.Policy) []time.Duration {
	ms := p.LimitWindowsMs()
	out := make([]time.Duration, len(ms))
	for i, w := range ms {
		out[i] = time.Duration(w) * time.Millisecond
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
