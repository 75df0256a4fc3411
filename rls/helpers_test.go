package rls_test

import (
	"context"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/limitspec/limitspec/rls"
	"github.com/limitspec/limitspec/rls/config"
)

// t0 is the tests' time: 10 s into a minute (and an hour, and a day),
// so that a test's fixed windows of a minute or more never roll.
var t0 = time.Unix(1_800_000_000-1_800_000_000%86400+10, 0)

// clock is a settable clock, t0 until set.
type clock struct{ ms atomic.Int64 }

func newClock() *clock {
	c := new(clock)
	c.ms.Store(t0.UnixMilli())
	return c
}

func (c *clock) now() time.Time          { return time.UnixMilli(c.ms.Load()) }
func (c *clock) advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// target is a limiter the service decides with.
type target struct {
	name string
	new  func(t testing.TB, c *clock) limitspec.Limiter
}

// targets are the limiters every service test runs on: in process, a
// Redis, and a Redis Cluster of three masters.
func targets() []target {
	return []target{
		{"goimpl", func(t testing.TB, c *clock) limitspec.Limiter {
			l, err := goimpl.New(goimpl.Options{Now: c.now})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			return l
		}},
		{"redis", func(t testing.TB, c *clock) limitspec.Limiter {
			opt, err := redis.ParseURL(redistest.Start(t))
			if err != nil {
				t.Fatal(err)
			}
			opt.ContextTimeoutEnabled = true
			return newRedisLimiter(t, redis.NewClient(opt), c)
		}},
		{"cluster", func(t testing.TB, c *clock) limitspec.Limiter {
			rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: redistest.StartCluster(t, 3), ContextTimeoutEnabled: true})
			return newRedisLimiter(t, rdb, c)
		}},
	}
}

func newRedisLimiter(t testing.TB, rdb redis.UniversalClient, c *clock) limitspec.Limiter {
	t.Cleanup(func() { rdb.Close() })
	l, err := redislimit.New(context.Background(), rdb, redislimit.Options{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// loadYAML is the configuration of the YAML files given.
func loadYAML(t testing.TB, files ...string) *config.Config {
	t.Helper()
	var fs []config.File
	for i, f := range files {
		fs = append(fs, config.File{Name: "test" + string(rune('a'+i)) + ".yaml", Data: []byte(f)})
	}
	cfg, err := config.Load(fs, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// serve runs svc on a loopback gRPC server for the test, and returns a
// client of it (go-control-plane's stubs, as Envoy's gRPC client speaks).
func serve(t testing.TB, svc *rls.Service) pb.RateLimitServiceClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterRateLimitServiceServer(srv, svc)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewRateLimitServiceClient(conn)
}

// newService serves a Service of cfg and opts on l.
func newService(t testing.TB, l limitspec.Limiter, cfg *config.Config, opts rls.Options) pb.RateLimitServiceClient {
	t.Helper()
	svc, err := rls.New(l, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, svc)
}

// desc is a descriptor of the entries key1, value1, key2, value2, ...
func desc(kv ...string) *rlv3.RateLimitDescriptor {
	d := &rlv3.RateLimitDescriptor{}
	for i := 0; i+1 < len(kv); i += 2 {
		d.Entries = append(d.Entries, &rlv3.RateLimitDescriptor_Entry{Key: kv[i], Value: kv[i+1]})
	}
	return d
}

// ask sends a request of domain and ds, failing the test on an error.
func ask(t *testing.T, c pb.RateLimitServiceClient, req *pb.RateLimitRequest) *pb.RateLimitResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.ShouldRateLimit(ctx, req)
	if err != nil {
		t.Fatalf("ShouldRateLimit(%v): %v", req, err)
	}
	return resp
}

// status is what a test expects of a descriptor's status: its code,
// and its remaining when limited (-1: no current limit).
type status struct {
	code      pb.RateLimitResponse_Code
	remaining int64
}

const (
	ok   = pb.RateLimitResponse_OK
	over = pb.RateLimitResponse_OVER_LIMIT
)

// statusesOf is resp's statuses as a test writes them.
func statusesOf(resp *pb.RateLimitResponse) []status {
	var out []status
	for _, st := range resp.Statuses {
		s := status{code: st.Code, remaining: int64(st.LimitRemaining)}
		if st.CurrentLimit == nil && st.LimitRemaining == 0 {
			s.remaining = -1
		}
		out = append(out, s)
	}
	return out
}

// unreachable is a client of a loopback port no server listens on.
func unreachable(t *testing.T) redis.UniversalClient {
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), ContextTimeoutEnabled: true, MaxRetries: -1})
}
