package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/limitspec/limitspec/lua"
	"github.com/redis/go-redis/v9"
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
	loaded, err := loadLibrary(ctx, t.rdb)
	t.loadedOn = loaded
	if err != nil {
		return err
	}
	t.functions = true
	t.name += "-functions"
	return nil
}

// loadLibrary loads the library on every master of rdb that lacks it and
// returns the clients it loaded it on.
func loadLibrary(ctx context.Context, rdb redis.UniversalClient) ([]*redis.Client, error) {
	var mu sync.Mutex
	var loaded []*redis.Client
	one := func(ctx context.Context, c *redis.Client) error {
		v, err := c.FCall(ctx, lua.VersionFunction, nil).Text()
		switch {
		case err == nil && v == lua.LibraryVersion:
			return nil
		case err == nil:
			return fmt.Errorf("%s holds the %s library version %s, not this build's %s: replace it (FUNCTION LOAD REPLACE with lua/library.lua) or delete it first",
				c.Options().Addr, lua.LibraryName, v, lua.LibraryVersion)
		case !strings.Contains(strings.ToLower(err.Error()), "function not found"):
			return fmt.Errorf("%s: %v", c.Options().Addr, err)
		}
		if err := c.FunctionLoad(ctx, lua.LibrarySource).Err(); err != nil {
			return fmt.Errorf("loading the %s library on %s: %v", lua.LibraryName, c.Options().Addr, err)
		}
		mu.Lock()
		loaded = append(loaded, c)
		mu.Unlock()
		return nil
	}
	var err error
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, one)
	case *redis.Client:
		err = one(ctx, c)
	default:
		err = fmt.Errorf("functions on a %T are not supported", rdb)
	}
	return loaded, err
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
