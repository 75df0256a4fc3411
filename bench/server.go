package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec/internal/redistest"
)

// server is a throwaway redis-server on a loopback port, with no
// persistence, in a temporary directory that Stop removes.
type server struct {
	addr   string
	dir    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// startServer runs bin (redis-server) on a free loopback port and waits
// until it answers PING; it tries a few ports should one be taken in the
// meantime. With wrap, the server runs under that command line (a tool
// that runs the program after it: valgrind).
func startServer(bin string, wrap ...string) (*server, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("%s not found: install it (apt-get install redis-server) or pass -redis-server PATH", bin)
	}
	var lastErr error
	for range 5 {
		s, err := launch(path, wrap)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// launch starts one redis-server on a free port, under wrap if given.
func launch(bin string, wrap []string) (*server, error) {
	port, err := redistest.FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "limitspec-bench-redis-")
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer log.Close()
	args := append(wrap[:len(wrap):len(wrap)], bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &server{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(60 * time.Second); err != nil { // valgrind starts slowly
		s.Stop()
		return nil, err
	}
	return s, nil
}

// waitReady waits until the server answers PING, exits, or timeout
// passes.
func (s *server) waitReady(timeout time.Duration) error {
	rdb := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer rdb.Close()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			return fmt.Errorf("redis-server on %s exited; log:\n%s", s.addr, b)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("redis-server on %s: no PING answer within %v", s.addr, timeout)
}

// Stop kills the server, waits for it to exit and removes its directory.
func (s *server) Stop() {
	s.cmd.Process.Kill()
	<-s.exited
	os.RemoveAll(s.dir)
}
