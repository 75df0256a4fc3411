package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
	"github.com/throttled/throttled/v2"
	goredisstore "github.com/throttled/throttled/v2/store/goredisstore.v9"
)

// throughputOptions shape the decisions/s figure's load.
type throughputOptions struct {
	Keys, Goroutines, Rounds int
	Warm, For                time.Duration
}

// goDecider decides one request of cost 1 for an id through a Go
// library's own API; it reports whether the request was admitted.
type goDecider struct {
	Name  string
	Ours  bool
	Allow func(ctx context.Context, id string) (bool, error)
}

// redisGoDecider makes a goDecider on a client.
type redisGoDecider func(ctx context.Context, rdb *redis.Client) (goDecider, error)

// redisGoDeciders are the Go limiters compared on Redis: limitspec's
// Limiter and its handle bound to the limit, with batching (the
// default) and without, and the peers.
var redisGoDeciders = []redisGoDecider{
	redislimitLimiter(""),
	redislimitBound(""),
	redislimitLimiter(", WithoutBatching", redislimit.WithoutBatching()),
	redislimitBound(", WithoutBatching", redislimit.WithoutBatching()),
	func(ctx context.Context, rdb *redis.Client) (goDecider, error) {
		rr := redis_rate.NewLimiter(rdb)
		return goDecider{"go-redis/redis_rate v10 Limiter.Allow", false, func(ctx context.Context, id string) (bool, error) {
			res, err := rr.Allow(ctx, id, redisRateLimit)
			if err != nil {
				return false, err
			}
			return res.Allowed == 1, nil
		}}, nil
	},
	func(ctx context.Context, rdb *redis.Client) (goDecider, error) {
		store, err := goredisstore.NewCtx(rdb, "throttled:")
		if err != nil {
			return goDecider{}, err
		}
		th, err := throttled.NewGCRARateLimiterCtx(store, throttledQuota)
		return goDecider{"throttled v2 GCRA, goredisstore.v9", false, func(ctx context.Context, id string) (bool, error) {
			limited, _, err := th.RateLimitCtx(ctx, id, 1)
			return !limited, err
		}}, err
	},
}

// redislimitLimiter decides by redislimit.Limiter.Allow, the limiter
// made with opts, its row named with how.
func redislimitLimiter(how string, opts ...redislimit.Option) redisGoDecider {
	return func(ctx context.Context, rdb *redis.Client) (goDecider, error) {
		lim, err := redislimit.New(ctx, rdb, opts...)
		return goDecider{"limitspec redislimit.Limiter (gcra)" + how, true, func(ctx context.Context, id string) (bool, error) {
			res, err := lim.Allow(ctx, id, gcraLimit)
			return res.Allowed, err
		}}, err
	}
}

// redislimitBound decides by redislimit.Bound.Allow, a handle bound to
// the limit of the limiter made with opts, its row named with how.
func redislimitBound(how string, opts ...redislimit.Option) redisGoDecider {
	return func(ctx context.Context, rdb *redis.Client) (goDecider, error) {
		lim, err := redislimit.New(ctx, rdb, opts...)
		if err != nil {
			return goDecider{}, err
		}
		bound, err := lim.Bind(gcraLimit)
		return goDecider{"limitspec redislimit.Bound (gcra)" + how, true, func(ctx context.Context, id string) (bool, error) {
			res, err := bound.Allow(ctx, id)
			return res.Allowed, err
		}}, err
	}
}

// throttledQuota is gcraLimit as throttled takes it: its limit is
// MaxBurst + 1.
var throttledQuota = throttled.RateQuota{MaxRate: throttled.PerMin(Amount), MaxBurst: Amount - 1}

