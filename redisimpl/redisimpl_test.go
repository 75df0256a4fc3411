package redisimpl_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redisimpl"
	"github.com/redis/go-redis/v9"
)

func client(t *testing.T) *redis.Client {
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// TestRefusalsMatchGoimpl: every refusal is an ErrBadInput with the text
// goimpl gives for the same input, and writes nothing.
func TestRefusalsMatchGoimpl(t *testing.T) {
	rdb := client(t)
	ctx := context.Background()
	lim, err := redisimpl.NewGCRA(rdb, gcraParams, redisimpl.WithPrefix("app:"))
	if err != nil {
		t.Fatal(err)
	}
	twin, _ := goimpl.NewGCRA(gcraParams)
	pol, err := redisimpl.NewIPUser(rdb)
	if err != nil {
		t.Fatal(err)
	}
	gpol, _ := goimpl.NewPolicy("ip_user", nil)
	cases := []struct {
		name string
		req  limitspec.Request
		want func() error
	}{
		{"negative cost", limitspec.Request{Key: "u", Cost: -1, Now: time.UnixMilli(t0)},
			func() error { _, err := twin.Allow("u", t0, -1); return err }},
		{"time before the epoch", limitspec.Request{Key: "u", Cost: 1, Now: time.UnixMilli(-5)},
			func() error { _, err := twin.Allow("u", -5, 1); return err }},
		{"empty key behind a prefix", limitspec.Request{Key: "", Cost: 1, Now: time.UnixMilli(t0)},
			func() error { _, err := twin.Allow("", t0, 1); return err }},
		{"key opening with }", limitspec.Request{Key: "}x", Cost: 1, Now: time.UnixMilli(t0)},
			func() error { _, err := twin.Allow("}x", t0, 1); return err }},
	}
	for _, c := range cases {
		_, err := lim.Limit(ctx, c.req)
		if !errors.Is(err, limitspec.ErrBadInput) || err.Error() != c.want().Error() {
			t.Errorf("%s: %v; want ErrBadInput %q", c.name, err, c.want())
		}
	}
	policyCases := []map[string]string{{"ip": "1.2.3.4"}, {"ip": "1.2.3.4", "user": ""}, {"ip": "1.2.3.4", "user": "u", "org": "x"}}
	for _, ids := range policyCases {
		_, err := pol.Limit(ctx, limitspec.Request{IDs: ids, Cost: 1, Now: time.UnixMilli(t0)})
		_, want := gpol.Allow(ids, t0, 1)
		if !errors.Is(err, limitspec.ErrBadInput) || err.Error() != want.Error() {
			t.Errorf("ip_user %v: %v; want ErrBadInput %q", ids, err, want)
		}
	}
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Errorf("refused calls left %d keys", n)
	}
}

// TestConstructorsCheckAsGoimpl: parameters are refused before any call
// to Redis, as goimpl refuses them; a policy over several identities is
// refused on a Cluster.
func TestConstructorsCheckAsGoimpl(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true}) // never dialed
	defer rdb.Close()
	_, err := redisimpl.New(rdb, "fixed_window", map[string]int64{"limit": 0, "window_ms": 1000})
	_, want := goimpl.New("fixed_window", map[string]int64{"limit": 0, "window_ms": 1000})
	if !errors.Is(err, limitspec.ErrBadInput) || err.Error() != want.Error() {
		t.Errorf("limit 0: %v; want %v", err, want)
	}
	_, err = redisimpl.NewBurstQuota(rdb, redisimpl.BurstQuotaParams{DailyLimit: 0})
	_, want = goimpl.NewPolicy("burst_quota", map[string]int64{"daily.limit": 0})
	if !errors.Is(err, limitspec.ErrBadInput) || err.Error() != want.Error() {
		t.Errorf("daily limit 0: %v; want %v", err, want)
	}
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, ContextTimeoutEnabled: true})
	defer cluster.Close()
	if _, err := redisimpl.NewIPUser(cluster); !errors.Is(err, limitspec.ErrBadInput) {
		t.Errorf("ip_user on a cluster: %v; want ErrBadInput", err)
	}
	if _, err := redisimpl.NewBurstQuota(cluster, redisimpl.BurstQuotaParams{DailyLimit: 100}); err != nil {
		t.Errorf("burst_quota (one identity) on a cluster: %v", err)
	}
}

