package redislimit_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// refused are requests every limiter refuses: by the scripts on Redis
// (the cost, the time, the key, the meta, a policy's identities) or
// before any call (the limit, the rule).
func refused(t *testing.T) []struct {
	name string
	req  limitspec.Request
} {
	ipUser, err := limitspec.IPUserPolicy()
	if err != nil {
		t.Fatal(err)
	}
	meta := limitspec.MetaWindow{Limit: 3, Window: time.Minute}
	ids := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	return []struct {
		name string
		req  limitspec.Request
	}{
		{"negative cost", limitspec.Request{Key: "u", Limit: burst, Cost: -1, Now: at(0)}},
		{"cost past 2^53-1", limitspec.Request{Key: "u", Limit: burst, Cost: 1 << 53, Now: at(0)}},
		{"time before the epoch", limitspec.Request{Key: "u", Limit: burst, Cost: 1, Now: time.UnixMilli(-5)}},
		{"time past 2^45 ms", limitspec.Request{Key: "u", Limit: burst, Cost: 1, Now: time.UnixMilli(1<<45 + 1)}},
		{"empty key behind a prefix", limitspec.Request{Key: "", Limit: burst, Cost: 1, Now: at(0)}},
		{"key opening with }", limitspec.Request{Key: "}x", Limit: burst, Cost: 1, Now: at(0)}},
		{"forced, negative cost", limitspec.Request{Key: "u", Limit: burst, Cost: -1, Now: at(0), Force: true}},
		{"meta past 256 bytes", limitspec.Request{Key: "u", Limit: meta, Cost: 1, Now: at(0), Inputs: ids("meta", strings.Repeat("m", 257))}},
		{"burst 0", limitspec.Request{Key: "u", Limit: limitspec.GCRA{Burst: 0, Rate: 10, Period: time.Second}, Cost: 1, Now: at(0)}},
		{"window not a whole ms", limitspec.Request{Key: "u", Limit: limitspec.FixedWindow{Limit: 5, Window: 1500 * time.Microsecond}, Cost: 1, Now: at(0)}},
		{"typed nil *GCRA", limitspec.Request{Key: "u", Limit: (*limitspec.GCRA)(nil), Cost: 1, Now: at(0)}},
		{"neither a limit nor a policy", limitspec.Request{Key: "u", Cost: 1, Now: at(0)}},
		{"both a limit and a policy", limitspec.Request{Key: "u", Limit: burst, Policy: ipUser, IDs: ids("ip", "1.2.3.4", "user", "u"), Cost: 1, Now: at(0)}},
		{"policy, missing identity", limitspec.Request{Policy: ipUser, IDs: ids("ip", "1.2.3.4"), Cost: 1, Now: at(0)}},
		{"policy, empty identity", limitspec.Request{Policy: ipUser, IDs: ids("ip", "1.2.3.4", "user", ""), Cost: 1, Now: at(0)}},
		{"policy, identity opening with }", limitspec.Request{Policy: ipUser, IDs: ids("ip", "}1", "user", "u"), Cost: 1, Now: at(0)}},
		{"policy, unknown identity", limitspec.Request{Policy: ipUser, IDs: ids("ip", "1.2.3.4", "user", "u", "org", "x"), Cost: 1, Now: at(0)}},
		{"policy, negative cost", limitspec.Request{Policy: ipUser, IDs: ids("ip", "1.2.3.4", "user", "u"), Cost: -1, Now: at(0)}},
		{"policy, time before the epoch", limitspec.Request{Policy: ipUser, IDs: ids("ip", "1.2.3.4", "user", "u"), Cost: 1, Now: time.UnixMilli(-1)}},
	}
}

