package linearize

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Sends is a go-redis hook (add it with AddHook to the client the
// limiter is given) that counts, by the call's now_ms, the script calls
// sent that may have run: every EVALSHA, EVAL or FCALL not answered with
// a refusal that runs nothing; and those of them that timed out. It
// implements Attempts: the Recorder's calls each carry a Now of their
// own, so now_ms names the call. It counts the commands of a pipeline
// one by one, as the hook sees them after the pipeline returns.
type Sends struct {
	mu  sync.Mutex
	ran map[int64][2]int // attempts that may have run, and of them timed out
}

// NewSends returns a hook that has counted nothing.
func NewSends() *Sends { return &Sends{ran: map[int64][2]int{}} }

// Ran is how many attempts of the call at nowMs may have run, and how
// many of those timed out.
func (s *Sends) Ran(nowMs int64) (ran, timedOut int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.ran[nowMs]
	return n[0], n[1]
}

// DialHook is next: dials are not counted.
func (s *Sends) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook counts cmd once it has its reply or error (the error
// next returns: go-redis sets it on cmd after the hooks).
func (s *Sends) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		s.count(cmd, err)
		return err
	}
}

// ProcessPipelineHook counts each command of the pipeline once it has
// returned.
func (s *Sends) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			s.count(cmd, cmd.Err())
		}
		return err
	}
}

// count counts cmd, whose error is err, when it is a script call that
// may have run, and whether it timed out.
func (s *Sends) count(cmd redis.Cmder, err error) {
	now, ok := scriptNow(cmd.Args())
	if !ok || notRun(err) {
		return
	}
	s.mu.Lock()
	n := s.ran[now]
	n[0]++
	if timeout(err) {
		n[1]++
	}
	s.ran[now] = n
	s.mu.Unlock()
}

// scriptNow is the now_ms of a script call's args (the verb, the script,
// numkeys, the keys, then now_ms, as package redislimit sends them).
func scriptNow(args []any) (int64, bool) {
	if len(args) < 4 {
		return 0, false
	}
	switch strings.ToLower(fmt.Sprint(args[0])) {
	case "evalsha", "eval", "fcall", "evalsha_ro", "eval_ro", "fcall_ro":
	default:
		return 0, false
	}
	n, err := strconv.Atoi(fmt.Sprint(args[2]))
	if err != nil || n < 0 || 3+n >= len(args) {
		return 0, false
	}
	now, err := strconv.ParseInt(fmt.Sprint(args[3+n]), 10, 64)
	return now, err == nil
}

// notRun reports whether err is a server's refusal given before a script
// ran: a missing script or function, a slot on another node or moving, a
// server that cannot run scripts now. A nil error, a script's own error
// (BADINPUT, NOHOLD, ...) and a lost reply (a broken connection, a
// deadline) may have run.
func notRun(err error) bool {
	var rerr redis.Error
	var nerr *net.OpError
	switch {
	case err == nil:
		return false
	case errors.As(err, &nerr) && nerr.Op == "dial":
		return true
	case errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrClosed):
		return true
	case !errors.As(err, &rerr):
		return false
	}
	code, _, _ := strings.Cut(rerr.Error(), " ")
	switch code {
	case "NOSCRIPT", "TRYAGAIN", "CLUSTERDOWN", "MOVED", "ASK", "LOADING", "READONLY", "MASTERDOWN", "NOREPLICAS", "MISCONF", "BUSY":
		return true
	}
	return strings.Contains(strings.ToLower(rerr.Error()), "function not found")
}