// TestBadState: a key holding another Redis type is ErrBadState.
func TestBadState(t *testing.T) {
	rdb := client(t)
	ctx := context.Background()
	lim, err := redisimpl.NewGCRA(rdb, gcraParams)
	if err != nil {
		t.Fatal(err)
	}
	rdb.Set(ctx, "{u}:gcra:10:1000", "x", 0)
	_, err = lim.Limit(ctx, limitspec.Request{Key: "u", Cost: 1})
	if !errors.Is(err, limitspec.ErrBadState) || errors.Is(err, limitspec.ErrUnavailable) {
		t.Errorf("WRONGTYPE: %v; want ErrBadState only", err)
	}
	if v := rdb.Get(ctx, "{u}:gcra:10:1000").Val(); v != "x" {
		t.Errorf("the key now holds %q", v)
	}
}

// TestUnavailable: a port where nothing listens, and a server that
// accepts and never answers, are ErrUnavailable by the caller's deadline.
func TestUnavailable(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	closed := freeAddr(t)
	for _, addr := range []string{closed, silent.Addr().String()} {
		rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1})
		lim, err := redisimpl.NewGCRA(rdb, gcraParams)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()
		_, err = lim.Limit(ctx, limitspec.Request{Key: "u", Cost: 1})
		took := time.Since(start)
		cancel()
		rdb.Close()
		if !errors.Is(err, limitspec.ErrUnavailable) {
			t.Errorf("%s: %v; want ErrUnavailable", addr, err)
		}
		// A bound on blocking, not a speed figure: the call must not
		// outlive its deadline by more than scheduling slack.
		if took > 800*time.Millisecond {
			t.Errorf("%s: the call took %v past a 300 ms deadline", addr, took)
		}
	}
}

// freeAddr is a loopback address where nothing listens.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestClocks: an explicit Now, the caller's clock (WithClock) and the
// server's clock (WithServerClock) each set the time a key records.
func TestClocks(t *testing.T) {
	rdb := client(t)
	ctx := context.Background()
	recorded := func(lim *redisimpl.Limiter, key string, now time.Time) int64 {
		if _, err := lim.Limit(ctx, limitspec.Request{Key: key, Cost: 1, Now: now}); err != nil {
			t.Fatal(err)
		}
		ts, err := rdb.HGet(ctx, "{"+key+"}:fw:60000", "ts").Int64()
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	params := goimpl.FixedWindowParams{Limit: 10, WindowMs: 60000}
	caller, _ := redisimpl.NewFixedWindow(rdb, params, redisimpl.WithClock(func() time.Time { return time.UnixMilli(t0 + 123) }))
	server, _ := redisimpl.NewFixedWindow(rdb, params, redisimpl.WithServerClock())
	if ts := recorded(caller, "explicit", time.UnixMilli(t0+7)); ts != t0+7 {
		t.Errorf("explicit Now: recorded %d, want %d", ts, int64(t0+7))
	}
	if ts := recorded(caller, "caller", time.Time{}); ts != t0+123 {
		t.Errorf("WithClock: recorded %d, want %d", ts, int64(t0+123))
	}
	before := time.Now().UnixMilli()
	ts := recorded(server, "server", time.Time{})
	after := time.Now().UnixMilli()
	if ts < before-1000 || ts > after+1000 {
		t.Errorf("WithServerClock: recorded %d, want the server's clock, within [%d, %d] give or take 1 s", ts, before, after)
	}
	if rdb.TTL(ctx, "{server}:fw:60000").Val() <= 0 {
		t.Error("the server-clock key has no TTL")
	}
}

// TestClientWithoutContextTimeouts: a client that would let a silent
// server hold a call past its context's deadline is refused.
func TestClientWithoutContextTimeouts(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	if _, err := redisimpl.NewGCRA(rdb, gcraParams); !errors.Is(err, limitspec.ErrBadInput) || !strings.Contains(err.Error(), "ContextTimeoutEnabled") {
		t.Errorf("a client without ContextTimeoutEnabled: %v; want ErrBadInput naming it", err)
	}
	if _, err := redisimpl.NewGCRA(nil, gcraParams); !errors.Is(err, limitspec.ErrBadInput) {
		t.Errorf("no client: %v; want ErrBadInput", err)
	}
}
