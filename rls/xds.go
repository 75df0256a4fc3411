package rls

import (
	"context"
	"fmt"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/client/sotw/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	rlsconf "github.com/envoyproxy/go-control-plane/ratelimit/config/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/limitspec/limitspec/rls/config"
)

// WatchXDS takes the configuration from an xDS management server, as
// Envoy Gateway delivers it to the reference server: RateLimitConfig
// resources, state of the world, over the aggregated discovery service
// on conn, for node. Each response's resources together are one
// configuration (config.LoadProto): one that loads replaces the running
// one (SetConfig: counters keep their state) and is ACKed; one that does
// not is NACKed with the reason, reported to refused, and the running
// one kept. loaded, when not nil, is told of every configuration taken.
// A broken stream is opened again after 100 ms, doubling to 30 s while
// it keeps failing. It returns when ctx ends.
func WatchXDS(ctx context.Context, s *Service, conn grpc.ClientConnInterface, node *corev3.Node, opts config.Options, refused func(error), loaded func()) {
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		c := sotw.NewADSClient(ctx, node, resource.RateLimitConfigType)
		if err := c.InitConnect(conn); err == nil {
			if watchStream(s, c, opts, refused, loaded) {
				wait = 100 * time.Millisecond
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// watchStream takes the responses of c until its stream breaks, and
// reports whether it took any.
func watchStream(s *Service, c sotw.ADSClient, opts config.Options, refused func(error), loaded func()) bool {
	took := false
	for {
		resp, err := c.Fetch()
		if err != nil {
			return took
		}
		took = true
		cfg, err := configOf(resp.Resources, opts)
		if err != nil {
			refused(err)
			c.Nack(err.Error())
			continue
		}
		s.SetConfig(cfg)
		c.Ack()
		if loaded != nil {
			loaded()
		}
	}
}

// configOf is the configuration of a response's resources.
func configOf(resources []*anypb.Any, opts config.Options) (*config.Config, error) {
	confs := make([]*rlsconf.RateLimitConfig, len(resources))
	for i, r := range resources {
		confs[i] = new(rlsconf.RateLimitConfig)
		if err := r.UnmarshalTo(confs[i]); err != nil {
			return nil, fmt.Errorf("resource %d is no RateLimitConfig: %w", i, err)
		}
	}
	return config.LoadProto(confs, opts)
}
