package redislimit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/kit"
	"github.com/redis/go-redis/v9"
)

// run calls s with args, a call's KEYS and ARGV after the verb and the
// script (see call.go), whose first key is first: by EVALSHA, sending
// the script with EVAL when the server does not know it (NOSCRIPT), or
// by FCALL, loading the library when the server lacks it. Either way the
// server runs the call at most once (see send): a NOSCRIPT or a missing
// function is answered before anything runs. again says when the call is
// sent again (see send).
func (l *Limiter) run(ctx context.Context, s *script, args []any, first string, again resend) (any, error) {
	var reply any
	var err error
	if l.o.Functions {
		// The library is checked (its version) before its first call: a
		// function of another version would decide otherwise, silently.
		if err := l.library(ctx, s.lib); err != nil {
			return nil, classify(s.name, err)
		}
		args[0], args[1] = verbFCall, s.function
		reply, err = l.send(ctx, args, first, again)
		if isMissingFunction(err) { // lost since (FUNCTION FLUSH, a new server)
			l.forget(s.lib)
			if lerr := l.library(ctx, s.lib); lerr != nil {
				return nil, classify(s.name, lerr)
			}
			reply, err = l.send(ctx, args, first, again)
		}
	} else {
		args[0], args[1] = verbEvalSHA, s.sha
		reply, err = l.send(ctx, args, first, again)
		if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			args = slices.Clone(args) // the first command keeps its own
			args[0], args[1] = verbEval, s.source
			reply, err = l.send(ctx, args, first, again)
		}
	}
	if err != nil {
		return nil, classify(s.name, err)
	}
	return reply, nil
}

// The verbs of a script call, boxed once.
var (
	verbEvalSHA any = "evalsha"
	verbEval    any = "eval"
	verbFCall   any = "fcall"
)

// resend says when send sends a call again.
type resend uint8

const (
	// notRunAgain: after a Cluster's answer that it did not run it.
	notRunAgain resend = iota
	// lostAgain: after a lost reply too (a call with a request id, an
	// operation on a hold: the retry gets the first's reply).
	lostAgain
	// lostOnce: after a lost reply, but not after a Cluster's answer
	// that it did not run it, which ends the call: a decision with a
	// request id of the limiter's own, which the limiter sends again
	// without it (decide): during a slot's migration, a call whose
	// request key is new is refused (TRYAGAIN) until the migration ends.
	lostOnce
)

// onceCmd is a command go-redis never sends twice, whatever the client's
// MaxRetries (or a Cluster's MaxRedirects) say: a script call whose
// connection broke after it was written may have run, and running it
// again would charge the request twice.
type onceCmd struct{ *redis.Cmd }

// NoRetry tells go-redis not to re-send the command after an error.
func (onceCmd) NoRetry() bool { return true }

// send runs a script call (args: EVALSHA, EVAL or FCALL, the script,
// KEYS and ARGV) at most once. It sends it again only after a Cluster's
// answer that it did not run it (notRun: TRYAGAIN during a slot's
// migration, CLUSTERDOWN), after a pause, for as long as ctx's deadline
// leaves time for another attempt (for retryFor when ctx has none).
// go-redis itself still follows MOVED and ASK, which are answered before
// anything runs. A replayable call, one carrying a request id, is sent
// again after a lost reply too, the same way: its retry gets the reply
// the lost one had if that one charged, and is decided for the first
// time if it did not (docs/semantics.md, "Request ids"); so is an
// operation on a hold, whose retry, when the lost one took effect, finds
// nothing held (NOHOLD). A retry the script answered (a reply, or an
// error of the script's own: scriptAnswer) ends the call with that
// answer. Once a reply is lost, any other failure of the retries
// (unsent, refused by a server that fails over, out of time) leaves the
// lost reply's error: the call may have been applied.
func (l *Limiter) send(ctx context.Context, args []any, first string, again resend) (any, error) {
	start := time.Now()
	sent := start // of the attempt
	var lost error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			sent = time.Now()
		}
		cmd := onceCmd{redis.NewCmd(ctx, args...)}
		err := l.process(ctx, cmd, first)
		if err == nil {
			return cmd.Val(), nil
		}
		retry := notRun(err) && again != lostOnce
		if again != notRunAgain && lostReply(err) {
			lost, retry = err, true
		}
		if !retry || !pause(ctx, attempt, start, time.Since(sent)) {
			if lost != nil && !scriptAnswer(err) {
				return nil, lost
			}
			return nil, err
		}
	}
}

// scriptAnswer reports whether err is a script's own error reply
// (BADINPUT, BADSTATE, WRONGTYPE, NOHOLD): the script ran, and answered.
func scriptAnswer(err error) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return false
	}
	code, _, _ := strings.Cut(ErrorReply(rerr.Error()), " ")
	return slices.Contains(scriptCodes, code)
}

// scriptCodes are the codes of the scripts' error replies.
var scriptCodes = []string{"BADINPUT", "BADSTATE", "WRONGTYPE", "NOHOLD"}

