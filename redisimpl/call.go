package redisimpl

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/lua"
	"github.com/redis/go-redis/v9"
)

// run calls s with keys and argv: by EVALSHA, sending the script with EVAL
// when the server does not know it (NOSCRIPT), or by FCALL, loading the
// library when the server lacks it. Either way the server runs the call
// once: a NOSCRIPT or missing function is answered before anything runs.
func (l *Limiter) run(ctx context.Context, s script, keys []string, argv []any) (any, error) {
	var reply any
	var err error
	if l.o.functions {
		fn := lua.FunctionName(s.name)
		reply, err = l.rdb.FCall(ctx, fn, keys, argv...).Result()
		if isMissingFunction(err) {
			if _, lerr := LoadLibrary(ctx, l.rdb); lerr != nil {
				return nil, l.classify(lerr)
			}
			reply, err = l.rdb.FCall(ctx, fn, keys, argv...).Result()
		}
	} else {
		reply, err = l.rdb.EvalSha(ctx, s.sha, keys, argv...).Result()
		if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			reply, err = l.rdb.Eval(ctx, s.src, keys, argv...).Result()
		}
	}
	if err != nil {
		return nil, l.classify(err)
	}
	return reply, nil
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
func (l *Limiter) classify(err error) error {
	var rerr redis.Error
	if errors.Is(err, ErrOtherLibrary) {
		return fmt.Errorf("redisimpl %s: %w", l.name, err)
	}
	if !errors.As(err, &rerr) {
		return fmt.Errorf("redisimpl %s: %w: %w", l.name, limitspec.ErrUnavailable, err)
	}
	msg := unwrapScriptError(err.Error())
	code, rest, _ := strings.Cut(msg, " ")
	switch {
	case code == "BADINPUT":
		return &goimpl.InputError{Msg: rest}
	case code == "BADSTATE" || code == "WRONGTYPE":
		return fmt.Errorf("redisimpl %s: %w: %w", l.name, limitspec.ErrBadState, err)
	}
	for _, c := range unavailable {
		if code == c {
			return fmt.Errorf("redisimpl %s: %w: %w", l.name, limitspec.ErrUnavailable, err)
		}
	}
	return fmt.Errorf("redisimpl %s: %w", l.name, err)
}

// An error a script raises through redis.call comes back from miniredis
// as "ERR Error running script (...): :LINE: <the error> stack
// traceback: ..."; Redis itself answers with the error alone.
var scriptErrorRE = regexp.MustCompile(`^ERR Error (?:compiling|running) script[^:]*: [^:]*:\d+: ([A-Z]+ .*?)(?: stack traceback:.*)?$`)

func unwrapScriptError(msg string) string {
	if m := scriptErrorRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return msg
}

// result decodes a decision's reply: an algorithm's replyLen integers,
// or a policy's (its result, the binding index, then each limit's).
func (l *Limiter) result(reply any) (limitspec.Result, error) {
	ints, ok := integers(reply)
	want := replyLen
	if l.limits > 0 {
		want = replyLen + 1 + replyLen*l.limits
	}
	if !ok || len(ints) != want {
		return limitspec.Result{}, l.badReply(reply, want)
	}
	r, ok := fromReply(ints[:replyLen])
	if !ok {
		return limitspec.Result{}, l.badReply(reply, want)
	}
	if l.limits == 0 {
		return limitspec.Result{Result: r, Limits: []limitspec.Quota{{Name: l.quotas[0].name, Window: l.quotas[0].window, Result: r}}}, nil
	}
	out := limitspec.Result{Result: r, Index: int(ints[replyLen]), Limits: make([]limitspec.Quota, l.limits)}
	for i := range l.limits {
		from := replyLen + 1 + replyLen*i
		part, ok := fromReply(ints[from : from+replyLen])
		if !ok {
			return limitspec.Result{}, l.badReply(reply, want)
		}
		out.Limits[i] = limitspec.Quota{Name: l.quotas[i].name, Window: l.quotas[i].window, Result: part}
	}
	return out, nil
}

func (l *Limiter) badReply(reply any, want int) error {
	return fmt.Errorf("redisimpl %s: unexpected reply %v: want %d integers (does the server run another version of the scripts?)", l.name, reply, want)
}

// integers is reply as integers, if it is an array of them.
func integers(reply any) ([]int64, bool) {
	arr, ok := reply.([]any)
	if !ok {
		return nil, false
	}
	out := make([]int64, len(arr))
	for i, v := range arr {
		if out[i], ok = v.(int64); !ok {
			return nil, false
		}
	}
	return out, true
}
