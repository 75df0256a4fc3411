package main

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/lease"
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

// redisGoDeciders are the Go limiters compared on Redis.
var redisGoDeciders = []redisGoDecider{
	redislimitDecider(redislimitRow, gcraLimit, redislimit.Options{}),
	redislimitBoundDecider(redisBoundRow, gcraLimit, redislimit.Options{}),
	redislimitDecider(unbatchedRow, gcraLimit, redislimit.Options{NoBatching: true}),
	redislimitBoundDecider(unbatchedBoundRow, gcraLimit, redislimit.Options{NoBatching: true}),
	leaseDecider,
	redisRateGoDecider(redisRateLimit),
	throttledDecider,
}

// leaseSize is the lease's Size in the decisions/s figure: a round trip
// per ten decisions of a key.
const leaseSize = 10

// redislimitDecider decides by lim with a redislimit.Limiter made with
// opts.
func redislimitDecider(name string, lim limitspec.Limit, opts redislimit.Options) redisGoDecider {
	return func(ctx context.Context, rdb *redis.Client) (goDecider, error) {
		l, err := redislimit.New(ctx, rdb, opts)
		return goDecider{name, true, func(ctx context.Context, id string) (bool, error) {
			res, err := l.Allow(ctx, id, lim)
			return res.Allowed, err
		}}, err
	}
}

// redislimitBoundDecider decides by lim with a redislimit.Bound, the
// handle bound to lim of a redislimit.Limiter made with opts.
func redislimitBoundDecider(name string, lim limitspec.Limit, opts redislimit.Options) redisGoDecider {
	return func(ctx context.Context, rdb *redis.Client) (goDecider, error) {
		l, err := redislimit.New(ctx, rdb, opts)
		if err != nil {
			return goDecider{}, err
		}
		bound, err := l.Bind(lim)
		return goDecider{name, true, func(ctx context.Context, id string) (bool, error) {
			res, err := bound.Allow(ctx, id)
			return res.Allowed, err
		}}, err
	}
}

// leaseDecider decides by fixedWindowLimit from leases of leaseSize
// taken from a redislimit.Limiter with the defaults. A lease ends when
// its limit is whole again, if that comes before lease.DefaultFor: a
// lease of gcraLimit would end 0.6 ms after it was taken (ten
// emission intervals of 60 µs), a fixed window's lasts until the
// window ends.
func leaseDecider(ctx context.Context, rdb *redis.Client) (goDecider, error) {
	remote, err := redislimit.New(ctx, rdb, redislimit.Options{})
	if err != nil {
		return goDecider{}, err
	}
	l, err := lease.New(remote, lease.Options{Size: leaseSize})
	name := fmt.Sprintf("limitspec lease.Limiter (Size %d) over redislimit.Limiter (fixed_window)", leaseSize)
	return goDecider{name, true, func(ctx context.Context, id string) (bool, error) {
		res, err := l.Limit(ctx, limitspec.Request{Key: id, Limit: fixedWindowLimit, Cost: 1})
		return res.Allowed, err
	}}, err
}

// redisRateGoDecider decides by lim with redis_rate's Limiter.Allow.
func redisRateGoDecider(lim redis_rate.Limit) redisGoDecider {
	return func(ctx context.Context, rdb *redis.Client) (goDecider, error) {
		rr := redis_rate.NewLimiter(rdb)
		return goDecider{redisRateAllowRow, false, func(ctx context.Context, id string) (bool, error) {
			res, err := rr.Allow(ctx, id, lim)
			if err != nil {
				return false, err
			}
			return res.Allowed == 1, nil
		}}, nil
	}
}

// throttledDecider decides by throttledQuota with throttled's GCRA on
// its go-redis v9 store.
func throttledDecider(ctx context.Context, rdb *redis.Client) (goDecider, error) {
	store, err := goredisstore.NewCtx(rdb, "throttled:")
	if err != nil {
		return goDecider{}, err
	}
	th, err := throttled.NewGCRARateLimiterCtx(store, throttledQuota)
	return goDecider{"throttled v2 GCRA, goredisstore.v9", false, func(ctx context.Context, id string) (bool, error) {
		limited, _, err := th.RateLimitCtx(ctx, id, 1)
		return !limited, err
	}}, err
}

// throttledQuota is gcraLimit as throttled takes it: its limit is
// MaxBurst + 1.
var throttledQuota = throttled.RateQuota{MaxRate: throttled.PerMin(Amount), MaxBurst: Amount - 1}

