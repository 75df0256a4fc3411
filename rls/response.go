package rls

import (
	"math"
	"strconv"
	"strings"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/sfv"
	"github.com/limitspec/limitspec/rls/config"
)

// response is the answer to a request planned as p, its items decided
// as results: each descriptor's status, the overall code, and the
// header fields Options asks for.
func (s *Service) response(p *plan, results []limitspec.LimitResult) *pb.RateLimitResponse {
	resp := &pb.RateLimitResponse{OverallCode: pb.RateLimitResponse_OK, Statuses: make([]*pb.RateLimitResponse_DescriptorStatus, len(p.kinds))}
	itemOf := make([]int, len(p.kinds))
	for i, it := range p.items {
		itemOf[it.desc] = i
	}
	var h headers
	for d, k := range p.kinds {
		st := &pb.RateLimitResponse_DescriptorStatus{Code: pb.RateLimitResponse_OK}
		resp.Statuses[d] = st
		switch k {
		case unlimited:
			st.LimitRemaining = math.MaxUint32
		case denyAll:
			rl := p.rls[d]
			st.CurrentLimit = currentLimit(rl, limitspec.LimitResult{})
			st.DurationUntilReset = durationpb.New(time.Duration(rl.Unit.Seconds()) * time.Second)
			if enforces(rl) {
				st.Code = pb.RateLimitResponse_OVER_LIMIT
			}
		case decided:
			it, r := &p.items[itemOf[d]], results[itemOf[d]]
			st.CurrentLimit = currentLimit(it.rl, r)
			st.LimitRemaining = remaining(r.Remaining)
			st.DurationUntilReset = durationpb.New(r.ResetAfter)
			if !r.Allowed && it.enforce {
				st.Code = pb.RateLimitResponse_OVER_LIMIT
			}
			h.add(it.rl, r, st.Code)
		}
		if st.Code == pb.RateLimitResponse_OVER_LIMIT {
			resp.OverallCode = pb.RateLimitResponse_OVER_LIMIT
		}
	}
	if s.opts.ShadowMode {
		resp.OverallCode = pb.RateLimitResponse_OK
	}
	resp.ResponseHeadersToAdd = h.fields(s.opts, resp.OverallCode == pb.RateLimitResponse_OVER_LIMIT)
	return resp
}

// currentLimit is the current_limit of a descriptor limited by rl,
// decided as r: the configured unit and requests per unit, or, for an
// algorithm configured without them, its quota and the unit its window
// is, if it is one.
func currentLimit(rl *config.RateLimit, r limitspec.LimitResult) *pb.RateLimitResponse_RateLimit {
	unit := rl.Unit
	cl := &pb.RateLimitResponse_RateLimit{Name: rl.Name, RequestsPerUnit: rl.RequestsPerUnit}
	if unit == config.Unknown && r.Limit != nil {
		cl.RequestsPerUnit = remaining(r.Quota)
		for u := config.Unit(1); u.Seconds() > 0; u++ {
			if r.Window() == time.Duration(u.Seconds())*time.Second {
				unit = u
			}
		}
	}
	cl.Unit = pb.RateLimitResponse_RateLimit_Unit(unit) // config.Unit's values are the protocol's
	return cl
}

// headers gathers the header fields of a response's limited
// descriptors.
type headers struct {
	policy, limit []string
	retry         time.Duration
	least         *limitspec.LimitResult // the legacy fields'
	leastOver     bool
	leastRPU      uint32
}

// add notes a descriptor limited by rl, decided as r, of code.
func (h *headers) add(rl *config.RateLimit, r limitspec.LimitResult, code pb.RateLimitResponse_Code) {
	name := rl.Name
	if name == "" {
		name = rl.FullKey
	}
	item := sfv.String(name) + ";q=" + sfv.Int(r.Quota)
	if w := sfv.Seconds(r.Window()); w > 0 {
		item += ";w=" + sfv.Int(w)
	}
	h.policy = append(h.policy, item)
	h.limit = append(h.limit, sfv.String(name)+";r="+sfv.Int(r.Remaining)+";t="+sfv.Int(sfv.Seconds(r.ResetAfter)))
	over := code == pb.RateLimitResponse_OVER_LIMIT
	if over {
		h.retry = max(h.retry, r.RetryAfter)
	}
	if h.least == nil || over && !h.leastOver || over == h.leastOver && r.Remaining < h.least.Remaining {
		h.least, h.leastOver = &r, over
		h.leastRPU = currentLimit(rl, r).RequestsPerUnit
	}
}

// fields are the header fields opts asks for; a refusal's Retry-After
// with opts.Headers.
func (h *headers) fields(opts Options, over bool) []*core.HeaderValue {
	var out []*core.HeaderValue
	if opts.Headers && len(h.policy) > 0 {
		out = append(out,
			&core.HeaderValue{Key: "RateLimit-Policy", Value: strings.Join(h.policy, ", ")},
			&core.HeaderValue{Key: "RateLimit", Value: strings.Join(h.limit, ", ")})
		if over && h.retry > 0 {
			out = append(out, &core.HeaderValue{Key: "Retry-After", Value: sfv.Int(sfv.Seconds(h.retry))})
		}
	}
	if opts.LegacyHeaders && h.least != nil {
		out = append(out,
			&core.HeaderValue{Key: "X-RateLimit-Limit", Value: strconv.FormatUint(uint64(h.leastRPU), 10)},
			&core.HeaderValue{Key: "X-RateLimit-Remaining", Value: sfv.Int(h.least.Remaining)},
			&core.HeaderValue{Key: "X-RateLimit-Reset", Value: sfv.Int(sfv.Seconds(h.least.ResetAfter))})
	}
	return out
}
