package fallback

import (
	"context"
	"fmt"

	"github.com/limitspec/limitspec"
)

// The methods the limiters a Limiter wraps have beside Limit, Hold,
// Reset and Check (and Bind and BindPolicy, bound.go), so that a service
// swaps a goimpl or redislimit limiter for a fallback pair of them
// without changing its calls.

// Allow decides a request of cost 1 for key by limit, as Limit decides
// it.
func (l *Limiter) Allow(ctx context.Context, key string, limit limitspec.Limit) (limitspec.Result, error) {
	return l.Limit(ctx, limitspec.Request{Key: key, Limit: limit, Cost: 1})
}

// viewer is a limiter that runs the views of its algorithms, as goimpl's
// and redislimit's do.
type viewer interface {
	View(ctx context.Context, view string, req limitspec.Request) ([][]any, error)
}

// View runs a read-only view of req's state (see goimpl.Limiter.View) on
// the primary limiter, whose state is the one that counts, with the
// deadline Timeout, whatever the breaker's state: an error when it does
// not answer, never the local limiter's entries, which count only what
// this process decided while the primary was away. It writes nothing. A
// primary without views is refused (limitspec.ErrBadInput).
func (l *Limiter) View(ctx context.Context, view string, req limitspec.Request) ([][]any, error) {
	v, ok := l.primary.(viewer)
	if !ok {
		return nil, badInput("fallback: the primary limiter (%T) has no View", l.primary)
	}
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	entries, err := v.View(ctx, view, req)
	if err != nil {
		return nil, fmt.Errorf("fallback: the primary limiter's view: %w", err)
	}
	return entries, nil
}
