// Command example is a small HTTP service behind package httplimit: GET
// /hello answers JSON, limited per client IP by a GCRA limiter (by
// default 20 requests at once, then 10 a second: the README's opening),
// in process, or, with -redis, on Redis with a local fallback while Redis
// is unavailable; -lease N decides from leases of N taken from Redis
// (package lease). With -redis, -metrics serves GET /metrics in the
// Prometheus text format: the fallback's decisions by side, Redis's
// failures, the circuit breaker's openings and state, and the leases'
// counts with -lease (package otelmetrics, through OpenTelemetry's
// Prometheus exporter).
//
//	cd cmd/example && go run . [-addr 127.0.0.1:8080] [-redis redis://127.0.0.1:6379]
//	                           [-lease 0] [-metrics 127.0.0.1:9090] [-burst 20] [-rate 10]
//	                           [-period 1s] [-trusted 10.0.0.0/8,...]
//
// It prints the curl command to try, and serves until interrupted. It is
// a module of its own, beside module otelmetrics, so that limitspec's
// go.mod requires neither OpenTelemetry nor Prometheus.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/httplimit"
	"github.com/limitspec/limitspec/lease"
	"github.com/limitspec/limitspec/otelmetrics"
	"github.com/limitspec/limitspec/redislimit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

// config is what the flags say.
type config struct {
	addr, redisURL, metrics, trusted string
	lease                            int64          // the cost of a lease; 0: none
	limit                            limitspec.GCRA // per client IP
}

// parseFlags reads the flags of args; -h prints the usage to out.
func parseFlags(args []string, out io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("example", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&c.redisURL, "redis", "", "limit on this Redis (redis://host:port), falling back to a local limiter while it is unavailable; empty: in process only")
	fs.Int64Var(&c.lease, "lease", 0, "with -redis, decide from leases of this cost taken from Redis ahead (one round trip per lease; package lease); 0: every request asks Redis")
	fs.StringVar(&c.metrics, "metrics", "", "serve GET /metrics (Prometheus text format) on this address (127.0.0.1:9090, say): the fallback's decisions by side, Redis's failures, the breaker's state; needs -redis (in process only, no fallback decides); empty: off")
	fs.StringVar(&c.trusted, "trusted", "", "comma-separated trusted proxies (CIDRs or IPs): the client IP is then read from X-Forwarded-For behind them")
	fs.Int64Var(&c.limit.Burst, "burst", 20, "requests admitted at once per client IP")
	fs.Int64Var(&c.limit.Rate, "rate", 10, "requests admitted per -period once the burst is spent")
	fs.DurationVar(&c.limit.Period, "period", time.Second, "period of -rate, a whole number of ms")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := c.limit.Validate(); err != nil {
		return c, fmt.Errorf("-burst, -rate, -period: %w", err)
	}
	if c.metrics != "" && c.redisURL == "" {
		return c, errors.New("-metrics needs -redis: in process only, there is no fallback to count")
	}
	if c.lease < 0 {
		return c, fmt.Errorf("-lease must be ≥ 0, got %d", c.lease)
	}
	if c.lease != 0 && c.redisURL == "" {
		return c, errors.New("-lease needs -redis: leases are taken from Redis")
	}
	return c, nil
}

// run parses args, starts the service, prints the address and the curl
// command to stdout, and serves until ctx ends.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	c, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	lims, err := limiter(c)
	if err != nil {
		return err
	}
	defer lims.close()
	h, err := handler(lims.lim, c)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	served := make(chan error, 2)
	metricsURL, stopMetrics, err := serveMetrics(c.metrics, lims, served)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopMetrics()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	announce(stdout, c, ln.Addr(), lims.where, metricsURL)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err = <-served: // either server failed: stop the other
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return errors.Join(err, srv.Shutdown(shutdownCtx))
}