// lostReply reports whether err is that of a call sent to a server whose
// reply did not come (a broken connection, a deadline): its outcome is
// unknown.
func lostReply(err error) bool {
	var rerr redis.Error
	return !errors.As(err, &rerr) && sent(err)
}

// process sends cmd, a script call whose first key is first: in a batch
// when batching is on, by itself otherwise.
func (l *Limiter) process(ctx context.Context, cmd onceCmd, first string) error {
	if l.batch == nil || first == "" {
		return l.rdb.Process(ctx, cmd)
	}
	return l.batch.do(ctx, first, cmd)
}

// retryFor bounds the retries of a call whose ctx has no deadline.
const retryFor = time.Second

// pause waits before attempt+1 of a call started at start, whose last
// attempt took took: 1 ms, doubling up to 64 ms. It returns false, at
// once, when ctx is done or its deadline (start+retryFor without one)
// leaves less than the pause and twice the last attempt: a retry whose
// reply would likely come after the deadline is not sent, since its
// outcome would then be unknown, where the calls answered TRYAGAIN ran
// nothing.
func pause(ctx context.Context, attempt int, start time.Time, took time.Duration) bool {
	d := time.Millisecond << min(attempt, 6)
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = start.Add(retryFor)
	}
	if time.Until(deadline) <= d+2*took {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// notRun reports whether err is a Cluster's answer that it cannot run
// the call now, given before running it: TRYAGAIN (the keys of a
// multi-key call are split by a slot's migration), CLUSTERDOWN, or MOVED
// or ASK left after go-redis's own redirects. (A connection that could
// not be made also proves the call did not run, but go-redis has already
// dialled again by then: another attempt would only spend the deadline.)
func notRun(err error) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return false
	}
	code, _, _ := strings.Cut(rerr.Error(), " ")
	switch code {
	case "TRYAGAIN", "CLUSTERDOWN", "MOVED", "ASK":
		return true
	}
	return false
}

// nonLocal reports whether err is a Cluster's refusal of a script's access
// to a key whose slot is migrating and which the node no longer holds
// (the key vanished during the call). The scripts never delete a key
// between two writes of one limit (a drop follows the add); a state
// discarded as untrusted (a clock ahead) is deleted, though, and a
// policy's earlier limits may have been charged by then: the call is not
// sent again, and its outcome is unknown.
func nonLocal(err error) bool {
	return strings.Contains(err.Error(), "Script attempted to access a non local key")
}

// sent reports whether the call that failed with err may have been
// written to a server: false only when no connection was had.
func sent(err error) bool {
	var op *net.OpError
	switch {
	case errors.As(err, &op) && op.Op == "dial":
		return false
	case errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrClosed), errors.Is(err, errNotSent):
		return false
	}
	return true
}

// isMissingFunction reports whether FCALL failed for want of the library.
func isMissingFunction(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "function not found")
}

// unavailable are the Redis error codes of a server that cannot run the
// call now (loading its data set, a read-only replica, a cluster without
// quorum, a busy script, ...), which another attempt later may pass.
var unavailable = []string{"LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "BUSY", "NOREPLICAS", "MISCONF", "OOM"}

// classify maps a call's error onto limitspec's classes (see the package
// doc); a Redis error of no class (NOPERM, an unknown command) is
// returned wrapped, as is.
func classify(script string, err error) error {
	var rerr redis.Error
	switch {
	case errors.Is(err, limitspec.ErrMisconfigured):
		return err
	case lostReply(err):
		return fmt.Errorf("redislimit %s: %w: %w: %w", script, limitspec.ErrUnavailable, limitspec.ErrOutcomeUnknown, err)
	case !errors.As(err, &rerr):
		return fmt.Errorf("redislimit %s: %w: %w", script, limitspec.ErrUnavailable, err)
	}
	// The code is the server's reply's, which err may wrap (the loading
	// of a library names the server first).
	code, rest, _ := strings.Cut(ErrorReply(rerr.Error()), " ")
	switch {
	case code == "BADINPUT":
		return &limitspec.InputError{Msg: rest}
	case code == "NOHOLD":
		return limitcall.NoHoldError(rest)
	case code == "BADSTATE" || code == "WRONGTYPE":
		return fmt.Errorf("redislimit %s: %w: %w", script, limitspec.ErrBadState, err)
	case nonLocal(rerr):
		return fmt.Errorf("redislimit %s: %w: %w: %w", script, limitspec.ErrUnavailable, limitspec.ErrOutcomeUnknown, err)
	}
	for _, c := range unavailable {
		if code == c {
			return fmt.Errorf("redislimit %s: %w: %w", script, limitspec.ErrUnavailable, err)
		}
	}
	return fmt.Errorf("redislimit %s: %w", script, err)
}

// An error a script raises through redis.call comes back from miniredis
// as "ERR Error running script (...): :LINE: <the error> stack
// traceback: ..."; Redis itself answers with the error alone.
var scriptErrorRE = regexp.MustCompile(`^ERR Error (?:compiling|running) script[^:]*: [^:]*:\d+: ([A-Z]+ .*?)(?: stack traceback:.*)?$`)

// ErrorReply is the error reply a script gave (BADINPUT ..., BADSTATE
// ..., WRONGTYPE ...), recovered from the text of a Redis error as Redis
// or miniredis reports it; other texts are returned as they are.
func ErrorReply(msg string) string {
	if m := scriptErrorRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return msg
}

// ErrOtherLibrary is matched by the error of a server holding another
// version of a Functions library than this build's (and by
// limitspec.ErrMisconfigured): it is never replaced. Replace it by hand
// (FUNCTION LOAD REPLACE with its library.lua) once no older client
// uses it.
var ErrOtherLibrary = fmt.Errorf("%w: another version of a Functions library is loaded", limitspec.ErrMisconfigured)

// library makes sure every server holds the library of that name,
// loading it where missing, once per Limiter (again after a server lost
// it).
func (l *Limiter) library(ctx context.Context, name string) error {
	if _, done := l.loaded.Load(name); done {
		return nil
	}
	lib, ok := kit.LookupLibrary(name)
	if !ok {
		return fmt.Errorf("%w: the Functions library %s is not linked in", limitspec.ErrMisconfigured, name)
	}
	if _, err := LoadLibrary(ctx, l.rdb, lib); err != nil {
		return err
	}
	l.loaded.Store(name, true)
	return nil
}

// forget says the library of that name may be missing again.
func (l *Limiter) forget(name string) { l.loaded.Delete(name) }

// LoadLibrary loads a Functions library (lib.Source) on every server of
// rdb that lacks it: a single Redis, or every master of a Cluster or
// shard of a Ring. It returns the clients of the servers it loaded it on.
// A server holding another version is an error matching ErrOtherLibrary,
// and is left as it is.
func LoadLibrary(ctx context.Context, rdb redis.UniversalClient, lib *kit.Library) ([]*redis.Client, error) {
	var mu sync.Mutex
	var loaded []*redis.Client
	err := eachServer(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		did, err := loadOn(ctx, c, lib)
		if did {
			mu.Lock()
			loaded = append(loaded, c)
			mu.Unlock()
		}
		return err
	})
	return loaded, err
}

