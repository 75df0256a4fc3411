package oracle

// Request ids, as docs/semantics.md "Request ids" states them: a request
// that carries an id and is charged (admitted, or forced, at a cost above
// 0) is remembered under the hash tag of its first key; a request of the
// same id and tag within RequestMs after it (and at most MaxSkewMs before
// it) is answered with the remembered result, and decides nothing. A
// retry that does not repeat the request's cost, force and number of
// limits (0 for a limit's request, a policy's number) is refused.

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
	at, cost int64
	force    bool
	limits   int
	result   any
}

// Once answers the request id under tag, of cost at now (forced or not)
// over limits limits (a policy's; 0 for a limit's request): with what a charged request of that id answered,
// if one is within reach; else with decide's result, remembered when
// decide says it charged. The request must have been checked; Once
// checks the id.
func Once[R any](rs *Requests, tag, id string, now, cost int64, force bool, limits int, decide func() (R, bool, error)) (R, error) {
	var zero R
	if len(id) < 1 || len(id) > RequestIDMax {
		return zero, bad("request id of %d bytes", len(id))
	}
	k := [2]string{tag, id}
	if got, ok := rs.byID[k]; ok && got.at <= now+MaxSkewMs && now-got.at <= RequestMs {
		if got.cost != cost || got.force != force || got.limits != limits {
			return zero, bad("request id %q was charged for another request", id)
		}
		return got.result.(R), nil
	}
	r, charged, err := decide()
	if err != nil || !charged || cost == 0 {
		return r, err
	}
	if rs.byID == nil {
		rs.byID = map[[2]string]remembered{}
	}
	rs.byID[k] = remembered{at: now, cost: cost, force: force, limits: limits, result: r}
	return r, nil
}

// Tag is the hash tag of the policy's first key for the identity values
// ids: its first limit's identity value, or its constant.
func (p *Policy) Tag(ids map[string]string) string { return p.limits[0].key(ids) }

// Len is the number of the policy's limits.
func (p *Policy) Len() int { return len(p.limits) }

// Check refuses a policy's request as Decide does, deciding nothing.
func (p *Policy) Check(ids map[string]string, now, cost int64) error { return p.check(ids, now, cost) }

// Check refuses a limit's request as Decide does, deciding nothing.
func (m *model) Check(key string, now, cost int64, inputs map[string]string) error {
	return m.check(key, now, cost, inputs)
}