// announce prints where the service listens and how it limits, where its
// metrics are, if anywhere, and the curl command to try.
func announce(stdout io.Writer, c config, addr net.Addr, where, metricsURL string) {
	fmt.Fprintf(stdout, "listening on http://%s: per client IP, %d at once, then %d per %v (gcra, %s)\n",
		addr, c.limit.Burst, c.limit.Rate, c.limit.Period, where)
	if metricsURL != "" {
		fmt.Fprintf(stdout, "metrics: %s\n", metricsURL)
	}
	fmt.Fprintf(stdout, "try: for i in $(seq %d); do curl -si http://%s/hello | grep -iE '^(HTTP|ratelimit|retry-after)'; done\n",
		c.limit.Burst+1, addr)
}

// serveMetrics serves GET /metrics on addr, unless addr is empty: the
// counters of lims's fallback and lease in the Prometheus text format,
// through package otelmetrics and OpenTelemetry's Prometheus exporter, on
// a registry of its own. It returns the URL it serves, the function that
// stops it, and sends to served what its Serve returns.
func serveMetrics(addr string, lims limiters, served chan<- error) (url string, stop func(), err error) {
	if addr == "" || lims.fallback == nil {
		return "", func() {}, nil
	}
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo())
	if err != nil {
		return "", nil, err
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	meter, name := provider.Meter(otelmetrics.ScopeName), attribute.String("limiter", "hello")
	_, err = otelmetrics.Observe(meter, lims.fallback, name)
	if err == nil && lims.lease != nil {
		_, err = otelmetrics.ObserveLease(meter, lims.lease, name)
	}
	var ln net.Listener
	if err == nil {
		ln, err = net.Listen("tcp", addr)
	}
	if err != nil {
		provider.Shutdown(context.Background())
		return "", nil, fmt.Errorf("-metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { served <- srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/metrics", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		provider.Shutdown(ctx)
	}, nil
}

// limiters is the service's limiter, with the parts whose counters
// /metrics serves (nil when not built), where it decides, and what
// releases it.
type limiters struct {
	lim      limitspec.Limiter
	fallback *fallback.Limiter
	lease    *lease.Limiter
	where    string
	close    func()
}

// limiter is the limiter of c: in process, or on c.redisURL with a
// fallback to one in process, behind leases with c.lease.
func limiter(c config) (limiters, error) {
	local, err := goimpl.New(goimpl.Options{})
	if err != nil {
		return limiters{}, err
	}
	if c.redisURL == "" {
		return limiters{lim: local, where: "in process", close: func() { local.Close() }}, nil
	}
	opt, err := redis.ParseURL(c.redisURL)
	if err != nil {
		return limiters{}, err
	}
	opt.ContextTimeoutEnabled = true // so that fallback's deadline bounds each call
	opt.DialerRetries = 1            // the local limiter is the retry
	redis.SetLogger(redislimit.GoRedisLogger{Level: slog.LevelDebug})
	rdb := redis.NewClient(opt)
	l := limiters{where: "on Redis " + opt.Addr + ", in process while it is unavailable", close: func() { rdb.Close(); local.Close() }}
	remote, err := redislimit.New(context.Background(), rdb, redislimit.Options{})
	if err == nil {
		l.fallback, err = fallback.New(remote, local, fallback.Options{})
		l.lim = l.fallback
	}
	if err == nil && c.lease != 0 {
		l.lease, err = lease.New(l.fallback, lease.Options{Size: c.lease})
		l.lim, l.where = l.lease, fmt.Sprintf("%s, from leases of %d", l.where, c.lease)
	}
	if err != nil {
		l.close()
		return limiters{}, err
	}
	return l, nil
}

// handler serves GET /hello behind the limiter, limited by c's GCRA per
// client IP, read from the connection or, behind the trusted proxies,
// from X-Forwarded-For.
func handler(lim limitspec.Limiter, c config) (http.Handler, error) {
	opts := httplimit.Options{Limit: c.limit}
	if c.trusted != "" {
		proxies, err := httplimit.ParsePrefixes(strings.Split(c.trusted, ",")...)
		if err != nil {
			return nil, err
		}
		opts.Key = httplimit.XForwardedFor(proxies...)
	}
	m, err := httplimit.New(lim, opts)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"message":"hello"}`)
	})
	return m.Handler(mux), nil
}
