package redislimit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/kit"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// catalogue is this build's Functions library.
func catalogue(t *testing.T) *kit.Library {
	t.Helper()
	lib, ok := kit.LookupLibrary(limitspec.Catalogue)
	if !ok || !strings.Contains(lib.Source, "'"+lib.Version+"'") {
		t.Fatalf("the library %s is not registered, or its source does not hold its version", limitspec.Catalogue)
	}
	return lib
}

// otherLibraries are libraries named limitspec that are not this
// build's.
func otherLibraries(t *testing.T) map[string]string {
	lib := catalogue(t)
	return map[string]string{
		"another version": strings.Replace(lib.Source, "'"+lib.Version+"'", "'0000000000000000000000000000000000000000'", 1),
		"no version function": "#!lua name=limitspec\n" +
			"redis.register_function('limitspec_gcra', function(keys, args) return {1, 5, 4, -1, 100, 0, 0} end)\n",
	}
}

// libraryCode is the code of the library limitspec on the server of
// rdb, "" without one.
func libraryCode(t *testing.T, rdb *redis.Client) string {
	t.Helper()
	libs, err := rdb.FunctionList(context.Background(), redis.FunctionListQuery{LibraryNamePattern: limitspec.Catalogue, WithCode: true}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) == 0 {
		return ""
	}
	return libs[0].Code
}

// TestOtherLibrary: a server holding another library limitspec (FUNCTION
// LOAD of a modified library.lua, or of one without a version) makes
// New with Options.Functions fail with ErrOtherLibrary, which is
// ErrMisconfigured, and leaves that library as it is; without
// Functions, New asks the server nothing.
func TestOtherLibrary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, source := range otherLibraries(t) {
		_, rdb := newClient(t)
		if err := rdb.FunctionLoad(ctx, source).Err(); err != nil {
			t.Fatalf("%s: FUNCTION LOAD: %v", name, err)
		}
		_, err := redislimit.New(ctx, rdb, redislimit.Options{Functions: true})
		if !errors.Is(err, redislimit.ErrOtherLibrary) || !errors.Is(err, limitspec.ErrMisconfigured) {
			t.Errorf("%s: New: %v; want ErrOtherLibrary and ErrMisconfigured", name, err)
		}
		if got := libraryCode(t, rdb); got != source {
			t.Errorf("%s: New replaced the library on the server", name)
		}
		if _, err := redislimit.New(ctx, rdb, redislimit.Options{}); err != nil {
			t.Errorf("%s: New without Functions: %v", name, err)
		}
	}
}

// TestLibraryCheckedAtFirstCall: a server New cannot reach is not
// refused; the first call then gets ErrUnavailable, and once the server
// is back, each call checks it until one finds this build's library:
// another version is ErrOtherLibrary, this build's decides.
func TestLibraryCheckedAtFirstCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, rdb := newClient(t)
	lib := catalogue(t)
	srv.Kill()
	down, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	lim, err := redislimit.New(down, rdb, redislimit.Options{Functions: true})
	if err != nil {
		t.Fatalf("New with the server down: %v; want no refusal", err)
	}
	if _, err := lim.Allow(down, "u", burst); !errors.Is(err, limitspec.ErrUnavailable) {
		t.Fatalf("the first call, the server down: %v; want ErrUnavailable", err)
	}
	srv.Restart()
	if err := rdb.FunctionLoad(ctx, otherLibraries(t)["another version"]).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := lim.Allow(ctx, "u", burst); !errors.Is(err, redislimit.ErrOtherLibrary) || !errors.Is(err, limitspec.ErrMisconfigured) {
		t.Fatalf("a call on another version: %v; want ErrOtherLibrary and ErrMisconfigured", err)
	}
	if err := rdb.FunctionLoadReplace(ctx, lib.Source).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := lim.Allow(ctx, "u", burst)
	if err != nil || !res.Allowed || res.Limits[0].Remaining != 4 {
		t.Fatalf("a call on this build's library: %+v, %v; want allowed, 4 remaining of 5", res, err)
	}
}

// wrapped is a client of a type the limiter does not know (an
// instrumented wrapper, say): it cannot tell which servers hold keys.
type wrapped struct{ *redis.Client }

// TestFunctionsThroughAnUnknownClient: scripts run through any
// UniversalClient, but the Functions library cannot be loaded through
// one whose servers New cannot list: New refuses it as misconfigured,
// rather than every call failing as unavailable.
func TestFunctionsThroughAnUnknownClient(t *testing.T) {
	t.Parallel()
	_, rdb := newClient(t)
	res, err := newLimiter(t, wrapped{rdb}, redislimit.Options{}).Allow(t.Context(), "u", burst)
	if err != nil || !res.Allowed {
		t.Fatalf("scripts through a wrapped client: %+v, %v; want allowed", res, err)
	}
	_, err = redislimit.New(t.Context(), wrapped{rdb}, redislimit.Options{Functions: true})
	if !errors.Is(err, limitspec.ErrMisconfigured) || errors.Is(err, limitspec.ErrUnavailable) || !strings.Contains(err.Error(), "redislimit_test.wrapped") {
		t.Errorf("New with Options.Functions through a wrapped client: %v; want ErrMisconfigured naming its type", err)
	}
}
