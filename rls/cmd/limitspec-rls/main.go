// Command limitspec-rls runs Envoy's rate limit service (RLS v3) on
// limitspec (package rls): it reads a directory of envoyproxy/ratelimit
// configuration files (reloading them when they change), or takes the
// configuration from an xDS management server as Envoy Gateway serves
// it, and decides every descriptor exactly with a Redis, a Redis
// Cluster, a Sentinel-managed Redis or in process.
//
//	go run ./cmd/limitspec-rls -config DIR | -xds HOST:PORT [-xds-node ID] [-addr :8081] [-redis URL | -cluster ADDRS | -sentinel MASTER@ADDRS] [-fallback] ...
//
// Without a Redis it decides in process (package goimpl): exact for one
// instance of the service. It serves gRPC health (grpc.health.v1) on
// the same port, SERVING once a configuration is loaded, and stops
// gracefully on SIGINT or SIGTERM: NOT_SERVING first, then the calls in
// flight answered, within -grace.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/limitspec/limitspec/rls"
	"github.com/limitspec/limitspec/rls/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr, nil); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "limitspec-rls:", err)
		}
		os.Exit(2)
	}
}

// flags are the command's settings.
type flags struct {
	dir, addr, xds, xdsNode string
	redisURL, cluster, sent string
	fallback, merge         bool
	service                 rls.Options
	reload, grace, timeout  time.Duration
}

// parse reads args.
func parse(args []string, stderr io.Writer) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("limitspec-rls", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.dir, "config", "", "directory of configuration files (*.yaml, *.yml): envoyproxy/ratelimit's format, with limitspec's algorithm and params (required)")
	fs.StringVar(&f.xds, "xds", "", "host:port of an xDS management server (Envoy Gateway's) to take the configuration from, as RateLimitConfig resources, in place of -config")
	fs.StringVar(&f.xdsNode, "xds-node", "default", "with -xds: the node id the management server knows this service by (the reference's CONFIG_GRPC_XDS_NODE_ID)")
	fs.StringVar(&f.addr, "addr", ":8081", "address to serve gRPC on (the rate limit service and grpc.health.v1)")
	fs.StringVar(&f.redisURL, "redis", "", "URL of a Redis to keep the counters in, e.g. redis://127.0.0.1:6379/0 (default: in process)")
	fs.StringVar(&f.cluster, "cluster", "", "comma-separated host:port of Redis Cluster nodes, in place of -redis")
	fs.StringVar(&f.sent, "sentinel", "", "MASTER@host:port,host:port: a master's name and its Sentinels, in place of -redis")
	fs.BoolVar(&f.fallback, "fallback", false, "with a Redis: decide in process while Redis cannot (package fallback), and pay Redis back after")
	fs.BoolVar(&f.merge, "merge-domains", false, "merge files of one domain instead of refusing the second (the reference's MERGE_DOMAIN_CONFIG)")
	fs.BoolVar(&f.service.Independent, "independent", false, "count each descriptor on its own, as the reference does, instead of all or nothing")
	fs.BoolVar(&f.service.ShadowMode, "shadow-mode", false, "answer OK to every request, still counting it (the reference's SHADOW_MODE)")
	fs.BoolVar(&f.service.Headers, "headers", false, "add the IETF RateLimit-Policy and RateLimit fields, and Retry-After on refusals, to responses")
	fs.BoolVar(&f.service.LegacyHeaders, "legacy-headers", false, "add X-RateLimit-Limit, -Remaining and -Reset (the reference's LIMIT_RESPONSE_HEADERS_ENABLED)")
	fs.DurationVar(&f.reload, "reload", time.Second, "how often to look for changed configuration files (0: never)")
	fs.DurationVar(&f.grace, "grace", 10*time.Second, "on SIGTERM, how long calls in flight may take before the server stops")
	fs.DurationVar(&f.timeout, "timeout", 500*time.Millisecond, "the longest a decision may take when the caller sets no deadline")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if (f.dir == "") == (f.xds == "") || fs.NArg() > 0 {
		fs.Usage()
		return f, errors.New("give -config DIR or -xds ADDR, and no arguments")
	}
	return f, nil
}

// run serves until ctx ends, then stops gracefully; ready, when not nil,
// receives the address served on once it serves.
func run(ctx context.Context, args []string, stderr io.Writer, ready chan<- net.Addr) error {
	f, err := parse(args, stderr)
	if err != nil {
		return err
	}
	l, closeLimiter, err := newLimiter(ctx, f)
	if err != nil {
		return err
	}
	defer closeLimiter()
	cfg, err := firstConfig(f)
	if err != nil {
		return err
	}
	svc, err := rls.New(l, cfg, f.service)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(deadline(f.timeout)))
	pb.RegisterRateLimitServiceServer(srv, svc)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	if err := follow(ctx, f, svc, hs, stderr); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "limitspec-rls: serving on %s (%s), domains %v\n", lis.Addr(), describe(f), cfg.Domains())
	if ready != nil {
		ready <- lis.Addr()
	}
	return serve(ctx, srv, hs, lis, f.grace)
}

// firstConfig is the configuration the service starts with: -config's
// files, or none until the xDS server sends one.
func firstConfig(f flags) (*config.Config, error) {
	if f.xds != "" {
		return config.Load(nil, config.Options{MergeDomains: f.merge})
	}
	return config.LoadDir(f.dir, config.Options{MergeDomains: f.merge})
}

// follow keeps svc's configuration up to date: -config's files reloaded
// every -reload, or the xDS server's resources; health says SERVING
// once a configuration is loaded (at once for files).
func follow(ctx context.Context, f flags, svc *rls.Service, hs *health.Server, stderr io.Writer) error {
	opts := config.Options{MergeDomains: f.merge}
	refused := func(err error) {
		fmt.Fprintf(stderr, "limitspec-rls: configuration refused, the running one kept: %v\n", err)
	}
	serving := func() { hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING) }
	if f.xds == "" {
		serving()
		if f.reload > 0 {
			go rls.Watch(ctx, svc, f.dir, opts, f.reload, refused)
		}
		return nil
	}
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	conn, err := grpc.NewClient(f.xds, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("-xds: %w", err)
	}
	go func() {
		defer conn.Close()
		rls.WatchXDS(ctx, svc, conn, &corev3.Node{Id: f.xdsNode}, opts, refused, serving)
	}()
	return nil
}

// serve serves on lis until ctx ends, then reports NOT_SERVING and
// stops gracefully, or at once after grace.
func serve(ctx context.Context, srv *grpc.Server, hs *health.Server, lis net.Listener, grace time.Duration) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	hs.Shutdown()
	done := make(chan struct{})
	go func() { srv.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		srv.Stop()
	}
	return nil
}

// deadline gives every call without a deadline one of d, so that a
// Redis that does not answer fails the call (Unavailable) in time for
// Envoy's own timeout and failure mode.
func deadline(d time.Duration) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if _, ok := ctx.Deadline(); !ok && d > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
		return handler(ctx, req)
	}
}
