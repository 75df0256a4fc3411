// Package redistest starts throwaway redis-server processes for tests.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Start runs a redis-server on a free loopback port, with no persistence,
// in a temporary directory, and stops it when the test ends. It returns
// the server's URL. Without redis-server on PATH the test fails (install
// it: apt-get install redis-server), unless LIMITSPEC_SKIP_REDIS=1, when
// it is skipped.
func Start(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("LIMITSPEC_SKIP_REDIS") == "1" {
			tb.Skip("redis-server not found and LIMITSPEC_SKIP_REDIS=1")
		}
		tb.Fatal("redis-server not found on PATH: install it (apt-get install redis-server), or set LIMITSPEC_SKIP_REDIS=1 to skip the real-Redis tests")
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			tb.Fatal(err)
		}
		addr, err := start(tb, bin, port)
		if err == nil {
			return "redis://" + addr
		}
		lastErr = err
	}
	tb.Fatalf("redis-server did not start: %v", lastErr)
	return ""
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func start(tb testing.TB, bin string, port int, extra ...string) (string, error) {
	dir := tb.TempDir()
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no"}, extra...)
	cmd := exec.Command(bin, args...)
	out, err := os.Create(dir + "/redis.log")
	if err != nil {
		return "", err
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ping(addr) {
			tb.Cleanup(func() {
				cmd.Process.Kill()
				cmd.Wait()
				out.Close()
			})
			return addr, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	log, _ := os.ReadFile(dir + "/redis.log")
	return "", fmt.Errorf("no PING answer on %s; log:\n%s", addr, log)
}

func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}
