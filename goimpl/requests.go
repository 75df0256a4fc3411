package goimpl

import (
	"hash/maphash"
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
	atMs, cost int64
	force      bool
	limits     int // a policy's; 0 for a limit's request
	res        limitspec.Result
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
// cost, force, and limits: a policy's number of them, 0 for a limit's)
// is refused. who names the algorithm or the policy in errors.
func (s *requestShard) replay(r requestID, now, cost int64, force bool, limits int, who string, res *limitspec.Result) (bool, error) {
	got := s.byID[r]
	if got == nil || got.atMs > now+maxSkewMs || now-got.atMs > requestMs {
		return false, nil
	}
	if got.cost != cost || got.force != force || got.limits != limits {
		return false, reusedID(who, r.id, got.cost, got.force, got.limits)
	}
	out := append(res.Limits[:0], got.res.Limits...)
	*res = got.res
	res.Limits = out
	return true, nil
}

// record remembers res, the result of r (of limits limits: a policy's,
// 0 for a limit's) decided at now, when it charged
// (admitted or forced, at a cost above 0), and forgets the requests
// older than any retry's reach (requestMs plus ttlMarginMs, the
// request key's TTL on Redis).
func (s *requestShard) record(r requestID, now, cost int64, force bool, limits int, res *limitspec.Result) {
	if cost == 0 || !(res.Allowed || force) {
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
	kept.Limits = append([]limitspec.LimitResult(nil), res.Limits...)
	s.byID[r] = &request{atMs: now, cost: cost, force: force, limits: limits, res: kept}
}

// limitOnce decides req, which carries an id, at now into *res: checked
// as without one, then its id; a retry of a charged request gets the
// result the request had.
func (l *Limiter) limitOnce(req *limitspec.Request, now int64, res *limitspec.Result) error {
	who, tag, err := l.checkOnce(req, now)
	if err != nil {
		return err
	}
	if err := checkRequestID(who, req.ID); err != nil {
		return err
	}
	limits := 0 // a limit's request
	if req.Policy != nil {
		limits = len(req.Policy.Limits())
	}
	r := requestID{tag, req.ID}
	s := l.requests.lock(r)
	defer s.Unlock()
	if ok, err := s.replay(r, now, req.Cost, req.Force, limits, who, res); ok || err != nil {
		return err
	}
	if err := l.decide(req, now, res); err != nil {
		return err
	}
	s.record(r, now, req.Cost, req.Force, limits, res)
	return nil
}

// checkOnce checks req as its decision would, and returns the name its
// errors begin with (its algorithm's or its policy's) and the hash tag
// of its first key.
func (l *Limiter) checkOnce(req *limitspec.Request, now int64) (who, tag string, err error) {
	if p := req.Policy; p != nil {
		if _, _, err := l.preparePolicy(*req, now, nil); err != nil {
			return "", "", err
		}
		keys, err := limitcall.PolicyKeys(p, req.IDs)
		if err != nil {
			return "", "", err
		}
		return p.Name(), keys[0], nil
	}
	t, err := l.table(req.Limit)
	if err != nil {
		return "", "", err
	}
	tag = kit.StoredKey(req.Key)
	c := &kit.Call{Args: kit.Args{NowMs: now, Cost: req.Cost, Inputs: inputs(t.alg.Inputs, req.Inputs)}}
	if err := t.Prepare(c, req.Limit, "", tag); err != nil {
		return "", "", err
	}
	return req.Limit.Algorithm().String(), tag, nil
}

// checkRequestID refuses an id longer than the scripts take, with their
// message after who (an algorithm's name, or a policy's).
func checkRequestID(who, id string) error {
	if len(id) > requestIdMax {
		return kit.BadInput("%s: request id must be 1 to %d bytes, got %d", who, requestIdMax, len(id))
	}
	return nil
}

// reusedID refuses a retry whose cost, force or number of limits (a
// policy's; 0 for a limit's request) differ from those its id was
// charged for, with the scripts' message (the id cut to 32 bytes, as
// they quote a value).
func reusedID(who, id string, cost int64, force bool, limits int) error {
	if len(id) > 32 {
		id = id[:32] + "..."
	}
	return kit.BadInput("%s: request id %s was charged for another request (cost:force:limits %d:%s:%d); a retry repeats its request",
		who, id, cost, kit.ForceArg(force), limits)
}
