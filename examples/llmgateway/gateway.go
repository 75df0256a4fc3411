package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/limitspec/limitspec"
)

// start is the time of the simulation's first step; each step's is an
// offset from it. It is 20 s into a minute: the requests' window ends at
// +40 s.
var start = time.UnixMilli(1_700_000_000_000)

// apiKey is the key whose limits the requests spend.
const apiKey = "sk-demo"

// request is a chat completion as the gateway sees it: the most tokens
// it may use (its max_tokens), and what the simulated model spends on
// it, or that the model fails.
type request struct {
	maxTokens int64
	used      int64
	fails     bool
}

// requests are the simulation's, by id; a request's id names its hold.
var requests = map[string]request{
	"req-1": {maxTokens: 800, used: 350},
	"req-2": {maxTokens: 800, fails: true},
	"req-3": {maxTokens: 600, used: 500},
	"req-4": {maxTokens: 300, used: 280},
	"req-5": {maxTokens: 100, used: 60},
	"req-6": {maxTokens: 200, used: 180},
	"req-7": {maxTokens: 200, used: 150},
}

// errModel is the simulated model's failure.
var errModel = errors.New("the model timed out")

// callModel stands for the model answering request id: the tokens its
// answer took, or its failure.
func callModel(id string) (int64, error) {
	r := requests[id]
	if r.fails {
		return 0, errModel
	}
	return r.used, nil
}

// action is what a step of the simulation does.
type action uint8

