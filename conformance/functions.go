package conformance

import (
	"context"
	"errors"
	"time"

	"github.com/limitspec/limitspec/kit"
	"github.com/limitspec/limitspec/redislimit"
)

// UseFunctions makes the target call every script through the Redis
// Functions libraries (FCALL <library>_<name>) instead of EVALSHA, and
// appends "-functions" to its name. It loads every library linked in on
// every master that does not hold it yet, and Close deletes it from
// those again; a master holding another version of a library is an
// error, never replaced. miniredis cannot run Functions.
func (t *RedisTarget) UseFunctions() error {
	if t.mini != nil {
		return errors.New("miniredis does not run Redis Functions (FUNCTION LOAD, FCALL)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, lib := range kit.Libraries() {
		on, err := redislimit.LoadLibrary(ctx, t.rdb, lib)
		for _, c := range on {
			t.loadedOn = append(t.loadedOn, loaded{lib.Name, c})
		}
		if err != nil {
			return err
		}
	}
	t.functions = true
	t.name += "-functions"
	return nil
}

// unloadLibrary deletes the libraries from the masters they were loaded
// on.
func (t *RedisTarget) unloadLibrary() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var first error
	for _, l := range t.loadedOn {
		if err := l.on.FunctionDelete(ctx, l.lib).Err(); err != nil && first == nil {
			first = err
		}
	}
	t.loadedOn = nil
	return first
}
