package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/rls/config"
)

// syncBuffer is a bytes.Buffer safe for the server and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs the command with args and a configuration directory
// holding cfg, and returns a connection to it, its stderr and a stop
// that ends it gracefully and returns run's error.
func start(t *testing.T, cfg string, args ...string) (*grpc.ClientConn, *syncBuffer, func() error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return startWith(t, append([]string{"-config", dir}, args...)...)
}

// startWith runs the command with args (and -addr) as start does.
func startWith(t *testing.T, args ...string) (*grpc.ClientConn, *syncBuffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	stderr := new(syncBuffer)
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), stderr, ready)
	}()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("run: %v\n%s", err, stderr)
	case <-time.After(30 * time.Second):
		t.Fatal("not serving after 30 s")
	}
	conn, err := grpc.NewClient(addr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	stop := func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("still serving 30 s after the signal")
			return nil
		}
	}
	t.Cleanup(func() { cancel() })
	return conn, stderr, stop
}

const edgeConfig = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 2}
`

// TestServe: the command serves health and ShouldRateLimit, in process
// and on a Redis, and stops on its signal.
func TestServe(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"in process", func(*testing.T) []string { return nil }},
		{"redis", func(t *testing.T) []string { return []string{"-redis", redistest.Start(t)} }},
		{"redis with fallback", func(t *testing.T) []string { return []string{"-redis", redistest.Start(t), "-fallback", "-headers"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, stderr, stop := start(t, edgeConfig, tc.args(t)...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
			if err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
				t.Fatalf("health: %v %v", h, err)
			}
			c := pb.NewRateLimitServiceClient(conn)
			req := &pb.RateLimitRequest{Domain: "edge", Descriptors: []*rlv3.RateLimitDescriptor{{Entries: []*rlv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: "10.0.0.1"}}}}}
			var codes []pb.RateLimitResponse_Code
			for range 3 {
				resp, err := c.ShouldRateLimit(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				codes = append(codes, resp.OverallCode)
			}
			want := []pb.RateLimitResponse_Code{pb.RateLimitResponse_OK, pb.RateLimitResponse_OK, pb.RateLimitResponse_OVER_LIMIT}
			if len(codes) != 3 || codes[0] != want[0] || codes[1] != want[1] || codes[2] != want[2] {
				t.Errorf("codes %v, want %v", codes, want)
			}
			if err := stop(); err != nil {
				t.Fatalf("run: %v", err)
			}
			if !strings.Contains(stderr.String(), "serving on") {
				t.Errorf("stderr: %q", stderr)
			}
		})
	}
}

// TestBadStart: a bad configuration or flag refuses to start, saying why.
func TestBadStart(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("domain: x\ndescriptors:\n  - key: a\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-config", dir}, "bad.yaml:4: invalid rate limit unit"},
		{[]string{}, "give -config DIR or -xds ADDR"},
		{[]string{"-config", t.TempDir(), "-xds", "127.0.0.1:1"}, "give -config DIR or -xds ADDR"},
		{[]string{"-config", t.TempDir(), "-redis", "redis://x", "-cluster", "a:1"}, "give one of -redis, -cluster and -sentinel"},
		{[]string{"-config", t.TempDir(), "-sentinel", "nomaster"}, "give MASTER@host:port"},
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), tc.args, &stderr, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
}

// TestExampleConfig: the README's configuration loads, with the limits
// it says.
func TestExampleConfig(t *testing.T) {
	cfg, err := config.LoadDir("../../example/config", config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		entries []config.Entry
		name    string
	}{
		{[]config.Entry{{Key: "api_key", Value: "k1"}}, "api_key_burst"},
		{[]config.Entry{{Key: "tenant", Value: "acme"}, {Key: "unit", Value: "tokens"}}, "tokens_per_minute"},
		{[]config.Entry{{Key: "tenant", Value: "acme"}, {Key: "unit", Value: "slots"}}, "calls_in_flight"},
	} {
		if m := cfg.Match("edge", tc.entries); m.Limit == nil || m.Limit.Name != tc.name {
			t.Errorf("%v: got %+v, want the limit %s", tc.entries, m.Limit, tc.name)
		}
	}
}

// TestServeXDS: with -xds the command takes its configuration from a
// management server (go-control-plane's, as Envoy Gateway runs one):
// NOT_SERVING until the first configuration, then SERVING and deciding
// by it.
func TestServeXDS(t *testing.T) {
	snapshots := cache.NewSnapshotCache(false, cache.IDHash{}, nil)
	srv := grpc.NewServer()
	discoverygrpc.RegisterAggregatedDiscoveryServiceServer(srv, server.NewServer(context.Background(), snapshots, nil))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	defer srv.Stop()
	conn, _, stop := startWith(t, "-xds", lis.Addr().String(), "-xds-node", "edge-rls")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	health := healthpb.NewHealthClient(conn)
	if h, err := health.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || h.Status != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health before any configuration: %v %v, want NOT_SERVING", h, err)
	}
	conf := &rlsconf.RateLimitConfig{Name: "edge", Domain: "edge", Descriptors: []*rlsconf.RateLimitDescriptor{
		{Key: "remote_address", RateLimit: &rlsconf.RateLimitPolicy{Unit: rlsconf.RateLimitUnit_MINUTE, RequestsPerUnit: 1}}}}
	snap, err := cache.NewSnapshot("1", map[resource.Type][]types.Resource{resource.RateLimitConfigType: {conf}})
	if err != nil {
		t.Fatal(err)
	}
	if err := snapshots.SetSnapshot(ctx, "edge-rls", snap); err != nil {
		t.Fatal(err)
	}
	for {
		h, err := health.Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if h.Status == healthpb.HealthCheckResponse_SERVING {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	c := pb.NewRateLimitServiceClient(conn)
	req := &pb.RateLimitRequest{Domain: "edge", Descriptors: []*rlv3.RateLimitDescriptor{{Entries: []*rlv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: "10.0.0.2"}}}}}
	for i, want := range []pb.RateLimitResponse_Code{pb.RateLimitResponse_OK, pb.RateLimitResponse_OVER_LIMIT} {
		resp, err := c.ShouldRateLimit(ctx, req)
		if err != nil || resp.OverallCode != want {
			t.Fatalf("request %d: %v %v, want %v", i, resp, err, want)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