// TestRefusalsMatchMemory: every refusal is an ErrBadInput with the text
// package goimpl gives for the same request (the Redis limiter's keys
// behind a prefix), and writes nothing.
func TestRefusalsMatchMemory(t *testing.T) {
	eachWay(t, func(t *testing.T, rdb *redis.Client, lim *redislimit.Limiter) {
		twin, err := goimpl.New(goimpl.Options{NoSweeper: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { twin.Close() })
		for _, c := range refused(t) {
			_, err := lim.Limit(t.Context(), c.req)
			_, want := twin.Limit(t.Context(), c.req)
			if want == nil || !errors.Is(want, limitspec.ErrBadInput) {
				t.Fatalf("%s: memory: %v; the case is no refusal", c.name, want)
			}
			if !errors.Is(err, limitspec.ErrBadInput) || err.Error() != want.Error() {
				t.Errorf("%s:\n got %v\nwant ErrBadInput %q", c.name, err, want)
			}
		}
		if ks := keys(t, rdb); len(ks) != 0 {
			t.Errorf("refused calls left keys %v", ks)
		}
	}, redislimit.Options{Prefix: "app:"})
}

// TestBadState: a key holding another Redis type (WRONGTYPE), or a field
// the scripts did not write (BADSTATE), is ErrBadState, and is left as
// it is; a policy writes none of its other limits' keys then.
func TestBadState(t *testing.T) {
	quota, err := limitspec.BurstQuotaPolicy(100)
	if err != nil {
		t.Fatal(err)
	}
	window := limitspec.FixedWindow{Limit: 10, Window: time.Minute}
	eachWay(t, func(t *testing.T, rdb *redis.Client, lim *redislimit.Limiter) {
		ctx := t.Context()
		cases := []struct {
			name, key string
			plant     func(key string) error
			req       limitspec.Request
			untouched string // a key the call must not have written
		}{
			{"WRONGTYPE", burstKey, func(k string) error { return rdb.HSet(ctx, k, "ts", "1").Err() },
				limitspec.Request{Key: "u", Limit: burst, Cost: 1}, ""},
			{"BADSTATE", "{v}:fw:60000", func(k string) error { return rdb.Set(ctx, k, "x:1", 0).Err() },
				limitspec.Request{Key: "v", Limit: window, Cost: 1}, ""},
			{"WRONGTYPE in a policy's second limit", "{w}:daily:sl:86400000", func(k string) error { return rdb.Set(ctx, k, "x", 0).Err() },
				limitspec.Request{Policy: quota, IDs: map[string]string{"user": "w"}, Cost: 1}, "{w}:burst:gc:10:1000"},
		}
		for _, c := range cases {
			if err := c.plant(c.key); err != nil {
				t.Fatal(err)
			}
			before := rdb.Dump(ctx, c.key).Val()
			_, err := lim.Limit(ctx, c.req)
			if !errors.Is(err, limitspec.ErrBadState) || errors.Is(err, limitspec.ErrUnavailable) || errors.Is(err, limitspec.ErrBadInput) {
				t.Errorf("%s: %v; want ErrBadState only", c.name, err)
			}
			if after := rdb.Dump(ctx, c.key).Val(); after != before {
				t.Errorf("%s: the key %s was changed", c.name, c.key)
			}
			if c.untouched != "" && rdb.Exists(ctx, c.untouched).Val() != 0 {
				t.Errorf("%s: the refused policy wrote %s", c.name, c.untouched)
			}
		}
	}, redislimit.Options{})
}

// silentListener accepts connections and never answers, as a hung
// server would; it is closed when the test ends.
func silentListener(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	return l.Addr().String()
}

// TestUnavailable: a port where nothing listens, and a server that
// accepts and never answers, are ErrUnavailable by the caller's
// deadline, with or without Functions (New, which cannot reach them to
// load the library, does not refuse them), through Limiter.Limit and
// through a bound handle.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{freeAddr(t), silentListener(t)} {
		for i, functions := range []bool{false, true, false, true} {
			way := ways[i/2]
			rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1})
			opts := redislimit.Options{Functions: functions}
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			start := time.Now()
			lim, err := redislimit.New(ctx, rdb, opts)
			if err != nil {
				t.Errorf("%s, functions %v: New: %v; want no refusal (the first call finds out)", addr, functions, err)
				cancel()
				rdb.Close()
				continue
			}
			_, err = way.via(lim).Limit(ctx, limitspec.Request{Key: "u", Limit: burst, Cost: 1})
			took := time.Since(start)
			cancel()
			rdb.Close()
			if !errors.Is(err, limitspec.ErrUnavailable) {
				t.Errorf("%s, functions %v, %s: %v; want ErrUnavailable", addr, functions, way.name, err)
			}
			// A bound on blocking, not a speed figure: New and the call
			// together must not outlive the deadline by more than
			// scheduling slack.
			if took > 800*time.Millisecond {
				t.Errorf("%s, functions %v, %s: New and the call took %v past a 300 ms deadline", addr, functions, way.name, took)
			}
		}
	}
}

