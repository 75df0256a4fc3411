package redislimit

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec"
)

// BenchmarkPrepare measures what the limiter does in Go before a call
// reaches Redis: checking the request and building its KEYS and ARGV,
// for one limit and for a policy of six. It needs no server:
//
//	go test -run '^$' -bench Prepare -benchmem ./redislimit
func BenchmarkPrepare(b *testing.B) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	l, err := New(b.Context(), rdb)
	if err != nil {
		b.Fatal(err)
	}
	ipUser, err := limitspec.IPUserPolicy()
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		req  limitspec.Request
	}{
		{"gcra", limitspec.Request{Key: "alice", Limit: limitspec.GCRA{Burst: 20, Rate: 10, Period: time.Second}, Cost: 1}},
		{"ip_user", limitspec.Request{Policy: ipUser, IDs: map[string]string{"ip": "10.0.0.1", "user": "alice"}, Cost: 1}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.prepare(bc.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
