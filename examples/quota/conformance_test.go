package quota_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/conformance"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/redislimit"
)

// TestVectorsOnLimiters hands package conformance the limiters a service
// builds on this package's limits, besides the embedded targets of
// TestVectors: goimpl's limiter behind a wrapper of the service's own,
// and redislimit's on a Redis (miniredis, in process). Every vector
// under testdata/vectors must be decided through each as it says.
func TestVectorsOnLimiters(t *testing.T) {
	var decided atomic.Int64
	wrapped := func() (limitspec.Limiter, error) {
		lim, err := goimpl.New(goimpl.Options{NoSweeper: true})
		return &counted{Limiter: lim, n: &decided}, err
	}
	onRedis := func() (limitspec.Limiter, error) {
		srv, err := miniredis.Run()
		if err != nil {
			return nil, err
		}
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
		lim, err := redislimit.New(context.Background(), rdb, redislimit.Options{})
		if err != nil {
			srv.Close()
			return nil, err
		}
		return &onServer{Limiter: lim, close: func() { rdb.Close(); srv.Close() }}, nil
	}
	conformance.Test(t, "testdata/vectors",
		conformance.NewLimiterTarget("wrapped-goimpl", wrapped),
		conformance.NewLimiterTarget("redislimit-miniredis", onRedis))
	vectors, err := conformance.Load("testdata/vectors")
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, v := range vectors {
		for _, s := range v.Steps {
			if !s.Reset && s.View == "" {
				want++
			}
		}
	}
	if got := decided.Load(); got != want {
		t.Errorf("the wrapper decided %d requests; the vectors hold %d decisions", got, want)
	}
}

// counted is a service's wrapper of a limiter: it counts the decisions.
type counted struct {
	*goimpl.Limiter
	n *atomic.Int64
}

func (c *counted) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	c.n.Add(1)
	return c.Limiter.Limit(ctx, req)
}

// onServer is a Redis limiter that closes its client and server with it.
type onServer struct {
	*redislimit.Limiter
	close func()
}

func (s *onServer) Close() error { s.close(); return nil }
