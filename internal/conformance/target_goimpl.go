package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/limitspec/limitspec/goimpl"
)

// GoTarget runs the generated Go limiters of package goimpl.
type GoTarget struct {
	lim     goimpl.Limiter
	pol     *goimpl.Policy
	refused *Outcome
}

// NewGoTarget returns the goimpl target.
func NewGoTarget() *GoTarget { return &GoTarget{} }

func (t *GoTarget) Name() string { return "goimpl" }

func (t *GoTarget) Begin(name string, params map[string]json.Number) error {
	t.lim, t.pol, t.refused = nil, nil, nil
	ints, refused := intParams(name, params)
	if refused != nil {
		t.refused = refused
		return nil
	}
	if slices.Contains(goimpl.Policies(), name) {
		return t.beginPolicy(name, ints)
	}
	lim, err := goimpl.New(name, ints)
	if s, ok := lim.(goimpl.SweepStopper); ok {
		// Vectors replay times of their own, not the wall clock's: a
		// sweeper would reclaim keys on a clock the vector does not keep.
		s.StopSweeper()
	}
	if err != nil {
		o := goOutcome(err)
		t.refused = &o
		return nil
	}
	t.lim = lim
	return nil
}

// beginPolicy starts a vector of a policy.
func (t *GoTarget) beginPolicy(name string, params map[string]int64) error {
	p, err := goimpl.NewPolicy(name, params)
	if err != nil {
		o := goOutcome(err)
		t.refused = &o
		return nil
	}
	p.StopSweeper() // as for a limiter, below
	t.pol = p
	return nil
}

func (t *GoTarget) Decide(r Request) Outcome {
	if t.refused != nil {
		return *t.refused
	}
	if t.lim == nil && t.pol == nil {
		return failure("HARNESS", errNoVector.Error())
	}
	c, refused := intCost(r)
	if refused != nil {
		return *refused
	}
	if t.pol != nil {
		call := t.pol.Allow
		if r.Force {
			call = t.pol.Force
		}
		pr, err := call(r.IDs, r.NowMs, c)
		if err != nil {
			return goOutcome(err)
		}
		o := resultOutcome(pr.Result)
		o.Index = int64(pr.Index)
		for _, l := range pr.Limits {
			o.Limits = append(o.Limits, resultOutcome(l))
		}
		return o
	}
	var res goimpl.Result
	var err error
	switch il, ok := t.lim.(goimpl.InputLimiter); {
	case ok && r.Force:
		res, err = il.ForceInputs(r.Key, r.NowMs, c, stringArgs(il.Inputs(), r.Inputs)...)
	case ok:
		res, err = il.AllowInputs(r.Key, r.NowMs, c, stringArgs(il.Inputs(), r.Inputs)...)
	case r.Force:
		res, err = t.lim.(goimpl.Forcer).Force(r.Key, r.NowMs, c)
	default:
		res, err = t.lim.Allow(r.Key, r.NowMs, c)
	}
	if err != nil {
		return goOutcome(err)
	}
	return resultOutcome(res)
}

func (t *GoTarget) Reset(r Request) Outcome {
	var err error
	switch {
	case t.refused != nil:
		return *t.refused
	case t.pol != nil:
		err = t.pol.Reset(r.IDs)
	case t.lim != nil:
		err = t.lim.(goimpl.Resetter).Reset(r.Key)
	default:
		return failure("HARNESS", errNoVector.Error())
	}
	if err != nil {
		return goOutcome(err)
	}
	return Outcome{}
}

func resultOutcome(r goimpl.Result) Outcome {
	return Outcome{Allowed: r.Allowed, Limit: r.Limit, Remaining: r.Remaining,
		RetryAfterMs: r.RetryAfterMs, ResetAfterMs: r.ResetAfterMs, DelayMs: r.DelayMs, Tier: r.Tier}
}

func (t *GoTarget) View(view, key string, nowMs int64) Outcome {
	if t.refused != nil {
		return *t.refused
	}
	if t.lim == nil {
		return failure("HARNESS", errNoVector.Error())
	}
	v, ok := t.lim.(goimpl.Viewer)
	if !ok {
		return failure("BADINPUT", fmt.Sprintf("unknown view %q", view))
	}
	recs, err := v.View(view, key, nowMs)
	if err != nil {
		return goOutcome(err)
	}
	var out [][]string
	for _, r := range recs {
		var row []string
		for _, x := range r {
			row = append(row, fmt.Sprint(x))
		}
		out = append(out, row)
	}
	return entriesOutcome(out)
}

func goOutcome(err error) Outcome {
	if errors.Is(err, goimpl.ErrBadInput) {
		return failure("BADINPUT", err.Error())
	}
	return failure("ERROR", err.Error())
}

func (t *GoTarget) Close() error { return nil }
