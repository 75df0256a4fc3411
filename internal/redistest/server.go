package redistest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is a redis-server process on a loopback port that a test can
// kill and start again on the same port, in the same directory, with the
// same arguments, or pause and resume. Its methods are safe for concurrent use; Restart, which
// fails the test, must be called from the test's goroutine.
type Server struct {
	tb   testing.TB
	bin  string
	port int
	dir  string
	args []string // extra redis-server arguments
	// wrap is the program, and its options, that runs redis-server's
	// command line after it (valgrind); nil runs redis-server itself.
	wrap []string
	// startWait bounds how long a start waits for the server to answer.
	startWait time.Duration

	mu      sync.Mutex
	running *process // nil once killed
}

// process is one run of redis-server.
type process struct {
	cmd    *exec.Cmd
	log    *os.File
	exited chan struct{} // closed once cmd.Wait has returned
}

// StartServer runs a redis-server on a free loopback port, as Start does
// (no persistence, a temporary directory, the test failing or skipping
// without redis-server), with args appended to its command line (for
// example "--replicaof", "127.0.0.1", "6380"). The server is killed when
// the test ends.
func StartServer(tb testing.TB, args ...string) *Server {
	tb.Helper()
	return startServer(tb, nil, args)
}

// StartUnder runs a redis-server as StartServer does, under the program
// wrap (valgrind and its options), which runs the server's command line
// after it: a server under valgrind runs the same code, and starts
// slowly, so that it is given a minute to answer.
func StartUnder(tb testing.TB, wrap []string, args ...string) *Server {
	tb.Helper()
	return startServer(tb, wrap, args)
}

func startServer(tb testing.TB, wrap, args []string) *Server {
	tb.Helper()
	bin := serverBinary(tb)
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := FreePort()
		if err != nil {
			tb.Fatal(err)
		}
		s := newServer(tb, bin, port, args)
		if wrap != nil {
			s.wrap, s.startWait = wrap, time.Minute
		}
		if lastErr = s.launch(); lastErr == nil {
			tb.Cleanup(s.Kill)
			return s
		}
	}
	tb.Fatalf("redis-server did not start: %v", lastErr)
	return nil
}

// serverBinary is redis-server's path; without it the test fails, or is
// skipped when LIMITSPEC_SKIP_REDIS=1.
func serverBinary(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("LIMITSPEC_SKIP_REDIS") == "1" {
			tb.Skip("redis-server not found and LIMITSPEC_SKIP_REDIS=1")
		}
		tb.Fatal("redis-server not found on PATH: run the tests with make test, which installs it (scripts/install-redis), or install it yourself (apt-get install redis-server); LIMITSPEC_SKIP_REDIS=1 skips the real-Redis tests")
	}
	return bin
}

func newServer(tb testing.TB, bin string, port int, args []string) *Server {
	return &Server{tb: tb, bin: bin, port: port, dir: tb.TempDir(), args: args, startWait: 10 * time.Second}
}

// PID is the process id of the running server (of the program it runs
// under, which is the same process for valgrind), 0 once it is killed.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		return 0
	}
	return s.running.cmd.Process.Pid
}

// Addr is the server's address, host:port.
func (s *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// Port is the server's port.
func (s *Server) Port() int { return s.port }

// URL is the server's address as a redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr() }

// Log is what the server has written to its log, over all its runs.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.logPath())
	return string(b)
}

func (s *Server) logPath() string { return filepath.Join(s.dir, "redis.log") }

// Kill kills the server with SIGKILL, as a crash would, and waits until
// the process has exited. Killing a killed server does nothing.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.running; p != nil {
		p.cmd.Process.Kill()
		<-p.exited
		p.log.Close()
		s.running = nil
	}
}

// Pause stops the server with SIGSTOP: it keeps its port and its
// connections, and answers nothing, as a hung server would, until Resume.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server with SIGCONT.
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		s.tb.Errorf("redis-server on %s is not running", s.Addr())
		return
	}
	if err := s.running.cmd.Process.Signal(sig); err != nil {
		s.tb.Errorf("redis-server on %s: %v: %v", s.Addr(), sig, err)
	}
}

// Restart kills the server if it runs, then starts it again on the same
// port and waits until it answers PING. It fails the test if the server
// does not answer within 10 s. The new server starts empty (nothing is
// persisted).
func (s *Server) Restart() {
	s.tb.Helper()
	s.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.launch()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.tb.Fatalf("redis-server did not restart on %s: %v", s.Addr(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// launch starts the server and waits until it answers INFO with its own
// process id, or until it exits, another server answers on its port or
// startWait has passed, which is an error with its log.
func (s *Server) launch() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running != nil {
		return fmt.Errorf("redis-server on %s is running already", s.Addr())
	}
	p, err := s.spawn()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(s.startWait)
	for time.Now().Before(deadline) {
		if pid, ok := serverPID(s.Addr()); ok {
			if pid == p.cmd.Process.Pid {
				s.running = p
				return nil
			}
			// Another process's server took the port between FreePort
			// and this one's bind (tests of several packages run at once).
			p.cmd.Process.Kill()
			<-p.exited
			p.log.Close()
			return fmt.Errorf("port %d is another redis-server's (pid %d)", s.port, pid)
		}
		select {
		case <-p.exited:
			p.log.Close()
			return fmt.Errorf("redis-server on %s exited; log:\n%s", s.Addr(), s.Log())
		case <-time.After(20 * time.Millisecond):
		}
	}
	p.cmd.Process.Kill()
	<-p.exited
	p.log.Close()
	return fmt.Errorf("no PING answer on %s; log:\n%s", s.Addr(), s.Log())
}

// spawn starts the redis-server process, its output appended to the log.
func (s *Server) spawn() (*process, error) {
	args := append([]string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--daemonize", "no"}, s.args...)
	log, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	line := append(append(append([]string(nil), s.wrap...), s.bin), args...)
	cmd := exec.Command(line[0], line[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	p := &process{cmd: cmd, log: log, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}
