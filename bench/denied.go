package main

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/denials"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// The limit of the denied figure: one request an hour, so that after
// the first every request of the hot key is denied for the whole run.
var (
	hotLimit          = limitspec.GCRA{Burst: 1, Rate: 1, Period: time.Hour}
	hotRedisRateLimit = redis_rate.Limit{Rate: 1, Burst: 1, Period: time.Hour}
)

// hotKey is the one key of the denied figure.
const hotKey = "user:hot"

// deniedDeciders are the rows of the denied figure.
var deniedDeciders = []redisGoDecider{
	redislimitDecider(redislimitRow, hotLimit, redislimit.Options{}),
	denialsDecider,
	redisRateGoDecider(hotRedisRateLimit),
}

// denialsDecider decides by hotLimit with a redislimit.Limiter behind
// the denials cache.
func denialsDecider(ctx context.Context, rdb *redis.Client) (goDecider, error) {
	remote, err := redislimit.New(ctx, rdb, redislimit.Options{})
	if err != nil {
		return goDecider{}, err
	}
	l, err := denials.New(remote, denials.Options{})
	return goDecider{denialsRow, true, func(ctx context.Context, id string) (bool, error) {
		res, err := l.Limit(ctx, limitspec.Request{Key: id, Limit: hotLimit, Cost: 1})
		return res.Allowed, err
	}}, err
}

// denied measures the denied path: per limiter, a client of its own, an
// emptied server, one admitted request of the hot key (its limit is
// then spent for an hour), then the key's requests decided again and
// again from one goroutine and from o.Goroutines, each counted for
// o.For after o.Warm: wall time per decision. Each row is the median of
// o.Rounds rounds, a round measuring every limiter in turn.
func denied(ctx context.Context, opts *redis.Options, o throughputOptions) (Table, error) {
	t := Table{
		Title: titleDenied,
		Notes: []string{fmt.Sprintf("A key over its limit (gcra: a burst of 1 and 1 per hour; redis_rate the same), decided again and again: per limiter, one go-redis client with the options of the decisions/s figure, on an emptied server, one admitted request of the key, then its requests of cost 1 from one goroutine and from %d, counted for %v after a warm-up of %v; every limiter in turn, %d rounds, the median of each row's. Every measured decision is denied. "+
			"ns per decision: the wall time over the decisions, from all the goroutines together. redislimit sends every denied request to Redis (one EVALSHA each, batched); behind denials.Limiter, the key's first denial is kept and the requests after it are answered in process until its RetryAfter; redis_rate sends each (EVALSHA; its script writes nothing when it denies).",
			o.Goroutines, o.For, o.Warm, o.Rounds)},
		Columns: []Column{{"ns per decision, 1 goroutine", Lower}, {fmt.Sprintf("ns per decision, %d goroutines", o.Goroutines), Lower}},
	}
	serial, par := make([][]float64, len(deniedDeciders)), make([][]float64, len(deniedDeciders))
	names := make([]goDecider, len(deniedDeciders))
	for range o.Rounds {
		for i, newDecider := range deniedDeciders {
			s, p, d, err := deniedRound(ctx, opts, newDecider, o)
			if err != nil {
				return Table{}, err
			}
			serial[i], par[i], names[i] = append(serial[i], s), append(par[i], p), d
		}
	}
	for i, d := range names {
		t.Rows = append(t.Rows, Row{Name: d.Name, Ours: d.Ours, Values: []float64{median(serial[i]), median(par[i])}})
	}
	return t, nil
}

// deniedRound measures one round of one limiter (see denied): ns per
// denied decision from one goroutine and from o.Goroutines.
func deniedRound(ctx context.Context, opts *redis.Options, newDecider redisGoDecider, o throughputOptions) (serial, par float64, d goDecider, err error) {
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return 0, 0, d, err
	}
	if d, err = newDecider(ctx, rdb); err != nil {
		return 0, 0, d, err
	}
	keys := []string{hotKey}
	if err := parallel(ctx, d, keys, 1, true, func() bool { return false }, 1, nil); err != nil {
		return 0, 0, d, err
	}
	s, err := decisionsPerSecond(ctx, d, keys, 1, false, nil, o)
	if err != nil {
		return 0, 0, d, err
	}
	p, err := decisionsPerSecond(ctx, d, keys, o.Goroutines, false, nil, o)
	if err != nil {
		return 0, 0, d, err
	}
	if s.PerSecond == 0 || p.PerSecond == 0 {
		return 0, 0, d, fmt.Errorf("no denied decision ended within %v: a longer -for measures one", o.For)
	}
	return 1e9 / s.PerSecond, 1e9 / p.PerSecond, d, nil
}
