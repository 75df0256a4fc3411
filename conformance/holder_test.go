package conformance

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redislimit"
)

// TestLimiterTargetHolds: NewLimiterTarget runs every vector of a holding
// policy on a limiter that is a limitspec.Holder, as a user's own
// conformance test would hand it one: goimpl's, redislimit's on a real
// Redis, and a fallback over the two, its primary answering. Each must
// pass them all, none skipped; a limiter that keeps no holds skips them,
// saying why.
func TestLimiterTargetHolds(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t).Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	var prefixes atomic.Int64
	onRedis := func() (*redislimit.Limiter, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return redislimit.New(ctx, rdb, redislimit.Options{Prefix: fmt.Sprintf("v%d:", prefixes.Add(1))})
	}
	local := func() (limitspec.Limiter, error) { return goimpl.New(goimpl.Options{NoSweeper: true}) }
	targets := []Target{
		NewLimiterTarget("goimpl", local),
		NewLimiterTarget("redislimit", func() (limitspec.Limiter, error) { return onRedis() }),
		NewLimiterTarget("fallback", func() (limitspec.Limiter, error) {
			primary, err := onRedis()
			if err != nil {
				return nil, err
			}
			lim, err := local()
			if err != nil {
				return nil, err
			}
			// a primary slower than this is a fault of the machine, not
			// a decision: the local side would decide, and differ
			return fallback.New(primary, lim, fallback.Options{Timeout: 10 * time.Second})
		}),
	}
	for _, dir := range holdingDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			rec := &recorder{TB: t}
			Test(rec, dir, targets...)
			for _, e := range rec.errors {
				t.Error(e)
			}
			for _, l := range rec.logs {
				if strings.Contains(l, "skipped") {
					t.Errorf("a holding vector skipped: %s", l)
				}
				t.Log(l)
			}
		})
	}
	t.Run("no holds", func(t *testing.T) {
		rec := &recorder{TB: t}
		Test(rec, "../vectors/worker_pool", NewLimiterTarget("bare", func() (limitspec.Limiter, error) {
			lim, err := local()
			return bare{lim}, err
		}))
		skipped := 0
		for _, l := range rec.logs {
			if strings.Contains(l, "] skipped: ") && strings.Contains(l, "is no limitspec.Holder") {
				skipped++
			}
		}
		// every vector skipped, which Test reports as the one failure
		ranNone := len(rec.errors) == 1 && strings.Contains(rec.errors[0], "bare ran none of the")
		if !ranNone || skipped == 0 {
			t.Errorf("a limiter without Hold: %d vectors skipped for want of Hold, want some, and these failures, want one (it ran none):\n%s",
				skipped, strings.Join(append(rec.errors, rec.logs...), "\n"))
		}
	})
}

// holdingDirs are the directories of vectors/ whose vectors hold a
// holding policy.
func holdingDirs(t *testing.T) []string {
	dirs, err := filepath.Glob("../vectors/*")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		vs, err := Load(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) > 0 && vs[0].Policy != nil && vs[0].Policy.Holds {
			out = append(out, d)
		}
	}
	if len(out) < 10 {
		t.Fatalf("%d directories of holding vectors under ../vectors, want 10 or more", len(out))
	}
	return out
}
