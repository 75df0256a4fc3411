package rls_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/limitspec/limitspec/rls"
	"github.com/limitspec/limitspec/rls/config"
)

// TestWatch: a changed file replaces the running configuration, and the
// counters of limits it keeps keep their state; a bad file is refused
// with its line and the running configuration kept.
func TestWatch(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "api.yaml")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("domain: api\ndescriptors:\n  - key: user\n    rate_limit: {unit: minute, requests_per_unit: 1}\n")
	cfg, err := config.LoadDir(dir, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := rls.New(targets()[0].new(t, newClock()), cfg, rls.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var refusals []error
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go rls.Watch(ctx, svc, dir, config.Options{}, 5*time.Millisecond, func(err error) {
		mu.Lock()
		defer mu.Unlock()
		refusals = append(refusals, err)
	})
	c := serve(t, svc)
	user := &pb.RateLimitRequest{Domain: "api", Descriptors: []*rlv3.RateLimitDescriptor{desc("user", "a")}}
	run(t, c, []step{{user, ok, []status{{ok, 0}}}, {user, over, []status{{over, 0}}}})

	write("domain: api\ndescriptors:\n  - key: user\n    rate_limit: {unit: minute, requests_per_unit: 3}\n")
	waitFor(t, "the new configuration", func() bool { return svc.Config() != cfg })
	run(t, c, []step{{user, ok, []status{{ok, 1}}}, {user, ok, []status{{ok, 0}}}, {user, over, []status{{over, 0}}}})

	running := svc.Config()
	write("domain: api\ndescriptors:\n  - key: user\n    rate_limit: {unit: fortnight, requests_per_unit: 3}\n")
	waitFor(t, "the refusal", func() bool { mu.Lock(); defer mu.Unlock(); return len(refusals) > 0 })
	mu.Lock()
	got := refusals[0].Error()
	mu.Unlock()
	if !strings.Contains(got, "api.yaml:4") || !strings.Contains(got, "fortnight") {
		t.Errorf("refusal %q does not name the file, line 4 and the unit", got)
	}
	if svc.Config() != running {
		t.Fatal("a refused file replaced the running configuration")
	}
	run(t, c, []step{{user, over, []status{{over, 0}}}})
}

// waitFor waits up to 10 s for cond, failing the test after.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