const (
	// reserve holds the request's slot, request and max_tokens before
	// the model is called.
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

// steps are the simulation. Three requests are in flight at once; of
// the two others, one does not fit the tokens beside their holds, the
// other finds no slot. req-1's commit is sent again half a second later
// and gets the first reply, charging nothing; req-2's model fails and
// its hold is released. req-3 and req-5 get in once holds have ended.
// req-6 takes the minute's fifth request, and req-7 is denied by the
// requests limit alone until the minute ends, at +40 s. A minute after
// the last commit, the key has everything again.
var steps = []step{
	{0, "req-1", reserve},
	{100 * time.Millisecond, "req-2", reserve},
	{200 * time.Millisecond, "req-3", reserve},
	{300 * time.Millisecond, "req-4", reserve},
	{400 * time.Millisecond, "req-5", reserve},
	{1500 * time.Millisecond, "req-1", finish},
	{2 * time.Second, "req-1", commitAgain},
	{2 * time.Second, "", peek},
	{2500 * time.Millisecond, "req-2", finish},
	{2500 * time.Millisecond, "req-3", reserve},
	{3 * time.Second, "req-4", finish},
	{3500 * time.Millisecond, "req-5", reserve},
	{4 * time.Second, "req-3", finish},
	{4500 * time.Millisecond, "req-5", finish},
	{5 * time.Second, "req-6", reserve},
	{5500 * time.Millisecond, "req-7", reserve},
	{6 * time.Second, "req-6", finish},
	{40 * time.Second, "req-7", reserve},
	{41 * time.Second, "req-7", finish},
	{101 * time.Second, "", peek},
}

// outcome is what a step got.
type outcome struct {
	step
	res limitspec.Result
	// modelErr is a finish's model failure.
	modelErr error
	// spent is the tokens a commit charges.
	spent int64
	// first is, for a commitAgain, the reply of the request's first
	// commit.
	first limitspec.Result
	// holds and heldTokens are the requests the gateway holds after the
	// step (each a slot and a request) and their max_tokens.
	holds, heldTokens int64
}

// gateway runs the steps on a limiter, keeping the holds it has taken,
// and each committed request's tokens and its commit's reply.
type gateway struct {
	lim     holdingLimiter
	policy  *limitspec.Policy
	held    map[string]int64 // max_tokens by request id
	spent   map[string]int64
	replies map[string]limitspec.Result
}

// newGateway returns a gateway deciding by policy on lim, holding
// nothing yet.
func newGateway(lim holdingLimiter, policy *limitspec.Policy) *gateway {
	return &gateway{lim: lim, policy: policy, held: map[string]int64{},
		spent: map[string]int64{}, replies: map[string]limitspec.Result{}}
}

// play runs the steps in order, printing a line for each to out, and
// returns their outcomes.
func play(ctx context.Context, g *gateway, out io.Writer) ([]outcome, error) {
	fmt.Fprintf(out, "api key %s, policy llm: %d slots, %d requests a minute, %d tokens a minute\n", apiKey, demo.slots, demo.requests, demo.tokens)
	fmt.Fprintln(out, "a request reserves 1 slot, 1 request and its max_tokens, then commits the tokens it used (or releases)")
	fmt.Fprintln(out)
	fmt.Fprintln(out, header)
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

// request is the key's request at s: cost 1 (a slot, a request) and
// tokens, or a peek when cost is 0.
func (g *gateway) request(s step, cost, tokens int64) limitspec.Request {
	req := limitspec.Request{Policy: g.policy, IDs: map[string]string{"api_key": apiKey}, Cost: cost, Peek: cost == 0, Now: start.Add(s.at)}
	if cost > 0 {
		req.Costs = map[string]int64{"tokens": tokens}
	}
	return req
}

// do runs s.
func (g *gateway) do(ctx context.Context, s step) (outcome, error) {
	o := outcome{step: s}
	var err error
	switch s.act {
	case reserve:
		maxTokens := requests[s.req].maxTokens
		o.res, err = g.lim.Hold(ctx, g.request(s, 1, maxTokens), limitspec.Hold{Op: limitspec.Reserve, ID: s.req, For: holdFor})
		if err == nil && o.res.Allowed {
			g.held[s.req] = maxTokens
		}
	case finish:
		err = g.finish(ctx, &o)
	case commitAgain:
		o.spent, o.first = g.spent[s.req], g.replies[s.req]
		o.res, err = g.lim.Hold(ctx, g.request(s, 1, o.spent), limitspec.Hold{Op: limitspec.Commit, ID: s.req})
	case peek:
		o.res, err = g.lim.Limit(ctx, g.request(s, 0, 0))
	}
	for _, n := range g.held {
		o.holds++
		o.heldTokens += n
	}
	return o, err
}

// finish calls the model for o's request and commits the tokens its
// answer took, or releases the request's hold when it failed.
func (g *gateway) finish(ctx context.Context, o *outcome) error {
	used, err := callModel(o.req)
	req, h := g.request(o.step, 1, used), limitspec.Hold{Op: limitspec.Commit, ID: o.req}
	if err != nil {
		o.modelErr, h.Op, req = err, limitspec.Release, g.request(o.step, 0, 0) // a release takes no cost
	}
	o.spent = used
	o.res, err = g.lim.Hold(ctx, req, h)
	if err != nil {
		return err
	}
	delete(g.held, o.req)
	if h.Op == limitspec.Commit {
		g.spent[o.req], g.replies[o.req] = used, o.res
	}
	return nil
}

// header names the columns of the lines.
const header = "     time  id     call               left: slots requests tokens   held: requests tokens   outcome"

// String is o's line: the step's time, its request, what it did, what
// the key has left of each limit, what the gateway holds, and how it
// went.
func (o outcome) String() string {
	call, got := o.describe()
	left := make([]int64, 3)
	for i, l := range o.res.Limits {
		left[i] = l.Remaining
	}
	return fmt.Sprintf("%9s  %-5s  %-17s %11d %8d %6d   %14d %6d   %s",
		fmt.Sprintf("+%.3fs", o.at.Seconds()), o.req, call, left[0], left[1], left[2], o.holds, o.heldTokens, got)
}

// describe is o's call and what it got.
func (o outcome) describe() (call, got string) {
	maxTokens := requests[o.req].maxTokens
	switch {
	case o.act == reserve && o.res.Allowed:
		return fmt.Sprintf("reserve %d", maxTokens), "admitted"
	case o.act == reserve:
		return fmt.Sprintf("reserve %d", maxTokens), fmt.Sprintf("denied by %s; retry after %v", o.denying(), o.res.RetryAfter)
	case o.act == finish && o.modelErr != nil:
		return fmt.Sprintf("release %d", maxTokens), o.modelErr.Error() + ": released, nothing charged"
	case o.act == finish:
		return fmt.Sprintf("commit %d of %d", o.spent, maxTokens), fmt.Sprintf("slot freed, request counted, %d tokens charged", o.spent)
	case o.act == commitAgain && sameReply(o.res, o.first):
		return fmt.Sprintf("commit %d again", o.spent), "reply lost, sent again: the first reply, nothing charged"
	case o.act == commitAgain:
		return fmt.Sprintf("commit %d again", o.spent), "reply lost, sent again: another reply"
	}
	return "peek", "what is left, charging nothing"
}

// denying names the limits that denied o's request.
func (o outcome) denying() string {
	var names []string
	for _, l := range o.res.Limits {
		if !l.Allowed {
			names = append(names, l.Name)
		}
	}
	return strings.Join(names, " and ")
}

// sameReply reports whether a and b are the same reply, field for field
// (but for who decided).
func sameReply(a, b limitspec.Result) bool {
	a.Side, b.Side = 0, 0
	return reflect.DeepEqual(a, b)
}
