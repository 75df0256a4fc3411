package redislimit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/kit"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// nowhere is a client of a port where nothing listens: a call that
// reached for Redis would be ErrUnavailable, not a refusal.
func nowhere(t *testing.T, contextTimeouts bool) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: freeAddr(t), ContextTimeoutEnabled: contextTimeouts, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// embedded wraps a go-redis client by embedding it: its Options method
// is the client's. opaque hides the client behind the interface.
type (
	embedded struct{ *redis.Client }
	opaque   struct{ redis.UniversalClient }
)

// TestNewRefuses: New refuses, with an error that says why and without
// a panic, a missing client (nil, or a typed nil), a client that would
// let a call outlive its context, and options that cannot work.
func TestNewRefuses(t *testing.T) {
	t.Parallel()
	ok := nowhere(t, true)
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{freeAddr(t)}})
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": freeAddr(t)}})
	t.Cleanup(func() { cluster.Close(); ring.Close() })
	cases := []struct {
		name string
		rdb  redis.UniversalClient
		opts redislimit.Options
		want string
	}{
		{"nil client", nil, redislimit.Options{}, "redislimit: misconfigured: no Redis client"},
		{"typed nil *redis.Client", (*redis.Client)(nil), redislimit.Options{}, "redislimit: misconfigured: no Redis client"},
		{"typed nil *redis.ClusterClient", (*redis.ClusterClient)(nil), redislimit.Options{}, "redislimit: misconfigured: no Redis client"},
		{"client without ContextTimeoutEnabled", nowhere(t, false), redislimit.Options{}, "ContextTimeoutEnabled: true"},
		{"cluster client without ContextTimeoutEnabled", cluster, redislimit.Options{}, "ContextTimeoutEnabled: true"},
		{"ring without ContextTimeoutEnabled", ring, redislimit.Options{}, "ContextTimeoutEnabled: true"},
		{"a wrapper of a client without ContextTimeoutEnabled", embedded{nowhere(t, false)}, redislimit.Options{}, "ContextTimeoutEnabled: true"},
		{"a wrapper of a client without it, vouched for", embedded{nowhere(t, false)}, redislimit.Options{ContextTimeouts: true},
			"must have ContextTimeoutEnabled: true"},
		{"an opaque wrapper", opaque{nowhere(t, false)}, redislimit.Options{},
			"redislimit: misconfigured: cannot tell whether the Redis client (redislimit_test.opaque) has ContextTimeoutEnabled"},
		{"an opaque wrapper of a good client", opaque{ok}, redislimit.Options{}, "set Options.ContextTimeouts if it bounds each call"},
		{"two clocks", ok, redislimit.Options{Now: time.Now, ServerClock: true}, "redislimit: misconfigured: Options.Now and Options.ServerClock are both set"},
		{"Prefix with {", ok, redislimit.Options{Prefix: "app{"}, `redislimit: misconfigured: Options.Prefix "app{" holds '{' or '}'`},
		{"Prefix with }", ok, redislimit.Options{Prefix: "}app"}, `redislimit: misconfigured: Options.Prefix "}app" holds '{' or '}'`},
		{"BatchSize of 1 call", ok, redislimit.Options{BatchSize: 1, BatchWait: time.Millisecond}, "redislimit: misconfigured: Options.BatchSize is 1: a pipeline holds 2 calls or more (NoBatching"},
		{"negative BatchSize", ok, redislimit.Options{BatchSize: -1}, "redislimit: misconfigured: Options.BatchSize is -1: a pipeline holds 2 calls or more"},
		{"negative BatchWait", ok, redislimit.Options{BatchSize: 64, BatchWait: -time.Millisecond}, "redislimit: misconfigured: Options.BatchWait is -1ms: the wait must be more than 0 (NoBatching"},
		{"BatchSize with NoBatching", ok, redislimit.Options{BatchSize: 64, NoBatching: true}, "redislimit: misconfigured: Options.BatchSize and BatchWait are set with NoBatching"},
		{"BatchWait with NoBatching", ok, redislimit.Options{BatchWait: time.Millisecond, NoBatching: true}, "redislimit: misconfigured: Options.BatchSize and BatchWait are set with NoBatching"},
	}
	for _, c := range cases {
		err := noPanic(t, c.name, func() error {
			_, err := redislimit.New(t.Context(), c.rdb, c.opts)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, limitspec.ErrMisconfigured) {
			t.Errorf("%s: New: %v; want an error matching ErrMisconfigured saying %q", c.name, err, c.want)
		}
	}
	for _, opts := range []redislimit.Options{
		{},
		{Prefix: "app:", Now: time.Now, BatchSize: 2, BatchWait: time.Nanosecond, RequestIDs: true},
		{ServerClock: true, BatchSize: 2},
		{BatchWait: time.Millisecond},
		{NoBatching: true},
	} {
		if _, err := redislimit.New(t.Context(), ok, opts); err != nil {
			t.Errorf("New with valid options %+v: %v", opts, err)
		}
	}
	if _, err := redislimit.New(t.Context(), embedded{ok}, redislimit.Options{}); err != nil {
		t.Errorf("New with a wrapper of a good client: %v", err)
	}
	if _, err := redislimit.New(t.Context(), opaque{ok}, redislimit.Options{ContextTimeouts: true}); err != nil {
		t.Errorf("New with an opaque wrapper vouched for: %v", err)
	}
}

