package linearize_test

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestLinearizableCluster: the traffic of TestLinearizableRedis on a
// Redis Cluster of 3 masters, one of which (the master of t0's slot, and
// of the other tenants that hash there) is frozen with SIGSTOP for 500 ms,
// from 300 ms into the run: the calls to it time out with their outcome
// unknown, and it runs those it had received once it is resumed. The
// history is linearizable with respect to the oracle's model.
func TestLinearizableCluster(t *testing.T) {
	t.Parallel()
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: redistest.StartCluster(t, 3), ContextTimeoutEnabled: true})
	t.Cleanup(func() { cluster.Close() })
	pid := masterPID(t, cluster, values[0])
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) }) // before the cluster is killed
	w := workload
	w.Seed = uint64(time.Now().UnixNano())
	checkRun(t, cluster, w, func(ctx context.Context) {
		if pause(ctx, 300*time.Millisecond); ctx.Err() != nil {
			return // the run ended first
		}
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Errorf("SIGSTOP %d: %v", pid, err)
			return
		}
		frozen := time.Now()
		pause(ctx, 500*time.Millisecond)
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Errorf("SIGCONT %d: %v", pid, err)
		}
		t.Logf("the master of %s (pid %d) was frozen for %v", values[0], pid, time.Since(frozen).Round(time.Millisecond))
	})
}

// pause waits for d, or until ctx is done.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// masterPID is the process id of the master of value's hash slot, as
// its INFO server reports it.
func masterPID(t *testing.T, cluster *redis.ClusterClient, value string) int {
	t.Helper()
	master, err := cluster.MasterForKey(t.Context(), "{"+value+"}")
	if err != nil {
		t.Fatal(err)
	}
	info, err := master.Info(t.Context(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			pid, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("no process_id in the INFO server of %s", master.Options().Addr)
	return 0
}
