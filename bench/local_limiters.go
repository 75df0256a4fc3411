package main

import (
	"context"
	"sync"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/sethvargo/go-limiter/memorystore"
	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"
	"github.com/ulule/limiter/v3"
	ulmemory "github.com/ulule/limiter/v3/drivers/store/memory"
	"golang.org/x/time/rate"
)

// localLimiter is an in-process limiter. New makes a fresh one: allow
// decides a request of cost 1 for key (whether admitted), and stop
// releases it (its goroutines).
type localLimiter struct {
	Group, Name string
	Ours        bool
	New         func() (allow func(key string) bool, stop func())
	// Handle marks a limiter decided through a handle (goimpl.Bound) on
	// the states of another row's: the heap figure measures those once.
	Handle bool
}

// throttledMaxKeys is the size of throttled's LRU store: its README
// makes one of 65,536 keys; this one holds every key of the figures.
const throttledMaxKeys = 1 << 20

// localLimiters are the in-process limiters compared: limitspec's gcra
// (through the Limiter, a limit per call, and through a Bound, one limit
// bound once) with the GCRA and token-bucket peers, and limitspec's
// fixed_window with ulule/limiter, whose memory store counts fixed
// windows.
var localLimiters = []localLimiter{
	{"gcra", memoryRow, true, memoryLimiter(gcraLimit), false},
	{"gcra", boundRow, true, memoryBound(gcraLimit), true},
	{"gcra", "x/time/rate, a rate.Limiter per key in a map under a mutex", false, timeRate, false},
	{"gcra", "sethvargo/go-limiter memorystore (a token bucket)", false, sethvargo, false},
	{"gcra", "throttled v2 GCRA, memstore (an LRU)", false, throttledMem, false},
	{"fixed window", "limitspec goimpl.Limiter (fixed_window)", true, memoryLimiter(fixedWindowLimit), false},
	{"fixed window", "limitspec goimpl.Bound (fixed_window)", true, memoryBound(fixedWindowLimit), true},
	{"fixed window", "ulule/limiter v3, memory store (a fixed window)", false, ulule, false},
}

// memoryLimiter decides by lim with limitspec's goimpl.Limiter (its
// background sweeper on, as New makes it).
func memoryLimiter(lim limitspec.Limit) func() (func(string) bool, func()) {
	return func() (func(string) bool, func()) {
		l, err := goimpl.New(goimpl.Options{})
		if err != nil {
			panic(err)
		}
		ctx := context.Background()
		return func(key string) bool {
			res, err := l.Allow(ctx, key, lim)
			return err == nil && res.Allowed
		}, func() { l.Close() }
	}
}

// memoryBound decides by lim through a goimpl.Bound, lim bound once to
// limitspec's goimpl.Limiter (its background sweeper on, as New makes
// it): Allow at the limiter's clock.
func memoryBound(lim limitspec.Limit) func() (func(string) bool, func()) {
	return func() (func(string) bool, func()) {
		l, err := goimpl.New(goimpl.Options{})
		if err != nil {
			panic(err)
		}
		b, err := l.Bind(lim)
		if err != nil {
			panic(err)
		}
		ctx := context.Background()
		return func(key string) bool {
			res, err := b.Allow(ctx, key)
			return err == nil && res.Allowed
		}, func() { l.Close() }
	}
}

// timeRate keeps a rate.Limiter per key in a map under a mutex, as
// users of golang.org/x/time/rate do: Every(Per/Amount), burst Amount.
func timeRate() (func(string) bool, func()) {
	var mu sync.Mutex
	m := map[string]*rate.Limiter{}
	every := rate.Every(Per / Amount)
	return func(key string) bool {
		mu.Lock()
		l, ok := m[key]
		if !ok {
			l = rate.NewLimiter(every, Amount)
			m[key] = l
		}
		mu.Unlock()
		return l.Allow()
	}, func() {}
}

// sethvargo is go-limiter's memorystore: Amount tokens per Per.
func sethvargo() (func(string) bool, func()) {
	st, err := memorystore.New(&memorystore.Config{Tokens: Amount, Interval: Per})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	return func(key string) bool {
			_, _, _, ok, err := st.Take(ctx, key)
			return err == nil && ok
		}, func() {
			st.Close(ctx)
		}
}

// throttledMem is throttled's GCRA on its memory store.
func throttledMem() (func(string) bool, func()) {
	st, err := memstore.NewCtx(throttledMaxKeys)
	if err != nil {
		panic(err)
	}
	rl, err := throttled.NewGCRARateLimiterCtx(st, throttledQuota)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	return func(key string) bool {
		limited, _, err := rl.RateLimitCtx(ctx, key, 1)
		return err == nil && !limited
	}, func() {}
}

// ulule is ulule/limiter's memory store: Amount per window of Per.
func ulule() (func(string) bool, func()) {
	lim := limiter.New(ulmemory.NewStore(), limiter.Rate{Period: Per, Limit: Amount})
	ctx := context.Background()
	return func(key string) bool {
		c, err := lim.Get(ctx, key)
		return err == nil && !c.Reached
	}, func() {}
}
