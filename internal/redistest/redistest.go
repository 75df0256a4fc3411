// Package redistest starts throwaway redis-server processes for tests.
package redistest

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Start runs a redis-server on a free loopback port, with no persistence,
// in a temporary directory, and stops it when the test ends. It returns
// the server's URL. Without redis-server on PATH the test fails (install
// it: apt-get install redis-server), unless LIMITSPEC_SKIP_REDIS=1, when
// it is skipped. StartServer gives a server the test can kill and restart.
func Start(tb testing.TB) string {
	tb.Helper()
	return StartServer(tb).URL()
}

// FreePort is a loopback TCP port no one listened on a moment ago, for
// a server to listen on (a test's, or the bench's).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs a redis-server with extra arguments on port and kills it
// when the test ends; it returns the server's address.
func start(tb testing.TB, bin string, port int, extra ...string) (string, error) {
	s := newServer(tb, bin, port, extra)
	if err := s.launch(); err != nil {
		return "", err
	}
	tb.Cleanup(s.Kill)
	return s.Addr(), nil
}

func ping(addr string) bool {
	_, ok := serverPID(addr)
	return ok
}

// serverPID asks the server on addr for its process id (INFO server); ok
// is false when nothing answers there as a Redis does.
func serverPID(addr string) (pid int, ok bool) {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return 0, false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("INFO server\r\n")); err != nil {
		return 0, false
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		return 0, false // -LOADING and the like: not ready yet
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, false
		}
		if v, found := strings.CutPrefix(line, "process_id:"); found {
			pid, err := strconv.Atoi(strings.TrimSpace(v))
			return pid, err == nil
		}
	}
}
