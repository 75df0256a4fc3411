package conformance

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/limitspec/limitspec/goimpl"
)

// GoTarget runs the generated Go limiters of package goimpl.
type GoTarget struct {
	lim     goimpl.Limiter
	refused *Outcome
}

// NewGoTarget returns the goimpl target.
func NewGoTarget() *GoTarget { return &GoTarget{} }

func (t *GoTarget) Name() string { return "goimpl" }

func (t *GoTarget) Begin(algorithm string, params map[string]json.Number) error {
	t.lim, t.refused = nil, nil
	ints := map[string]int64{}
	for k, v := range params {
		n, err := v.Int64()
		if err != nil {
			o := failure("BADINPUT", fmt.Sprintf("%s: parameter %s must be an integer, got %s", algorithm, k, v))
			t.refused = &o
			return nil
		}
		ints[k] = n
	}
	lim, err := goimpl.New(algorithm, ints)
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

func (t *GoTarget) Decide(key string, nowMs int64, cost json.Number, meta string) Outcome {
	if t.refused != nil {
		return *t.refused
	}
	if t.lim == nil {
		return failure("HARNESS", errNoVector.Error())
	}
	c, err := cost.Int64()
	if err != nil {
		return failure("BADINPUT", fmt.Sprintf("cost must be an integer, got %s", cost))
	}
	var r goimpl.Result
	if il, ok := t.lim.(goimpl.InputLimiter); ok {
		r, err = il.AllowInputs(key, nowMs, c, stringArgs(il.Inputs(), meta)...)
	} else {
		r, err = t.lim.Allow(key, nowMs, c)
	}
	if err != nil {
		return goOutcome(err)
	}
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