// throughput measures decisions per second through one Redis: per
// limiter, a client of its own (the same options), an emptied server,
// every key created, then o.Goroutines goroutines deciding round-robin
// over the keys, counted for o.For after o.Warm. Each row is the median
// of o.Rounds rounds, a round measuring every limiter in turn.
func throughput(ctx context.Context, opts *redis.Options, o throughputOptions) (Table, error) {
	t := Table{
		Title: "Decisions per second through one Redis",
		Notes: []string{fmt.Sprintf("Each Go limiter through its own API, one go-redis client each with the same options (PoolSize %d, ContextTimeoutEnabled), on an emptied server: every one of %s keys created first, then %d goroutines deciding requests of cost 1 for the keys in turn, counted for %v after a warm-up of %v; every limiter in turn, %d rounds, the median of each row's. Every decision admits. "+
			"Round trips per decision: redislimit and redis_rate one (EVALSHA; redislimit's calls share pipelines, its batching, unless WithoutBatching); throttled two (TIME and GET pipelined, then EVAL of its compare-and-swap script). redislimit.Bound is the Limiter's handle bound to the limit (Limiter.Bind), which prepares its call once. The Go process and redis-server share the machine's cores.",
			opts.PoolSize, groupThousands(int64(o.Keys)), o.Goroutines, o.For, o.Warm, o.Rounds)},
		Columns: []Column{{"decisions/s", Higher}},
	}
	keys := ids(o.Keys)
	rates := make([][]float64, len(redisGoDeciders))
	names := make([]goDecider, len(redisGoDeciders))
	for range o.Rounds {
		for i, newDecider := range redisGoDeciders {
			rate, d, err := roundOf(ctx, opts, newDecider, keys, o)
			if err != nil {
				return Table{}, err
			}
			rates[i], names[i] = append(rates[i], rate), d
		}
	}
	for i, d := range names {
		t.Rows = append(t.Rows, Row{Name: d.Name, Ours: d.Ours, Values: []float64{median(rates[i])}})
	}
	return t, nil
}

// roundOf measures one round of one limiter, on a client of its own.
func roundOf(ctx context.Context, opts *redis.Options, newDecider redisGoDecider, keys []string, o throughputOptions) (float64, goDecider, error) {
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	d, err := newDecider(ctx, rdb)
	if err != nil {
		return 0, d, err
	}
	rate, err := decisionsPerSecond(ctx, rdb, d, keys, o)
	return rate, d, err
}

// decisionsPerSecond measures one limiter (see throughput).
func decisionsPerSecond(ctx context.Context, rdb *redis.Client, d goDecider, keys []string, o throughputOptions) (float64, error) {
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return 0, err
	}
	if err := parallel(ctx, d, keys, o.Goroutines, func() bool { return false }, len(keys), nil); err != nil {
		return 0, err
	}
	var stop, counting atomic.Bool
	var count atomic.Int64
	done := make(chan error, 1)
	go func() {
		done <- parallel(ctx, d, keys, o.Goroutines, stop.Load, -1, func() { addIf(&counting, &count) })
	}()
	time.Sleep(o.Warm)
	counting.Store(true)
	start := time.Now()
	time.Sleep(o.For)
	counting.Store(false)
	elapsed := time.Since(start)
	stop.Store(true)
	if err := <-done; err != nil {
		return 0, err
	}
	return float64(count.Load()) / elapsed.Seconds(), nil
}

// addIf counts one decision while counting is on.
func addIf(counting *atomic.Bool, count *atomic.Int64) {
	if counting.Load() {
		count.Add(1)
	}
}

// parallel decides from goroutines goroutines, key after key in turn,
// n decisions (or, n < 0, until stop), calling each after every admitted
// decision; a denial or an error ends it.
func parallel(ctx context.Context, d goDecider, keys []string, goroutines int, stop func() bool, n int, each func()) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var first atomic.Pointer[error]
	for range goroutines {
		wg.Go(func() {
			for !stop() && first.Load() == nil {
				i := int(next.Add(1) - 1)
				if n >= 0 && i >= n {
					return
				}
				ok, err := d.Allow(ctx, keys[i%len(keys)])
				if err == nil && !ok {
					err = fmt.Errorf("%s: a decision denied; the limit is meant to admit every one", d.Name)
				}
				if err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
				if each != nil {
					each()
				}
			}
		})
	}
	wg.Wait()
	if e := first.Load(); e != nil {
		return *e
	}
	return nil
}
