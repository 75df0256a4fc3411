package conformance

import (
	"encoding/json"
	"fmt"

	"github.com/limitspec/limitspec/internal/oracle"
	"github.com/limitspec/limitspec/kit"
)

// NewOracleTarget returns the target of the reference model.
func NewOracleTarget() *OracleTarget { return &OracleTarget{} }

// OracleTarget replays vectors on the reference model (internal/oracle),
// whose answers the generated vectors' expectations are: a check that a
// vector agrees with the contract, and a target to compare the others
// with. It holds no Redis keys.
type OracleTarget struct {
	store    *oracle.Store // every limit's state, shared as docs/semantics.md, "Keys", says
	requests oracle.Requests
	policy   *oracle.Policy // the vector's
	holding  *oracle.HoldingPolicy
	polErr   error
}

func (o *OracleTarget) Name() string { return "oracle" }

func (o *OracleTarget) Begin(v *Vector) error {
	o.store, o.requests, o.policy, o.holding, o.polErr = oracle.NewStore(), oracle.Requests{}, nil, nil, nil
	switch {
	case v.Policy != nil && v.Policy.Holds:
		o.holding, o.polErr = oracleHoldingPolicy(v.Policy)
	case v.Policy != nil:
		o.policy, o.polErr = oraclePolicy(v.Policy)
	}
	return nil
}

// model is the oracle's model of r's algorithm and parameters, on the
// vector's state.
func (o *OracleTarget) model(r Request) (oracle.Model, error) {
	ints, refused := intParams(r.Algorithm, r.Params)
	if refused != nil {
		return nil, fmt.Errorf("%w: %s", oracle.ErrBadInput, refused.Message)
	}
	return o.store.Limit(r.Algorithm, ints)
}

func (o *OracleTarget) Decide(r Request) Outcome {
	c, err := r.Cost.Int64()
	if err != nil {
		return failure(oracle.ClassBadInput, "cost")
	}
	if r.Policy != nil {
		return o.decidePolicy(r, c)
	}
	m, err := o.model(r)
	if err != nil {
		return oracleError(err)
	}
	res, err := oracle.LimitOnce(&o.requests, m, r.Key, r.ID, r.NowMs, c, r.Inputs, r.Force)
	if err != nil {
		return oracleError(err)
	}
	return oracleOutcome(res)
}

// decidePolicy decides a policy's step of cost c (each limit's amount
// by its unit from r.Costs, else c).
func (o *OracleTarget) decidePolicy(r Request, c int64) Outcome {
	if o.polErr != nil {
		return oracleError(o.polErr)
	}
	byUnit, refused := intCosts(r.Costs)
	if refused != nil {
		return *refused
	}
	p := o.policy
	if o.holding != nil {
		p = o.holding.Policy()
	}
	costs, err := p.Amounts(c, byUnit)
	if err != nil {
		return oracleError(err)
	}
	var pr oracle.PolicyResult
	if o.holding != nil {
		pr, err = o.holding.Run(r.IDs, r.HoldOp(), r.Hold, r.NowMs, costs, r.HoldMs)
	} else {
		pr, err = o.policy.DecideOnce(&o.requests, r.IDs, r.ID, r.NowMs, costs, r.Force)
	}
	if err != nil {
		return oracleError(err)
	}
	return oraclePolicyOutcome(pr)
}

// intCosts are a step's amounts by unit as integers, or the refusal of one
// that is not an integer.
func intCosts(costs map[string]json.Number) (map[string]int64, *Outcome) {
	if costs == nil {
		return nil, nil
	}
	out := map[string]int64{}
	for u, v := range costs {
		n, err := v.Int64()
		if err != nil {
			o := failure(oracle.ClassBadInput, fmt.Sprintf("cost of %s must be an integer, got %s", u, v))
			return nil, &o
		}
		out[u] = n
	}
	return out, nil
}

func (o *OracleTarget) Reset(r Request) Outcome {
	if r.Policy != nil {
		if o.polErr != nil {
			return oracleError(o.polErr)
		}
		reset := o.policy.Reset
		if o.holding != nil {
			reset = o.holding.Reset
		}
		if err := reset(r.IDs); err != nil {
			return oracleError(err)
		}
		return Outcome{}
	}
	m, err := o.model(r)
	if err == nil {
		err = m.(oracle.Resetter).Reset(r.Key)
	}
	if err != nil {
		return oracleError(err)
	}
	return Outcome{}
}

// oraclePolicyOutcome is a policy's result as an Outcome.
func oraclePolicyOutcome(pr oracle.PolicyResult) Outcome {
	out := oracleOutcome(pr.Result)
	out.Index = int64(pr.Index)
	for _, l := range pr.Limits {
		out.Limits = append(out.Limits, oracleOutcome(l))
	}
	return out
}

func oracleOutcome(r oracle.Result) Outcome {
	return Outcome{Reply: kit.Reply{Allowed: r.Allowed, Limit: r.Limit, Remaining: r.Remaining,
		RetryAfterMs: r.RetryAfterMs, ResetAfterMs: r.ResetAfterMs, DelayMs: r.DelayMs, Tier: r.Tier}}
}

func (o *OracleTarget) View(view string, r Request) Outcome {
	m, err := o.model(r)
	if err != nil {
		return oracleError(err)
	}
	el, ok := m.(oracle.EntryLister)
	if !ok || view != "entries" {
		return failure("BADINPUT", "unknown view "+view)
	}
	es, err := el.Entries(r.Key, r.NowMs)
	if err != nil {
		return oracleError(err)
	}
	rows := [][]any{}
	for _, e := range es {
		rows = append(rows, e.Row())
	}
	return entriesOutcome(entryStrings(rows))
}

func oracleError(err error) Outcome { return failure(oracle.Class(err), err.Error()) }

func (o *OracleTarget) Close() error { return nil }
