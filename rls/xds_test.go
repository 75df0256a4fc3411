package rls_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/v3"
	rlsconf "github.com/envoyproxy/go-control-plane/ratelimit/config/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/limitspec/limitspec/rls"
	"github.com/limitspec/limitspec/rls/config"
)

// xdsServer is a management server of go-control-plane's (as Envoy
// Gateway runs one) serving snapshots of RateLimitConfig resources to
// node "rls", and a client connection to it.
type xdsServer struct {
	cache cache.SnapshotCache
	conn  *grpc.ClientConn
}

func startXDS(t *testing.T) *xdsServer {
	t.Helper()
	snapshots := cache.NewSnapshotCache(false, cache.IDHash{}, nil)
	srv := grpc.NewServer()
	discoverygrpc.RegisterAggregatedDiscoveryServiceServer(srv, server.NewServer(context.Background(), snapshots, nil))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &xdsServer{cache: snapshots, conn: conn}
}

// publish serves confs as the snapshot of version v.
func (x *xdsServer) publish(t *testing.T, v string, confs ...*rlsconf.RateLimitConfig) {
	t.Helper()
	res := make([]types.Resource, len(confs))
	for i, c := range confs {
		res[i] = c
	}
	snap, err := cache.NewSnapshot(v, map[resource.Type][]types.Resource{resource.RateLimitConfigType: res})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.cache.SetSnapshot(context.Background(), "rls", snap); err != nil {
		t.Fatal(err)
	}
}

// userLimit is a RateLimitConfig of domain api: n a minute per user (no
// unit: a configuration the loader refuses).
func userLimit(n uint32, unit rlsconf.RateLimitUnit) *rlsconf.RateLimitConfig {
	return &rlsconf.RateLimitConfig{Name: "api", Domain: "api", Descriptors: []*rlsconf.RateLimitDescriptor{
		{Key: "user", RateLimit: &rlsconf.RateLimitPolicy{Unit: unit, RequestsPerUnit: n}}}}
}

// TestWatchXDS: the service takes its configuration from a management
// server over xDS (state of the world), keeps the counters across an
// update, and NACKs a configuration the loader refuses, keeping the
// running one.
func TestWatchXDS(t *testing.T) {
	x := startXDS(t)
	x.publish(t, "1", userLimit(1, rlsconf.RateLimitUnit_MINUTE))
	empty, err := config.Load(nil, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := rls.New(targets()[0].new(t, newClock()), empty, rls.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var refusals []error
	var loads int
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go rls.WatchXDS(ctx, svc, x.conn, &corev3.Node{Id: "rls"}, config.Options{},
		func(err error) { mu.Lock(); refusals = append(refusals, err); mu.Unlock() },
		func() { mu.Lock(); loads++; mu.Unlock() })
	loaded := func(n int) func() bool { return func() bool { mu.Lock(); defer mu.Unlock(); return loads >= n } }
	waitFor(t, "the first configuration", loaded(1))
	c := serve(t, svc)
	user := &pb.RateLimitRequest{Domain: "api", Descriptors: []*rlv3.RateLimitDescriptor{desc("user", "a")}}
	run(t, c, []step{{user, ok, []status{{ok, 0}}}, {user, over, []status{{over, 0}}}})

	x.publish(t, "2", userLimit(3, rlsconf.RateLimitUnit_MINUTE))
	waitFor(t, "the second configuration", loaded(2))
	run(t, c, []step{{user, ok, []status{{ok, 1}}}})

	running := svc.Config()
	x.publish(t, "3", userLimit(3, rlsconf.RateLimitUnit_UNKNOWN))
	waitFor(t, "the refusal", func() bool { mu.Lock(); defer mu.Unlock(); return len(refusals) > 0 })
	mu.Lock()
	got := refusals[0].Error()
	mu.Unlock()
	if !strings.Contains(got, "RateLimitConfig api") || !strings.Contains(got, "no unit") {
		t.Errorf("refusal %q does not name the resource and the reason", got)
	}
	if svc.Config() != running {
		t.Fatal("a refused configuration replaced the running one")
	}
	run(t, c, []step{{user, ok, []status{{ok, 0}}}, {user, over, []status{{over, 0}}}})
}
