package redislimit_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/faultproxy"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// TestFaultLostReply cuts the connection after Redis ran every tenth
// decision and before its reply reaches the client, whose options are
// go-redis's defaults (MaxRetries 3, which re-sends a command whose
// connection broke). 150 decisions of a fixed window of 100, at one
// instant, by EVALSHA and by FCALL: each reaches Redis exactly once (the
// proxy counts them), the 15 cut ones fail with ErrUnavailable and
// ErrOutcomeUnknown, and Redis has admitted exactly 100, of which the
// client saw 90 (the 10 cut among the first 100 were admitted unseen).
func TestFaultLostReply(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		verb string
		opts []redislimit.Option
	}{
		{"evalsha", "evalsha", nil},
		{"functions", "fcall", []redislimit.Option{redislimit.WithFunctions()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.StartServer(t)
			proxy := faultproxy.Start(t, srv.Addr())
			rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
			t.Cleanup(func() { rdb.Close() })
			lim := newLimiter(t, rdb, tc.opts...)
			var n atomic.Int64
			proxy.CutAfterReply(func(name string, _ []string) bool {
				return strings.EqualFold(name, tc.verb) && n.Add(1)%10 == 0
			})
			req := limitspec.Request{Key: "lost", Limit: limitspec.FixedWindow{Limit: 100, Window: time.Hour}, Cost: 1, Now: time.Now()}
			before := proxy.Commands(tc.verb) // New's check of the library's version
			seen, lost := 0, 0
			for i := 0; i < 150; i++ {
				ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
				res, err := lim.Limit(ctx, req)
				cancel()
				switch {
				case err == nil && res.Allowed:
					seen++
				case err != nil && errors.Is(err, limitspec.ErrUnavailable) && errors.Is(err, limitspec.ErrOutcomeUnknown):
					lost++
				case err != nil:
					t.Fatalf("decision %d: %v; want ErrUnavailable and ErrOutcomeUnknown", i+1, err)
				}
			}
			proxy.CutAfterReply(nil)
			if got := proxy.Commands(tc.verb) - before; got != 150 {
				t.Errorf("Redis received %d %s; want 150, one per decision", got, tc.verb)
			}
			peek := req
			peek.Cost = 0
			res, err := lim.Limit(t.Context(), peek)
			if err != nil {
				t.Fatal(err)
			}
			if used := res.Limits[0].Quota - res.Limits[0].Remaining; seen != 90 || lost != 15 || used != 100 {
				t.Errorf("admitted %d seen, %d lost, %d used in Redis; want 90, 15, 100", seen, lost, used)
			}
		})
	}
}
