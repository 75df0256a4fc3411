package redistest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// StartCluster runs a Redis Cluster of n masters (no replicas) on free
// loopback ports and stops it when the test ends. It returns the nodes'
// addresses. Like Start, it fails without redis-server and redis-cli
// unless LIMITSPEC_SKIP_REDIS=1.
func StartCluster(tb testing.TB, n int) []string {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	cli, cliErr := exec.LookPath("redis-cli")
	if err != nil || cliErr != nil {
		if os.Getenv("LIMITSPEC_SKIP_REDIS") == "1" {
			tb.Skip("redis-server or redis-cli not found and LIMITSPEC_SKIP_REDIS=1")
		}
		tb.Fatal("redis-server and redis-cli are needed on PATH: make test installs them (scripts/install-redis), or apt-get install redis-server")
	}
	var addrs []string
	for i := 0; i < n; i++ {
		port, err := clusterPort()
		if err != nil {
			tb.Fatal(err)
		}
		addr, err := start(tb, bin, port, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000")
		if err != nil {
			tb.Fatal(err)
		}
		addrs = append(addrs, addr)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		tb.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, a := range addrs {
		host, port, _ := net.SplitHostPort(a)
		for {
			out, _ := exec.Command(cli, "-h", host, "-p", port, "CLUSTER", "INFO").Output()
			if strings.Contains(string(out), "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				tb.Fatalf("cluster node %s not ok after 30 s:\n%s", a, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return addrs
}

// clusterPort finds a free port whose cluster bus port, 10000 above, is
// free too.
func clusterPort() (int, error) {
	for attempt := 0; attempt < 50; attempt++ {
		p, err := FreePort()
		if err != nil {
			return 0, err
		}
		if p > 55000 {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		if err != nil {
			continue
		}
		l.Close()
		return p, nil
	}
	return 0, fmt.Errorf("no free port pair for a cluster node")
}
