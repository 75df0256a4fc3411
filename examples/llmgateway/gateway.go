package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/limitspec/limitspec"
)

// action is what a step of the simulation does.
type action uint8

const (
	// reserve holds the request's max_tokens before the model is called.
	reserve action = iota + 1
	// finish takes the model's answer: it commits the tokens it used, or
	// releases the hold when the model failed.
	finish
	// commitAgain sends the request's commit again, as a gateway does
	// when the reply to the first was lost.
	commitAgain
	// peek is a decision of cost 0: what the key has left, charging
	// nothing.
	peek
)

// step is one event of the simulation.
type step struct {
	at  time.Duration // since start
	req string        // the request's id; "" for a peek
	act action
}

// steps are the simulation: three requests at once, the third denied
// while the first two hold 800 tokens; it gets in once the first has
// committed what it used. The second's commit is sent again. The third's
// model call fails. A fourth comes later, and a minute after it the key
// has its whole budget again.
var steps = []step{
	{0, "req-1", reserve},
	{100 * time.Millisecond, "req-2", reserve},
	{200 * time.Millisecond, "req-3", reserve},
	{1500 * time.Millisecond, "req-1", finish},
	{1500 * time.Millisecond, "req-3", reserve},
	{3 * time.Second, "req-2", finish},
	{3 * time.Second, "req-2", commitAgain},
	{3 * time.Second, "", peek},
	{4500 * time.Millisecond, "req-3", finish},
	{6 * time.Second, "req-4", reserve},
	{9 * time.Second, "req-4", finish},
	{69 * time.Second, "", peek},
}

// outcome is what a step got.
type outcome struct {
	step
	res limitspec.Result
	// err is a commitAgain's error, which matches limitspec.ErrNoHold
	// when the first commit took effect; modelErr a finish's model
	// failure.
	err, modelErr error
	// spent is the tokens a commit charges; held is the tokens the
	// gateway holds after the step.
	spent, held int64
}

// gateway runs the steps on a limiter, keeping the holds it has taken
// and what each committed request spent.
type gateway struct {
	lim    holdingLimiter
	policy *limitspec.Policy
	held   map[string]int64
	spent  map[string]int64
}

func newGateway(lim holdingLimiter, policy *limitspec.Policy) *gateway {
	return &gateway{lim: lim, policy: policy, held: map[string]int64{}, spent: map[string]int64{}}
}

// play runs the steps in order, printing a line for each to out, and
// returns their outcomes.
func play(ctx context.Context, g *gateway, out io.Writer) ([]outcome, error) {
	fmt.Fprintf(out, "api key %s: 1000 tokens a minute; a request holds its max_tokens while the model runs\n", apiKey)
	var outcomes []outcome
	for _, s := range steps {
		o, err := g.do(ctx, s)
		if err != nil {
			return outcomes, fmt.Errorf("%s at +%v: %w", s.req, s.at, err)
		}
		fmt.Fprintln(out, o)
		outcomes = append(outcomes, o)
	}
	return outcomes, nil
}

// request is the key's request of cost at s.
func (g *gateway) request(s step, cost int64) limitspec.Request {
	return limitspec.Request{Policy: g.policy, IDs: map[string]string{"api_key": apiKey}, Cost: cost, Now: start.Add(s.at)}
}

// do runs s. Its error is the limiter's, but for a commitAgain that
// matches limitspec.ErrNoHold: the outcome keeps that one.
func (g *gateway) do(ctx context.Context, s step) (outcome, error) {
	o := outcome{step: s}
	var err error
	switch s.act {
	case reserve:
		maxTokens := requests[s.req].maxTokens
		o.res, err = g.lim.Hold(ctx, g.request(s, maxTokens), limitspec.Hold{Op: limitspec.Reserve, ID: s.req, For: holdFor})
		if err == nil && o.res.Allowed {
			g.held[s.req] = maxTokens
		}
	case finish:
		err = g.finish(ctx, &o)
	case commitAgain:
		o.spent = g.spent[s.req]
		o.res, o.err = g.lim.Hold(ctx, g.request(s, o.spent), limitspec.Hold{Op: limitspec.Commit, ID: s.req})
		if o.err != nil && !errors.Is(o.err, limitspec.ErrNoHold) {
			err = o.err
		}
	case peek:
		o.res, err = g.lim.Limit(ctx, g.request(s, 0))
	}
	for _, n := range g.held {
		o.held += n
	}
	return o, err
}

// finish calls the model for o's request and commits the tokens its
// answer took, or releases the request's hold when it failed.
func (g *gateway) finish(ctx context.Context, o *outcome) error {
	used, err := callModel(o.req)
	h := limitspec.Hold{Op: limitspec.Commit, ID: o.req}
	if err != nil {
		o.modelErr, h.Op, used = err, limitspec.Release, 0 // a release takes cost 0
	}
	o.spent = used
	o.res, err = g.lim.Hold(ctx, g.request(o.step, used), h)
	if err != nil {
		return err
	}
	delete(g.held, o.req)
	if h.Op == limitspec.Commit {
		g.spent[o.req] = used
	}
	return nil
}

// String is o's line: the step's time, its request, what it did and what
// the key has left.
func (o outcome) String() string {
	var what, got string
	maxTokens := requests[o.req].maxTokens
	switch {
	case o.act == reserve && o.res.Allowed:
		what, got = fmt.Sprintf("reserve %d", maxTokens), "admitted, "+o.left()
	case o.act == reserve:
		what, got = fmt.Sprintf("reserve %d", maxTokens), fmt.Sprintf("denied, %s; retry after %v", o.left(), o.res.RetryAfter)
	case o.act == finish && o.modelErr != nil:
		what, got = fmt.Sprintf("release %d", maxTokens), fmt.Sprintf("%v; %s", o.modelErr, o.left())
	case o.act == finish:
		what, got = fmt.Sprintf("commit %d of %d", o.spent, maxTokens), o.left()
	case o.act == commitAgain && errors.Is(o.err, limitspec.ErrNoHold):
		what, got = fmt.Sprintf("commit %d again", o.spent), "no live hold: nothing charged"
	case o.act == commitAgain:
		what, got = fmt.Sprintf("commit %d again", o.spent), "charged again: "+o.left()
	default:
		what, got = "peek", o.left()
	}
	return fmt.Sprintf("%9s  %-5s  %-17s  %s", fmt.Sprintf("+%.3fs", o.at.Seconds()), o.req, what, got)
}

// left is the tokens the key has left, and those the gateway holds.
func (o outcome) left() string {
	return fmt.Sprintf("remaining %d (held %d)", o.res.Limits[0].Remaining, o.held)
}