// TestReadOnlyReplica: a replica refuses the writes of a decision
// (READONLY), as a master demoted under a Sentinel client does until the
// client follows the failover: ErrUnavailable, by EVALSHA and by FCALL
// (whose library the replica could not be given).
func TestReadOnlyReplica(t *testing.T) {
	t.Parallel()
	_, replica := replicaPair(t)
	rdb := redis.NewClient(&redis.Options{Addr: replica.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	for _, opts := range []redislimit.Options{{}, {Functions: true}} {
		lim := newLimiter(t, rdb, opts)
		_, err := lim.Allow(t.Context(), "u", burst)
		if !errors.Is(err, limitspec.ErrUnavailable) || !strings.Contains(err.Error(), "READONLY") {
			t.Errorf("functions %v: %v; want ErrUnavailable, READONLY", opts.Functions, err)
		}
	}
}

// TestClocks: an explicit Now, the caller's clock (Options.Now) and the
// server's clock (Options.ServerClock) each set the time a key records, by
// EVALSHA and by FCALL.
func TestClocks(t *testing.T) {
	t.Parallel()
	_, rdb := newClient(t)
	for _, way := range []string{"scripts", "functions"} {
		functions := way == "functions"
		caller := newLimiter(t, rdb, redislimit.Options{Functions: functions, Now: func() time.Time { return at(123) }})
		server := newLimiter(t, rdb, redislimit.Options{Functions: functions, ServerClock: true})
		key := func(k string) string { return way + "-" + k }
		if ts := recorded(t, rdb, caller, key("explicit"), at(7)); ts != t0+7 {
			t.Errorf("%s, explicit Now: recorded %d, want %d", way, ts, int64(t0+7))
		}
		if ts := recorded(t, rdb, server, key("explicit-server"), at(8)); ts != t0+8 {
			t.Errorf("%s, explicit Now, ServerClock: recorded %d, want %d", way, ts, int64(t0+8))
		}
		if ts := recorded(t, rdb, caller, key("caller"), time.Time{}); ts != t0+123 {
			t.Errorf("%s, Options.Now: recorded %d, want %d", way, ts, int64(t0+123))
		}
		before := time.Now().UnixMilli()
		ts := recorded(t, rdb, server, key("server"), time.Time{})
		after := time.Now().UnixMilli()
		if ts < before-1000 || ts > after+1000 {
			t.Errorf("%s, ServerClock: recorded %d, want the server's clock, within [%d, %d] give or take 1 s", way, ts, before, after)
		}
		if ttl := rdb.PTTL(t.Context(), "{"+key("server")+"}:fw:60000").Val(); ttl <= 0 || ttl > 2*time.Minute {
			t.Errorf("%s: the server-clock key's TTL is %v; want at most the window and its margin, 2 min", way, ttl)
		}
	}
}

// recorded is the time the fixed window of key records after a request
// at now.
func recorded(t *testing.T, rdb *redis.Client, lim *redislimit.Limiter, key string, now time.Time) int64 {
	t.Helper()
	window := limitspec.FixedWindow{Limit: 10, Window: time.Minute}
	if _, err := lim.Limit(t.Context(), limitspec.Request{Key: key, Limit: window, Cost: 1, Now: now}); err != nil {
		t.Fatal(err)
	}
	ts, err := field(t, rdb, "{"+key+"}:fw:60000", 0)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}
