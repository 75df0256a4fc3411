package conformance

import (
	"context"
	"errors"
	"time"

	"github.com/limitspec/limitspec/lua"
	"github.com/limitspec/limitspec/redisimpl"
)

// UseFunctions makes the target call every script through the Redis
// Functions library (FCALL limitspec_<name>) instead of EVALSHA, and
// appends "-functions" to its name. It loads lua.LibrarySource on every
// master that does not hold it yet, and Close deletes it from those
// again; a master holding another version of the library is an error,
// never replaced. miniredis cannot run Functions.
func (t *RedisTarget) UseFunctions() error {
	if t.mini != nil {
		return errors.New("miniredis does not run Redis Functions (FUNCTION LOAD, FCALL)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	loaded, err := redisimpl.LoadLibrary(ctx, t.rdb)
	t.loadedOn = loaded
	if err != nil {
		return err
	}
	t.functions = true
	t.name += "-functions"
	return nil
}

// unloadLibrary deletes the library from the masters it was loaded on.
func (t *RedisTarget) unloadLibrary() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var first error
	for _, c := range t.loadedOn {
		if err := c.FunctionDelete(ctx, lua.LibraryName).Err(); err != nil && first == nil {
			first = err
		}
	}
	t.loadedOn = nil
	return first
}