// foreign is a limit of no generated package; asGCRA claims to be the
// catalogue's gcra.
type foreign struct{ asGCRA bool }

func (f foreign) Algorithm() limitspec.Algorithm {
	if f.asGCRA {
		return limitspec.GCRA{}.Algorithm()
	}
	return limitspec.Algorithm{Library: "elsewhere", Name: "quota"}
}
func (foreign) Validate() error            { return nil }
func (foreign) QuotaWindow() time.Duration { return time.Second }

// TestMisusedRequests: requests no limiter can decide are refused by
// every method, as ErrBadInput with a message that says why, without a
// panic and without a call to Redis.
func TestMisusedRequests(t *testing.T) {
	t.Parallel()
	lim := newLimiter(t, nowhere(t, true), redislimit.Options{})
	quota, err := limitspec.BurstQuotaPolicy(10)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		req  limitspec.Request
		want string
	}{
		{"neither a limit nor a policy", limitspec.Request{Key: "u", Cost: 1}, "needs a Limit or a Policy"},
		{"a typed nil *GCRA", limitspec.Request{Key: "u", Limit: (*limitspec.GCRA)(nil), Cost: 1}, "needs a Limit or a Policy"},
		{"both a limit and a policy", limitspec.Request{Key: "u", Limit: burst, Policy: quota, IDs: map[string]string{"user": "u"}, Cost: 1}, "a Limit or a Policy, not both"},
		{"a limit of no generated package", limitspec.Request{Key: "u", Limit: foreign{}, Cost: 1}, "no scripts of this algorithm are linked in"},
		{"a foreign limit claiming to be gcra", limitspec.Request{Key: "u", Limit: foreign{asGCRA: true}, Cost: 1}, "is not a limit of gcra"},
		{"a policy made without NewPolicy", limitspec.Request{Policy: &limitspec.Policy{}, Cost: 1}, "make it with limitspec.NewPolicy"},
	}
	for _, c := range cases {
		calls := map[string]func() error{
			"Limit": func() error { _, err := lim.Limit(t.Context(), c.req); return err },
			"Reset": func() error { return lim.Reset(t.Context(), c.req) },
			"Check": func() error { return lim.Check(c.req) },
			"View":  func() error { _, err := lim.View(t.Context(), "entries", c.req); return err },
		}
		if c.req.Policy == nil {
			calls["Allow"] = func() error { _, err := lim.Allow(t.Context(), c.req.Key, c.req.Limit); return err }
		}
		for method, call := range calls {
			err := noPanic(t, c.name+": "+method, call)
			want := c.want
			if method == "View" && (c.req.Policy != nil || limiters.IsNil(c.req.Limit)) {
				want = "a view needs a Limit (and no Policy)"
			}
			if !errors.Is(err, limitspec.ErrBadInput) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %s: %v; want ErrBadInput saying %q", c.name, method, err, want)
			}
		}
	}
	// A pointer to a limit is a limit.
	if err := lim.Check(limitspec.Request{Limit: &limitspec.GCRA{Burst: 1, Rate: 1, Period: time.Second}}); err != nil {
		t.Errorf("Check of a *GCRA: %v", err)
	}
	canceled := noPanic(t, "a canceled context", func() error {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := lim.Allow(ctx, "u", burst)
		return err
	})
	if !errors.Is(canceled, context.Canceled) {
		t.Errorf("a canceled context: %v; want context.Canceled", canceled)
	}
}

// userAlgorithm is an algorithm of a user's library, registered with
// scripts of its own (a spec's package would register them), so that a
// call refused before it is sent names the algorithm as package goimpl
// does: by its name, not its library's.
var userAlgorithm = limitspec.Algorithm{Library: "misusetest", Name: "quota"}

// userLimit is a limit of userAlgorithm.
type userLimit struct{}

func (userLimit) Algorithm() limitspec.Algorithm { return userAlgorithm }
func (userLimit) Validate() error                { return nil }
func (userLimit) QuotaWindow() time.Duration     { return time.Second }

func init() {
	kit.RegisterScripts(&kit.Scripts{ID: userAlgorithm, Library: "misusetest", Keys: []string{":q"},
		Decide: kit.Script{Name: "quota"}, Reset: kit.Script{Name: "quota_reset"},
		Args: func(limitspec.Limit) ([]int64, error) { return nil, nil }})
}

// TestUserAlgorithmKeyRefused: an empty key, or one that begins with
// '}', of a user's algorithm is refused before any call, by Limit and by
// a bound handle, with the words its generated Go decision uses
// ("quota: key must not be empty").
func TestUserAlgorithmKeyRefused(t *testing.T) {
	t.Parallel()
	lim := newLimiter(t, nowhere(t, true), redislimit.Options{})
	b, err := lim.Bind(userLimit{})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"": "quota: " + limitcall.KeyEmpty, "}x": "quota: " + limitcall.KeyBrace} {
		_, byLimit := lim.Limit(t.Context(), limitspec.Request{Key: key, Limit: userLimit{}, Cost: 1})
		_, byBound := b.Allow(t.Context(), key)
		for what, err := range map[string]error{"Limit": byLimit, "Bound": byBound} {
			if !errors.Is(err, limitspec.ErrBadInput) || err.Error() != want {
				t.Errorf("%s of key %q: %v; want ErrBadInput %q", what, key, err, want)
			}
		}
	}
}
