package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/limitspec/limitspec"
)

// The second part: tenant globex's jobs, whose holds last 300 ms.
const (
	crashTenant = "globex"
	crashHold   = 300 * time.Millisecond
)

// crash is the op of a step in which a job's worker crashes: it makes
// no call, and the job's hold is left to end by itself.
const crash limitspec.HoldOp = 0

// crashStep is one step of the second part: an operation on a job's
// hold, at an offset from start.
type crashStep struct {
	at  time.Duration
	job string
	op  limitspec.HoldOp
}

// crashSteps are the second part: five jobs take the five slots and a
// sixth is denied; job-5's worker crashes while the four others renew
// their holds; the sixth gets job-5's slot when its hold ends, at
// +300 ms, not before; then the jobs end, job-4 failing.
var crashSteps = []crashStep{
	{0, "job-1", limitspec.Reserve},
	{0, "job-2", limitspec.Reserve},
	{0, "job-3", limitspec.Reserve},
	{0, "job-4", limitspec.Reserve},
	{0, "job-5", limitspec.Reserve},
	{0, "job-6", limitspec.Reserve},
	{100 * time.Millisecond, "job-5", crash},
	{200 * time.Millisecond, "job-1", limitspec.Renew},
	{200 * time.Millisecond, "job-2", limitspec.Renew},
	{200 * time.Millisecond, "job-3", limitspec.Renew},
	{200 * time.Millisecond, "job-4", limitspec.Renew},
	{299 * time.Millisecond, "job-6", limitspec.Reserve},
	{300 * time.Millisecond, "job-6", limitspec.Reserve},
	{400 * time.Millisecond, "job-1", limitspec.Commit},
	{400 * time.Millisecond, "job-2", limitspec.Commit},
	{400 * time.Millisecond, "job-3", limitspec.Commit},
	{400 * time.Millisecond, "job-4", limitspec.Release},
	{450 * time.Millisecond, "job-6", limitspec.Commit},
}

// crashOutcome is what a step got: nothing for a crash.
type crashOutcome struct {
	crashStep
	res limitspec.Result
}

// playCrash runs the second part's steps in order, printing a line for
// each to out, and returns their outcomes.
func playCrash(ctx context.Context, lim holdingLimiter, policy *limitspec.Policy, out io.Writer) ([]crashOutcome, error) {
	fmt.Fprintf(out, "tenant %s: holds of %v, renewed while the jobs run; job-5's worker crashes\n", crashTenant, crashHold)
	var outcomes []crashOutcome
	for _, s := range crashSteps {
		o := crashOutcome{crashStep: s}
		if s.op != crash {
			var err error
			if o.res, err = lim.Hold(ctx, request(policy, crashTenant, s.cost(), start.Add(s.at)), s.hold()); err != nil {
				return outcomes, fmt.Errorf("%s: %s at +%v: %w", s.job, s.op, s.at, err)
			}
		}
		fmt.Fprintln(out, o)
		outcomes = append(outcomes, o)
	}
	return outcomes, nil
}

// cost is s's Request.Cost: 1 for a reserve (a slot, a job of the
// minute) and for a commit (the job is done), 0 for a release or a
// renew.
func (s crashStep) cost() int64 {
	if s.op == limitspec.Reserve || s.op == limitspec.Commit {
		return 1
	}
	return 0
}

// hold is s's operation: on the job's hold, for crashHold from now for
// a reserve or a renew.
func (s crashStep) hold() limitspec.Hold {
	h := limitspec.Hold{Op: s.op, ID: s.job}
	if s.op == limitspec.Reserve || s.op == limitspec.Renew {
		h.For = crashHold
	}
	return h
}

// String is o's line: the step's time, its job, what it did and what the
// tenant's limits have left.
func (o crashOutcome) String() string {
	var what, got string
	switch {
	case o.op == crash:
		what, got = "crashes", "its worker is gone: its hold is never released"
	case o.op == limitspec.Reserve && !o.res.Allowed:
		what, got = "reserve", fmt.Sprintf("denied, retry after %v; %s", o.res.RetryAfter, remaining(o.res))
	case o.op == limitspec.Reserve:
		what, got = "reserve", "admitted; "+remaining(o.res)
	case o.op == limitspec.Renew:
		what, got = "renew", fmt.Sprintf("held until +%v; %s", o.at+crashHold, remaining(o.res))
	case o.op == limitspec.Commit:
		what, got = "commit 1", "done; "+remaining(o.res)
	default:
		what, got = "release", "the job failed; "+remaining(o.res)
	}
	return fmt.Sprintf("%8s  %s  %-8s  %s", fmt.Sprintf("+%dms", o.at.Milliseconds()), o.job, what, got)
}
