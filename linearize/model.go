package linearize

// This file is the only one that calls the oracle (internal/oracle): the
// adapter from a Spec and an Input to the oracle's HoldingPolicy, and
// from its result to an Output. When the oracle's API changes, this is
// the file to change.

import (
	"github.com/limitspec/limitspec/internal/oracle"
)

// oracleModel is the oracle's model of a Spec's holding policy, decided
// for one value of its identity.
type oracleModel struct {
	hp  *oracle.HoldingPolicy
	ids map[string]string
}

// newOracleModel is a fresh oracle model of spec, for the identity value
// value.
func newOracleModel(spec Spec, value string) (*oracleModel, error) {
	limits := make([]oracle.PolicyLimit, 0, len(spec.Limits))
	for _, l := range spec.Limits {
		limits = append(limits, oracle.PolicyLimit{Name: l.Name, Algorithm: l.Algorithm, Identity: spec.Identity, Params: l.Params})
	}
	hp, err := oracle.NewHoldingPolicy(spec.Name, limits)
	if err != nil {
		return nil, err
	}
	return &oracleModel{hp: hp, ids: map[string]string{spec.Identity: value}}, nil
}

// run applies in to the model and returns its outcome.
func (m *oracleModel) run(in Input) Output {
	r, err := m.hp.Run(m.ids, in.Op, in.ID, in.Now, m.hp.Policy().Every(in.Cost), in.HoldMs)
	if err != nil {
		return Output{Class: Class(oracle.Class(err)), Err: err.Error()}
	}
	out := Output{Allowed: r.Allowed, Binding: r.Index - 1, Limits: make([]LimitOut, len(r.Limits))}
	for i, l := range r.Limits {
		out.Limits[i] = LimitOut{Allowed: l.Allowed, Remaining: l.Remaining, RetryAfterMs: l.RetryAfterMs, ResetAfterMs: l.ResetAfterMs}
		if l.Allowed { // the scripts' -1 reaches a caller as 0 (limitspec.LimitResult)
			out.Limits[i].RetryAfterMs = 0
		}
	}
	return out
}

// state is what the model's decisions depend on, for fingerprint.
func (m *oracleModel) state() any { return m.hp }
