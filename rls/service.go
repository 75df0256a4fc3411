package rls

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/rls/config"
)

// Options are a Service's settings; the zero value decides all or
// nothing, with no header fields.
type Options struct {
	// Independent decides each descriptor on its own, as the reference
	// server counts them: one over its limit does not keep the others
	// from being charged. For parity tests with envoyproxy/ratelimit.
	Independent bool
	// ShadowMode answers OK to every request, still counting it (the
	// reference's global SHADOW_MODE).
	ShadowMode bool
	// Headers adds the IETF RateLimit-Policy and RateLimit fields of
	// every limited descriptor to the response's headers, and
	// Retry-After to a refusal's.
	Headers bool
	// LegacyHeaders adds X-RateLimit-Limit, -Remaining and -Reset of the
	// descriptor with the least remaining (an over-limit one first), as
	// the reference's LIMIT_RESPONSE_HEADERS_ENABLED does.
	LegacyHeaders bool
	// HoldFor is how long a reserve holds when its request names no
	// limitspec.hold_ms: 10 minutes when 0.
	HoldFor time.Duration
}

// Service answers ShouldRateLimit by a configuration (package config)
// and a limiter. It is safe for concurrent use; SetConfig swaps the
// configuration while it serves.
type Service struct {
	pb.UnimplementedRateLimitServiceServer
	limiter  limitspec.Limiter
	opts     Options
	cfg      atomic.Pointer[config.Config]
	policies atomic.Pointer[policies]
	// perTag: the limiter decides a policy of one identity only (a Redis
	// Cluster), so that a request's counters of different tags are
	// decided one tag after the other.
	perTag bool
}

// New returns a Service deciding by cfg with l.
func New(l limitspec.Limiter, cfg *config.Config, opts Options) (*Service, error) {
	if l == nil || cfg == nil {
		return nil, errors.New("rls: New needs a limiter and a configuration")
	}
	if opts.HoldFor == 0 {
		opts.HoldFor = 10 * time.Minute
	}
	s := &Service{limiter: l, opts: opts, perTag: oneIdentity(l)}
	s.SetConfig(cfg)
	return s, nil
}

// SetConfig makes cfg the configuration of every later request. The
// counters of limits whose path and window it keeps keep their state.
func (s *Service) SetConfig(cfg *config.Config) {
	s.cfg.Store(cfg)
	s.policies.Store(new(policies))
}

// Config is the configuration the service decides by.
func (s *Service) Config() *config.Config { return s.cfg.Load() }

// ShouldRateLimit decides req (see the package's doc). Its errors are
// gRPC statuses: InvalidArgument for a request the service refuses (an
// empty domain or descriptor list, an unsupported field, a cost past
// 2^53 - 1), Unavailable when the limiter cannot decide (Redis
// unreachable), or the context's.
func (s *Service) ShouldRateLimit(ctx context.Context, req *pb.RateLimitRequest) (*pb.RateLimitResponse, error) {
	p, err := planOf(s.cfg.Load(), req, s.opts.HoldFor)
	if err != nil {
		return nil, statusOf(err)
	}
	decide := s.decide
	if p.hold != nil {
		decide = s.hold
	}
	results, err := decide(ctx, p)
	if err != nil {
		return nil, statusOf(err)
	}
	return s.response(p, results), nil
}

// statusOf is err as a gRPC status.
func statusOf(err error) error {
	var bad *badRequest
	switch {
	case errors.As(err, &bad), errors.Is(err, limitspec.ErrBadInput):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, limitspec.ErrNoHold):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return status.FromContextError(err).Err()
	case errors.Is(err, limitspec.ErrUnavailable):
		return status.Error(codes.Unavailable, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

// oneIdentity reports whether l refuses a policy over two identities
// (limitspec.Checker): a Redis Cluster's limiter, whose identities' keys
// may lie on different nodes.
func oneIdentity(l limitspec.Limiter) bool {
	c, ok := l.(limitspec.Checker)
	if !ok {
		return false
	}
	two, err := limitspec.NewPolicy("rls",
		limitspec.PolicyLimit{Name: "a", Identity: "v0", Limit: limitspec.FixedWindow{Limit: 1, Window: time.Second}},
		limitspec.PolicyLimit{Name: "b", Identity: "v1", Limit: limitspec.FixedWindow{Limit: 1, Window: time.Second}})
	return err == nil && c.Check(limitspec.Request{Policy: two}) != nil
}
