package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/limitspec/limitspec/internal/redistest"
)

// titleRLS is the rate limit services' figure.
const titleRLS = "Envoy's rate limit service: ShouldRateLimit through one Redis"

// referenceRLS is envoyproxy/ratelimit at the commit Envoy Gateway pins,
// as go.mod requires it (rls_reference.go keeps it there).
const referenceRLS = "envoyproxy/ratelimit 3fb7025"

// rlsConfig is both services' configuration: fixed windows of a minute
// so large that every decision admits, where the two count alike.
const rlsConfig = `domain: bench
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 4000000000}
  - key: path
    rate_limit: {unit: minute, requests_per_unit: 4000000000}
`

// rlsService is a rate limit service the figure runs: its name, and how
// it is started on a gRPC port against a Redis, its configuration in a
// directory.
type rlsService struct {
	name  string
	ours  bool
	build func(dir string) (string, error)
	start func(bin, dir, redisAddr string, port int) *exec.Cmd
}

var rlsServices = []rlsService{
	{referenceRLS, false, buildReference, startReference},
	{"limitspec-rls", true, buildOurs, startOurs},
}

// buildReference builds the reference's command from this module's
// requirement of it.
func buildReference(dir string) (string, error) {
	bin := filepath.Join(dir, "ratelimit")
	return bin, goBuild("", bin, "github.com/envoyproxy/ratelimit/src/service_cmd")
}

// buildOurs builds cmd/limitspec-rls from the rls module of this tree.
func buildOurs(dir string) (string, error) {
	bin := filepath.Join(dir, "limitspec-rls")
	return bin, goBuild("../rls", bin, "./cmd/limitspec-rls")
}

// goBuild runs go build of pkg into bin, in the module at dir ("" for
// this one).
func goBuild(dir, bin, pkg string) error {
	args := []string{"build", "-o", bin, pkg}
	if dir != "" {
		args = append([]string{"build", "-C", dir}, args[1:]...)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("go %v: %v\n%s", args, err, out)
	}
	return nil
}

// startReference starts the reference as its README runs it: settings
// in the environment, its configuration under RUNTIME_ROOT, no statsd.
func startReference(bin, dir, redisAddr string, port int) *exec.Cmd {
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "USE_STATSD=false", "LOG_LEVEL=warn",
		"RUNTIME_ROOT="+filepath.Join(dir, "runtime"), "RUNTIME_SUBDIRECTORY=ratelimit", "RUNTIME_WATCH_ROOT=false",
		"REDIS_SOCKET_TYPE=tcp", "REDIS_URL="+redisAddr,
		"HOST=127.0.0.1", "PORT=0", "DEBUG_HOST=127.0.0.1", "DEBUG_PORT=0",
		"GRPC_HOST=127.0.0.1", "GRPC_PORT="+strconv.Itoa(port))
	return cmd
}

// startOurs starts cmd/limitspec-rls on the same configuration.
func startOurs(bin, dir, redisAddr string, port int) *exec.Cmd {
	return exec.Command(bin, "-config", filepath.Join(dir, "runtime", "ratelimit", "config"),
		"-addr", "127.0.0.1:"+strconv.Itoa(port), "-redis", "redis://"+redisAddr, "-reload", "0")
}

// rlsOptions are the figure's settings.
type rlsOptions struct {
	Goroutines int
	Warm, For  time.Duration
	Rounds     int
}

// rlsFigure measures each service's decisions per second and latency on
// the Redis at redisAddr: a request of one descriptor, and of two.
func rlsFigure(ctx context.Context, redisAddr string, o rlsOptions) (Table, error) {
	dir, err := os.MkdirTemp("", "limitspec-bench-rls-")
	if err != nil {
		return Table{}, err
	}
	defer os.RemoveAll(dir)
	confDir := filepath.Join(dir, "runtime", "ratelimit", "config")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		return Table{}, err
	}
	if err := os.WriteFile(filepath.Join(confDir, "bench.yaml"), []byte(rlsConfig), 0o644); err != nil {
		return Table{}, err
	}
	t := rlsTable(o)
	for _, shape := range []int{1, 2} {
		rows, err := rlsRows(ctx, dir, redisAddr, shape, o)
		if err != nil {
			return Table{}, err
		}
		t.Rows = append(t.Rows, rows...)
	}
	return t, nil
}

// rlsTable is the figure's table, without its rows.
func rlsTable(o rlsOptions) Table {
	return Table{
		Title: titleRLS,
		Notes: []string{fmt.Sprintf("Each service a process of its own, built from its Go module (the reference from the version Envoy Gateway pins, cmd/limitspec-rls from this tree), each with its default settings on the same redis-server: the reference sends a pipeline of INCRBY and EXPIRE per descriptor (its default pool of 10 connections, no implicit pipelining), limitspec-rls one EVALSHA of the policy script per request (go-redis's default pool, redislimit's batching). "+
			"The load: %d goroutines over 4 gRPC connections, requests of cost 1 for 10,000 client addresses in turn (two descriptors: the address and one of 100 paths), each fixed window of a minute so large that every decision admits, where the two count alike; counted for %v after a warm-up of %v; the services in turn, %d rounds, the median of each row's. "+
			"p50 and p99: of every call of the counted time, from the client's side. The services, the load and redis-server share the machine's cores.",
			o.Goroutines, o.For, o.Warm, o.Rounds)},
		Columns: []Column{{"decisions/s", Higher}, {"p50 ms", Lower}, {"p99 ms", Lower}},
	}
}

