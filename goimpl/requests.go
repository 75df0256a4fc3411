package goimpl

import (
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/kit"
)

// requests remembers the results of charged requests that carry an id
// (limitspec.Request.ID), for their retries, as the policy script's
// request keys do on Redis (docs/semantics.md, "Request ids"). A call
// with an id holds its shard's lock from the lookup to the result's
// record, so that two calls of one id are decided one after the other:
// it takes that lock before any table's, never after.
type requests struct {
	seed   maphash.Seed
	once   sync.Once
	shards [requestShards]requestShard
}

const requestShards = 16

type requestShard struct {
	sync.Mutex
	byID map[requestID]*request
	// swept is the size of byID after its last sweep: the next sweep
	// comes when it has doubled, so that sweeping costs each record O(1).
	swept int
}

// requestID names a request: the hash tag of its first key, and its id.
type requestID struct{ tag, id string }

// request is what a charged request's retry is answered with.
type request struct {
	atMs   int64
	costs  []int64 // each limit's cost: one for a limit's request
	force  bool
	limits int // a policy's; 0 for a limit's request
	res    limitspec.Result
}

// lock locks the shard of r and returns it.
func (rs *requests) lock(r requestID) *requestShard {
	rs.once.Do(func() { rs.seed = maphash.MakeSeed() })
	var h maphash.Hash
	h.SetSeed(rs.seed)
	h.WriteString(r.tag)
	h.WriteByte(0)
	h.WriteString(r.id)
	s := &rs.shards[h.Sum64()%requestShards]
	s.Lock()
	return s
}

// replay writes to *res the result r had, if it was charged within
// requestMs before now (and not more than maxSkewMs after it), and
// reports whether it did; a retry that does not repeat the request (its
// costs, force, and limits: a policy's number of them, 0 for a limit's)
// is refused. who names the algorithm or the policy in errors.
func (s *requestShard) replay(r requestID, now int64, costs []int64, force bool, limits int, who string, res *limitspec.Result) (bool, error) {
	got := s.byID[r]
	if got == nil || got.atMs > now+maxSkewMs || now-got.atMs > requestMs {
		return false, nil
	}
	if !slices.Equal(got.costs, costs) || got.force != force || got.limits != limits {
		return false, reusedID(who, r.id, got.costs, got.force, got.limits)
	}
	copyResult(res, &got.res)
	return true, nil
}

// record remembers res, the result of r (of limits limits: a policy's,
// 0 for a limit's) decided at now, when it charged (admitted or forced,
// and not a peek), and forgets the requests older than any retry's
// reach (requestMs plus ttlMarginMs, the request key's TTL on Redis).
func (s *requestShard) record(r requestID, now int64, costs []int64, force bool, limits int, res *limitspec.Result) {
	if peek(costs) || !(res.Allowed || force) {
		return
	}
	if s.byID == nil {
		s.byID = make(map[requestID]*request)
	}
	if len(s.byID) >= 2*s.swept+64 {
		for k, v := range s.byID {
			if v.atMs+requestMs+ttlMarginMs < now {
				delete(s.byID, k)
			}
		}
		s.swept = len(s.byID)
	}
	kept := *res
	kept.Limits = slices.Clone(res.Limits)
	s.byID[r] = &request{atMs: now, costs: slices.Clone(costs), force: force, limits: limits, res: kept}
}

// peek reports whether every cost is 0: a peek, which charges nothing.
func peek(costs []int64) bool {
	for _, c := range costs {
		if c != 0 {
			return false
		}
	}
	return true
}

// limitOnce decides req, a limit's request which carries an id, at now
// into *res: checked as without one, then (unless a peek, never looked
// up) its id; a retry of a charged request gets the result the request
// had.
func (l *Limiter) limitOnce(req *limitspec.Request, now int64, res *limitspec.Result) error {
	t, err := l.table(req.Limit)
	if err != nil {
		return err
	}
	tag := kit.StoredKey(req.Key)
	c := &kit.Call{Args: kit.Args{NowMs: now, Cost: req.Cost, Inputs: inputs(t.alg.Inputs, req.Inputs)}}
	if err := t.Prepare(c, req.Limit, "", tag); err != nil {
		return err
	}
	costs := []int64{req.Cost}
	if peek(costs) {
		return l.decide(req, now, res)
	}
	return l.once(requestID{tag, req.ID}, now, req.Limit.Algorithm().String(), costs, req.Force, 0, res, func() error {
		return l.decide(req, now, res)
	})
}

// policyOnce decides req, a request of pc's policy which carries an id,
// prepared as pc: a peek is decided, never looked up; any other request
// as limitOnce decides a limit's, under the hash tag of its first limit.
func (l *Limiter) policyOnce(req *limitspec.Request, pc *policyCall, now int64, res *limitspec.Result) error {
	if peek(pc.costs) {
		pc.decide(req.Force, res)
		return nil
	}
	return l.once(requestID{pc.calls[0].tag, req.ID}, now, pc.plan.p.Name(), pc.costs, req.Force, len(pc.calls), res, func() error {
		pc.decide(req.Force, res)
		return nil
	})
}

// once answers the request r at now, checked, of costs over limits
// limits: with what a charged request of r answered, if one is within
// reach, else by decide, remembered if it charged. who names the
// algorithm or the policy in errors. It holds r's shard's lock from the
// lookup to the record, so that two calls of one id are decided one
// after the other.
func (l *Limiter) once(r requestID, now int64, who string, costs []int64, force bool, limits int, res *limitspec.Result, decide func() error) error {
	if err := checkRequestID(who, r.id); err != nil {
		return err
	}
	s := l.requests.lock(r)
	defer s.Unlock()
	if ok, err := s.replay(r, now, costs, force, limits, who, res); ok || err != nil {
		return err
	}
	if err := decide(); err != nil {
		return err
	}
	s.record(r, now, costs, force, limits, res)
	return nil
}

// checkRequestID refuses an id longer than the scripts take, with their
// message after who (an algorithm's name, or a policy's).
func checkRequestID(who, id string) error {
	if len(id) > requestIdMax {
		return kit.BadInput("%s: request id must be 1 to %d bytes, got %d", who, requestIdMax, len(id))
	}
	return nil
}

// reusedID refuses a retry whose costs, force or number of limits (a
// policy's; 0 for a limit's request) differ from those its id was
// charged for, with the scripts' message (the id cut to 32 bytes, as
// they quote a value; the costs one integer when every limit's is the
// same, else one per limit joined by ',', as the policy script takes
// them).
func reusedID(who, id string, costs []int64, force bool, limits int) error {
	return kit.BadInput("%s: request id %s was charged for another request (cost:force:limits %s:%s:%d); a retry repeats its request",
		who, limitcall.Clip(id), costArg(costs), kit.ForceArg(force), limits)
}

// costArg is costs as the policy script's cost argument takes them.
func costArg(costs []int64) string {
	if len(costs) == 0 || slices.Equal(costs, slices.Repeat(costs[:1], len(costs))) {
		if len(costs) == 0 {
			return "0"
		}
		return strconv.FormatInt(costs[0], 10)
	}
	parts := make([]string, len(costs))
	for i, c := range costs {
		parts[i] = strconv.FormatInt(c, 10)
	}
	return strings.Join(parts, ",")
}