// throughput measures decisions per second through one Redis: per
// limiter, a client of its own (the same options), an emptied server,
// every key created, then o.Goroutines goroutines deciding round-robin
// over the keys, counted for o.For after o.Warm, with the round trips
// the client made meanwhile. Each row is the median of o.Rounds rounds,
// a round measuring every limiter in turn.
func throughput(ctx context.Context, opts *redis.Options, o throughputOptions) (Table, error) {
	t := Table{
		Title: titleThroughput,
		Notes: []string{fmt.Sprintf("Each Go limiter through its own API, one go-redis client each with the same options (PoolSize %d, ContextTimeoutEnabled), on an emptied server: every one of %s keys created first, then %d goroutines deciding requests of cost 1 for the keys in turn, counted for %v after a warm-up of %v; every limiter in turn, %d rounds, the median of each row's. Every decision admits. "+
			"The redislimit.Bound rows decide through a handle bound to the limit once (Limiter.Bind), the Limiter rows take the limit with each call. "+
			"Round trips per decision: redislimit one EVALSHA per decision, by default the calls that arrive during a round trip sent together as the next pipeline (up to 64), so a fraction of a round trip each; with Options.NoBatching one round trip each; the lease one redislimit call (batched as by default) per %d decisions of a key, a lease, and none for the others; redis_rate one (EVALSHA); throttled two (TIME and GET pipelined, then EVAL of its compare-and-swap script). "+
			"The lease decides fixed_window, whose script costs about what gcra's does (Redis CPU figure): a lease ends after 1 s or when its limit is whole again, if sooner, which for this gcra limit is 0.6 ms after it was taken and for a fixed window the window's end. "+
			"Decisions per round trip: the decisions counted over the commands and pipelines the client sent meanwhile (a go-redis hook). The Go process and redis-server share the machine's cores.",
			opts.PoolSize, groupThousands(int64(o.Keys)), o.Goroutines, o.For, o.Warm, o.Rounds, leaseSize)},
		Columns: []Column{{"decisions/s", Higher}, {"decisions per round trip", Higher}},
	}
	keys := ids(o.Keys)
	rates := make([][]float64, len(redisGoDeciders))
	perTrip := make([][]float64, len(redisGoDeciders))
	names := make([]goDecider, len(redisGoDeciders))
	for range o.Rounds {
		for i, newDecider := range redisGoDeciders {
			m, d, err := roundOf(ctx, opts, newDecider, keys, o)
			if err != nil {
				return Table{}, err
			}
			rates[i], perTrip[i], names[i] = append(rates[i], m.PerSecond), append(perTrip[i], m.PerRoundTrip), d
		}
	}
	for i, d := range names {
		t.Rows = append(t.Rows, Row{Name: d.Name, Ours: d.Ours, Values: []float64{median(rates[i]), median(perTrip[i])}})
	}
	return t, nil
}

// roundOf measures one round of one limiter, on a client of its own:
// on an emptied server, every key created, then decisionsPerSecond.
func roundOf(ctx context.Context, opts *redis.Options, newDecider redisGoDecider, keys []string, o throughputOptions) (measured, goDecider, error) {
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	trips := &roundTrips{}
	rdb.AddHook(trips)
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return measured{}, goDecider{}, err
	}
	d, err := newDecider(ctx, rdb)
	if err != nil {
		return measured{}, d, err
	}
	if err := parallel(ctx, d, keys, o.Goroutines, true, func() bool { return false }, len(keys), nil); err != nil {
		return measured{}, d, err
	}
	m, err := decisionsPerSecond(ctx, d, keys, o.Goroutines, true, trips, o)
	return m, d, err
}

// measured is what decisionsPerSecond measures.
type measured struct {
	PerSecond, PerRoundTrip float64
}

// decisionsPerSecond decides from goroutines goroutines, keys in turn,
// for o.Warm, then counts the decisions made in o.For and the round
// trips trips (if not nil) counts meanwhile; every decision must admit
// (want true) or deny (want false).
func decisionsPerSecond(ctx context.Context, d goDecider, keys []string, goroutines int, want bool, trips *roundTrips, o throughputOptions) (measured, error) {
	var stop, counting atomic.Bool
	var count atomic.Int64
	done := make(chan error, 1)
	go func() {
		done <- parallel(ctx, d, keys, goroutines, want, stop.Load, -1, func() { addIf(&counting, &count) })
	}()
	time.Sleep(o.Warm)
	trips.setOn(true)
	counting.Store(true)
	start := time.Now()
	time.Sleep(o.For)
	counting.Store(false)
	elapsed := time.Since(start)
	trips.setOn(false)
	stop.Store(true)
	if err := <-done; err != nil {
		return measured{}, err
	}
	n := float64(count.Load())
	return measured{n / elapsed.Seconds(), n / trips.made()}, nil
}

// addIf counts one decision while counting is on.
func addIf(counting *atomic.Bool, count *atomic.Int64) {
	if counting.Load() {
		count.Add(1)
	}
}

// parallel decides from goroutines goroutines, key after key in turn,
// n decisions (or, n < 0, until stop), calling each after every
// decision; a decision that does not admit (want true) or deny (want
// false), or an error, ends it.
func parallel(ctx context.Context, d goDecider, keys []string, goroutines int, want bool, stop func() bool, n int, each func()) error {
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
				if err == nil && ok != want {
					err = fmt.Errorf("%s: a decision %s; every one is meant to be %s", d.Name, verb(ok), verb(want))
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

// verb says a decision: "admitted" or "denied".
func verb(admitted bool) string {
	if admitted {
		return "admitted"
	}
	return "denied"
}

// roundTrips is a go-redis hook that counts, while on, the round trips
// a client makes: a command sent by itself, or a pipeline.
type roundTrips struct {
	on atomic.Bool
	n  atomic.Int64
}

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.count()
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.count()
		return next(ctx, cmds)
	}
}

// setOn starts or stops counting; a nil r counts nothing.
func (r *roundTrips) setOn(on bool) {
	if r != nil {
		r.on.Store(on)
	}
}

// made is the round trips counted, at least 1; NaN for a nil r.
func (r *roundTrips) made() float64 {
	if r == nil {
		return math.NaN()
	}
	return float64(max(1, r.n.Load()))
}

// count counts a round trip while on.
func (r *roundTrips) count() {
	if r.on.Load() {
		r.n.Add(1)
	}
}
