package redislimit

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limiters"
)

// preparedCmd keeps the benchmark's commands from being optimized away.
var preparedCmd onceCmd

// BenchmarkPrepare measures what the limiter does in Go before a call
// reaches Redis: checking the request, building its KEYS and ARGV and
// go-redis's command of them (EVALSHA), for one limit and for a policy
// of six, through Limiter.Limit (a limit, a policy remembered) and
// through handles bound to them. It needs no server:
//
//	go test -run '^$' -bench Prepare -benchmem ./redislimit
func BenchmarkPrepare(b *testing.B) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	l, err := New(b.Context(), rdb, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ipUser, err := limitspec.IPUserPolicy()
	if err != nil {
		b.Fatal(err)
	}
	gcra := limitspec.GCRA{Burst: 20, Rate: 10, Period: time.Second}
	bound, err := l.Bind(gcra)
	if err != nil {
		b.Fatal(err)
	}
	boundPolicy, err := l.BindPolicy(ipUser)
	if err != nil {
		b.Fatal(err)
	}
	limiter := func(req limitspec.Request) (*plan, error) { return l.plan(req) }
	for _, bc := range []struct {
		name string
		req  limitspec.Request
		plan func(limitspec.Request) (*plan, error)
	}{
		{"Limiter/gcra", limitspec.Request{Key: "alice", Limit: gcra, Cost: 1}, limiter},
		{"Limiter/ip_user", limitspec.Request{Policy: ipUser, IDs: map[string]string{"ip": "10.0.0.1", "user": "alice"}, Cost: 1}, limiter},
		{"Bound/gcra", limitspec.Request{Key: "alice", Cost: 1}, func(req limitspec.Request) (*plan, error) {
			return bound.p, limiters.CheckBound(req.Limit, req.Policy, bound.given, bound.value)
		}},
		{"BoundPolicy/ip_user", limitspec.Request{IDs: map[string]string{"ip": "10.0.0.1", "user": "alice"}, Cost: 1}, func(req limitspec.Request) (*plan, error) {
			return boundPolicy.p, limiters.CheckBoundPolicy(req.Limit, req.Policy, boundPolicy.p.policy)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := bc.plan(bc.req)
				if err != nil {
					b.Fatal(err)
				}
				args, _, err := l.decideArgs(p, bc.req)
				if err != nil {
					b.Fatal(err)
				}
				args[0], args[1] = verbEvalSHA, p.decide.sha
				preparedCmd = onceCmd{redis.NewCmd(b.Context(), args...)}
			}
		})
	}
}
