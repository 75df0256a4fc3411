package oracle

import "fmt"

// Request ids, as docs/semantics.md "Request ids" states them: a request
// that carries an id and is charged (admitted, or forced, at a cost above
// 0) is remembered under the hash tag of its first key; a request of the
// same id and tag within RequestMs after it (and at most MaxSkewMs before
// it) is answered with the remembered result, and decides nothing. A
// retry that does not repeat the request's costs, force and number of
// limits (0 for a limit's request, a policy's number) is refused. A peek
// (every cost 0) charges nothing: it is decided, and never looked up.

const (
	// RequestMs is how long a charged request's result is replayed.
	RequestMs = 60000
	// RequestIDMax is the longest id, in bytes.
	RequestIDMax = 128
)

// Requests remembers charged requests by hash tag and id.
type Requests struct {
	byID map[[2]string]remembered
}

type remembered struct {
	at     int64
	costs  string // the costs, as fmt prints a []int64
	force  bool
	limits int
	result any
}

// once answers the request id (none when "") under tag, of costs at now
// (forced or not) over limits limits (a policy's; 0 for a limit's
// request): with what a charged request of that id answered, if one is
// within reach; else with decide's result, remembered when decide says it
// charged. A peek is decided, never looked up. The request must have been
// checked; once checks the id.
func once[R any](rs *Requests, tag, id string, now int64, costs []int64, force bool, limits int, decide func() (R, bool, error)) (R, error) {
	var zero R
	if id == "" || peek(costs) { // no id, or a peek: decided as it is
		r, _, err := decide()
		return r, err
	}
	if len(id) > RequestIDMax {
		return zero, bad("request id of %d bytes", len(id))
	}
	k := [2]string{tag, id}
	if got, ok := rs.byID[k]; ok && got.at <= now+MaxSkewMs && now-got.at <= RequestMs {
		if got.costs != fmt.Sprint(costs) || got.force != force || got.limits != limits {
			return zero, bad("request id %q was charged for another request", id)
		}
		return got.result.(R), nil
	}
	r, charged, err := decide()
	if err != nil || !charged {
		return r, err
	}
	if rs.byID == nil {
		rs.byID = map[[2]string]remembered{}
	}
	rs.byID[k] = remembered{at: now, costs: fmt.Sprint(costs), force: force, limits: limits, result: r}
	return r, nil
}

// LimitOnce decides a request of m that carries the id (none when "";
// forced when force is set) by the rule above: checked as Decide checks it, then
// answered with what a charged request of that id and key answered, or
// decided.
func LimitOnce(rs *Requests, m Model, key, id string, now, cost int64, inputs map[string]string, force bool) (Result, error) {
	if err := m.Check(key, now, cost, inputs); err != nil {
		return Result{}, err
	}
	decide := m.Decide
	if force {
		decide = m.Force
	}
	return once(rs, key, id, now, []int64{cost}, force, 0, func() (Result, bool, error) {
		r, err := decide(key, now, cost, inputs)
		return r, r.Allowed || force, err
	})
}

// DecideOnce decides a request of the policy that carries the id (none
// when ""; forced when force is set), costs[i] on limit i, as LimitOnce
// does a limit's, under the hash tag of its first limit's key.
func (p *Policy) DecideOnce(rs *Requests, ids map[string]string, id string, now int64, costs []int64, force bool) (PolicyResult, error) {
	if err := p.check(ids, now, costs); err != nil {
		return PolicyResult{}, err
	}
	decide := p.DecideCosts
	if force {
		decide = p.ForceCosts
	}
	return once(rs, p.limits[0].key(ids), id, now, costs, force, len(p.limits), func() (PolicyResult, bool, error) {
		r, err := decide(ids, now, costs)
		return r, r.Allowed || force, err
	})
}

// Check refuses a limit's request as Decide does, deciding nothing.
func (m *model) Check(key string, now, cost int64, inputs map[string]string) error {
	if err := m.alone(); err != nil {
		return err
	}
	return m.check(key, now, cost, inputs)
}
