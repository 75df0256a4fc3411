package redistest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestServerKillRestart(t *testing.T) {
	s := StartServer(t, "--maxmemory-policy", "noeviction")
	if !strings.HasPrefix(s.URL(), "redis://127.0.0.1:") || !strings.HasSuffix(s.Addr(), ":"+strconv.Itoa(s.Port())) {
		t.Fatalf("URL %q, Addr %q, Port %d", s.URL(), s.Addr(), s.Port())
	}
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1, DialTimeout: time.Second})
	defer rdb.Close()
	ctx := context.Background()
	// The extra arguments reach the server.
	if got, err := rdb.ConfigGet(ctx, "maxmemory-policy").Result(); err != nil || got["maxmemory-policy"] != "noeviction" {
		t.Fatalf("CONFIG GET maxmemory-policy: %v, %v", got, err)
	}
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	s.Kill() // a second Kill does nothing
	if ping(s.Addr()) {
		t.Fatal("the killed server still answers PING")
	}
	s.Restart()
	if !ping(s.Addr()) {
		t.Fatal("the restarted server does not answer PING")
	}
	// Same port, same arguments, empty: nothing was persisted.
	if n, err := rdb.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Errorf("EXISTS k after the restart: %d, %v; want 0", n, err)
	}
	if got, err := rdb.ConfigGet(ctx, "maxmemory-policy").Result(); err != nil || got["maxmemory-policy"] != "noeviction" {
		t.Errorf("CONFIG GET maxmemory-policy after the restart: %v, %v", got, err)
	}
	s.Restart() // restarting a running server kills it first
	if !ping(s.Addr()) || !strings.Contains(s.Log(), "Ready to accept connections") {
		t.Errorf("after a second restart: no PING answer or no readiness in the log:\n%s", s.Log())
	}
}

func TestServerPauseResume(t *testing.T) {
	s := StartServer(t)
	s.Pause()
	if ping(s.Addr()) {
		t.Fatal("the paused server answers PING")
	}
	s.Resume()
	if !ping(s.Addr()) {
		t.Fatal("the resumed server does not answer PING")
	}
}
