package redisimpl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/limitspec/limitspec/lua"
	"github.com/redis/go-redis/v9"
)

// ErrOtherLibrary is matched by the error of a server holding another
// version of the Functions library than this build's (lua.LibraryVersion):
// LoadLibrary never replaces it. Replace it by hand (FUNCTION LOAD
// REPLACE with lua/library.lua) once no older client uses it.
var ErrOtherLibrary = errors.New("another version of the limitspec library is loaded")

// LoadLibrary loads the Functions library (lua.LibrarySource) on every
// server of rdb that lacks it: a single Redis, or every master of a
// Cluster or shard of a Ring. It returns the clients of the servers it
// loaded it on. A server holding another version is an error matching
// ErrOtherLibrary, and is left as it is.
func LoadLibrary(ctx context.Context, rdb redis.UniversalClient) ([]*redis.Client, error) {
	var mu sync.Mutex
	var loaded []*redis.Client
	err := eachServer(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		did, err := loadOn(ctx, c)
		if did {
			mu.Lock()
			loaded = append(loaded, c)
			mu.Unlock()
		}
		return err
	})
	return loaded, err
}

// LibraryLoaded reports whether every server of rdb holds this build's
// version of the library, the error naming the first that does not.
func LibraryLoaded(ctx context.Context, rdb redis.UniversalClient) error {
	return eachServer(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		v, err := c.FCall(ctx, lua.VersionFunction, nil).Text()
		if err != nil {
			return fmt.Errorf("%s: %w", c.Options().Addr, err)
		}
		return otherVersion(c, v)
	})
}

// loadOn loads the library on c unless it holds it; did says it loaded.
// Another client loading it at the same time is no error.
func loadOn(ctx context.Context, c *redis.Client) (did bool, err error) {
	for attempt := 0; attempt < 2; attempt++ {
		v, err := c.FCall(ctx, lua.VersionFunction, nil).Text()
		switch {
		case err == nil:
			return false, otherVersion(c, v)
		case !isMissingFunction(err):
			return false, fmt.Errorf("%s: %w", c.Options().Addr, err)
		}
		err = c.FunctionLoad(ctx, lua.LibrarySource).Err()
		if err == nil {
			return true, nil
		}
		if !strings.Contains(err.Error(), "already exists") {
			return false, fmt.Errorf("loading the %s library on %s: %w", lua.LibraryName, c.Options().Addr, err)
		}
	}
	return false, nil
}

// otherVersion is the error of c holding version v of the library, nil
// when v is this build's.
func otherVersion(c *redis.Client, v string) error {
	if v == lua.LibraryVersion {
		return nil
	}
	return fmt.Errorf("%s: %w: version %s, this build's is %s; replace it (FUNCTION LOAD REPLACE with lua/library.lua) once no older client uses it",
		c.Options().Addr, ErrOtherLibrary, v, lua.LibraryVersion)
}

// eachServer runs fn on every server that holds keys: a single Redis, the
// masters of a Cluster, the shards of a Ring.
func eachServer(ctx context.Context, rdb redis.UniversalClient, fn func(context.Context, *redis.Client) error) error {
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, fn)
	case *redis.Ring:
		return c.ForEachShard(ctx, fn)
	case *redis.Client:
		return fn(ctx, c)
	}
	return fmt.Errorf("the Functions library on a %T is not supported", rdb)
}