// rlsRows runs every service, o.Rounds times in turn, on requests of
// shape descriptors, and returns a row each: the medians.
func rlsRows(ctx context.Context, dir, redisAddr string, shape int, o rlsOptions) ([]Row, error) {
	addrs := make([]string, len(rlsServices))
	for i, s := range rlsServices {
		addr, stop, err := runService(ctx, s, dir, redisAddr)
		if err != nil {
			return nil, err
		}
		defer stop()
		addrs[i] = addr
	}
	values := make([][3][]float64, len(rlsServices))
	for range o.Rounds {
		for i := range rlsServices {
			m, err := loadService(ctx, addrs[i], shape, o)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", rlsServices[i].name, err)
			}
			for c := range m {
				values[i][c] = append(values[i][c], m[c])
			}
		}
	}
	group := "one descriptor"
	if shape == 2 {
		group = "two descriptors"
	}
	var rows []Row
	for i, s := range rlsServices {
		rows = append(rows, Row{Group: group, Name: s.name + ", " + group, Ours: s.ours,
			Values: []float64{median(values[i][0]), median(values[i][1]), median(values[i][2])}})
	}
	return rows, nil
}

// runService builds and starts s, waits until it answers, and returns
// its address and what stops it.
func runService(ctx context.Context, s rlsService, dir, redisAddr string) (string, func(), error) {
	bin, err := s.build(dir)
	if err != nil {
		return "", nil, err
	}
	port, err := redistest.FreePort()
	if err != nil {
		return "", nil, err
	}
	cmd := s.start(bin, dir, redisAddr, port)
	log, err := os.Create(filepath.Join(dir, filepath.Base(bin)+".log"))
	if err != nil {
		return "", nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return "", nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait(); log.Close() }
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := waitAnswers(ctx, addr, 60*time.Second); err != nil {
		stop()
		out, _ := os.ReadFile(log.Name())
		return "", nil, fmt.Errorf("%s: %w\n%s", s.name, err, out)
	}
	return addr, stop, nil
}

// waitAnswers waits until the service at addr decides a request.
func waitAnswers(ctx context.Context, addr string, timeout time.Duration) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	c := pb.NewRateLimitServiceClient(conn)
	deadline := time.Now().Add(timeout)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		resp, err := c.ShouldRateLimit(cctx, rlsRequest(0, 1))
		cancel()
		switch {
		case err == nil && resp.OverallCode == pb.RateLimitResponse_OK:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("no decision after %v: %v", timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rlsRequest is the i-th request of shape descriptors.
func rlsRequest(i int64, shape int) *pb.RateLimitRequest {
	entry := func(k, v string) *rlv3.RateLimitDescriptor {
		return &rlv3.RateLimitDescriptor{Entries: []*rlv3.RateLimitDescriptor_Entry{{Key: k, Value: v}}}
	}
	req := &pb.RateLimitRequest{Domain: "bench", Descriptors: []*rlv3.RateLimitDescriptor{
		entry("remote_address", "10.0."+strconv.FormatInt(i%10000/100, 10)+"."+strconv.FormatInt(i%100, 10))}}
	if shape == 2 {
		req.Descriptors = append(req.Descriptors, entry("path", "/api/"+strconv.FormatInt(i%100, 10)))
	}
	return req
}

// loadService loads the service at addr as rlsTable says and returns
// its decisions/s, p50 and p99 in ms. A denial or an error fails it.
func loadService(ctx context.Context, addr string, shape int, o rlsOptions) ([3]float64, error) {
	conns := make([]*grpc.ClientConn, 4)
	for i := range conns {
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return [3]float64{}, err
		}
		defer c.Close()
		conns[i] = c
	}
	var (
		next, counting atomic.Int64
		mu             sync.Mutex
		lat            []time.Duration
		failed         error
		wg             sync.WaitGroup
	)
	stop := time.Now().Add(o.Warm + o.For)
	countFrom := time.Now().Add(o.Warm)
	for g := range o.Goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := pb.NewRateLimitServiceClient(conns[g%len(conns)])
			var mine []time.Duration
			for time.Now().Before(stop) {
				start := time.Now()
				resp, err := c.ShouldRateLimit(ctx, rlsRequest(next.Add(1), shape))
				if err == nil && resp.OverallCode != pb.RateLimitResponse_OK {
					err = fmt.Errorf("denied: %v", resp)
				}
				if err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
				if start.After(countFrom) {
					mine = append(mine, time.Since(start))
					counting.Add(1)
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if failed != nil {
		return [3]float64{}, failed
	}
	if len(lat) == 0 {
		return [3]float64{}, fmt.Errorf("no call counted")
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return [3]float64{float64(counting.Load()) / o.For.Seconds(), ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100])}, nil
}