// LibrariesLoaded reports whether every server of rdb holds this build's
// version of every Functions library linked in (the catalogue's, and one
// per user's spec), the error naming the first that does not.
func LibrariesLoaded(ctx context.Context, rdb redis.UniversalClient) error {
	for _, lib := range kit.Libraries() {
		err := eachServer(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
			v, err := c.FCall(ctx, lib.Name+"_version", nil).Text()
			if err != nil {
				return fmt.Errorf("%s: library %s: %w", c.Options().Addr, lib.Name, err)
			}
			return otherVersion(c, lib, v)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// loadOn loads lib on c unless it holds it; did says it loaded. Another
// client loading it at the same time is no error; a library of lib's
// name that has no version function, which FUNCTION LOAD does not
// replace, is another version.
func loadOn(ctx context.Context, c *redis.Client, lib *kit.Library) (did bool, err error) {
	for attempt := 0; attempt < 2; attempt++ {
		v, err := c.FCall(ctx, lib.Name+"_version", nil).Text()
		switch {
		case err == nil:
			return false, otherVersion(c, lib, v)
		case !isMissingFunction(err):
			return false, fmt.Errorf("%s: %w", c.Options().Addr, err)
		}
		err = c.FunctionLoad(ctx, lib.Source).Err()
		if err == nil {
			return true, nil
		}
		if !strings.Contains(err.Error(), "already exists") {
			return false, fmt.Errorf("loading the library %s on %s: %w", lib.Name, c.Options().Addr, err)
		}
	}
	return false, fmt.Errorf("%s: %w: %s without a function %s_version, this build's is version %s; replace it (FUNCTION LOAD REPLACE with its library.lua) once no older client uses it",
		c.Options().Addr, ErrOtherLibrary, lib.Name, lib.Name, lib.Version)
}

// otherVersion is the error of c holding version v of lib, nil when v is
// this build's.
func otherVersion(c *redis.Client, lib *kit.Library, v string) error {
	if v == lib.Version {
		return nil
	}
	return fmt.Errorf("%s: %w: %s version %s, this build's is %s; replace it (FUNCTION LOAD REPLACE with its library.lua) once no older client uses it",
		c.Options().Addr, ErrOtherLibrary, lib.Name, v, lib.Version)
}

// eachServer runs fn on every server that holds keys: a single Redis, the
// masters of a Cluster, the shards of a Ring; another client is an error
// matching limitspec.ErrMisconfigured.
func eachServer(ctx context.Context, rdb redis.UniversalClient, fn func(context.Context, *redis.Client) error) error {
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, fn)
	case *redis.Ring:
		return c.ForEachShard(ctx, fn)
	case *redis.Client:
		return fn(ctx, c)
	}
	// Neither loaded nor checked: a configuration to fix, not an outage
	// (package fallback would decide around it for ever).
	return fmt.Errorf("%w: the Functions libraries cannot be loaded through a %T: give Options.Functions a *redis.Client, *redis.ClusterClient or *redis.Ring",
		limitspec.ErrMisconfigured, rdb)
}
