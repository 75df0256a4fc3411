package redisimpl

import (
	"context"
	"errors"
	"fmt"
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
	msg := lua.ErrorReply(err.Error())
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
	decision, ok := fromReply(ints[:replyLen])
	index, limits := 0, []goimpl.Result{decision}
	if l.limits > 0 {
		index, limits = int(ints[replyLen]), make([]goimpl.Result, l.limits)
		for i := range limits {
			from := replyLen + 1 + replyLen*i
			var valid bool
			limits[i], valid = fromReply(ints[from : from+replyLen])
			ok = ok && valid
		}
	}
	if !ok {
		return limitspec.Result{}, l.badReply(reply, want)
	}
	return limitspec.NewResult(l.names, l.windows, decision, index, limits), nil
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
