package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/kit"
	_ "github.com/limitspec/limitspec/lua" // registers the catalogue's scripts
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// redisDecider decides on Redis by one script call per decision, so that
// its calls can be pipelined and its Redis-side CPU read from its
// command's commandstats.
type redisDecider struct {
	Group, Name string
	Ours        bool
	// Command is the command each decision runs, as INFO commandstats
	// names it: "evalsha" or "fcall".
	Command string
	// load makes the server know the script (SCRIPT LOAD, or FUNCTION
	// LOAD of a library).
	load func(ctx context.Context, rdb *redis.Client) error
	// queue adds to p the decision of one request of id at now (a script
	// that reads the server's clock ignores now).
	queue func(ctx context.Context, p redis.Pipeliner, id string, now time.Time) *redis.Cmd
	// admitted reads the reply of a decision.
	admitted func(reply any) (bool, error)
	// keys are the Redis keys id's state is kept in at now.
	keys func(id string, now time.Time) []string
	// Calls is the number of script calls each call of queue sends, in one
	// pipeline (a reserve and its commit: 2); 0 is 1.
	Calls int
	// IDs, when set, are the identities the decider decides, in place of
	// the figure's keys.
	IDs []string
	// prepare, when set, runs after the keys are created and before the
	// measurement (the live holds the request finds on its key), and
	// verify after it; neither is measured, and an error of either fails
	// the figure.
	prepare, verify func(ctx context.Context, rdb *redis.Client, ids []string) error
}

// calls is the number of script calls each of d's decisions sends.
func (d *redisDecider) calls() int { return max(1, d.Calls) }

// The commands the deciders run, as INFO commandstats names them.
const (
	evalSHA = "evalsha"
	fcall   = "fcall"
)

// How limitspecDecider calls a script: its functions argument.
const (
	byEvalSHA = false
	byFCall   = true
)

// scriptCall sends one call of a script: EVALSHA of a script's SHA1 or
// FCALL of a function.
type scriptCall func(ctx context.Context, p redis.Pipeliner, keys []string, argv []any) *redis.Cmd

// limitspecDecider calls lim's decision script (package lua) by EVALSHA,
// or, with functions, its function of the catalogue's Functions library
// (redislimit.LoadLibrary loads it) by FCALL. KEYS and ARGV are built as
// redislimit builds them (kit.Scripts.KeyNames, Args, kit.Decimal), with
// now_ms from the caller's clock, or, with serverClock, an empty now_ms:
// the script reads the server's TIME, as redislimit's Options.ServerClock
// has it.
func limitspecDecider(lim limitspec.Limit, serverClock, functions bool) (*redisDecider, error) {
	s, ok := kit.LookupScripts(lim.Algorithm())
	if !ok {
		return nil, fmt.Errorf("no scripts of %s", lim.Algorithm())
	}
	args, err := s.Args(lim)
	if err != nil {
		return nil, err
	}
	params := kit.Decimal(args)
	name := lim.Algorithm().Name
	d := &redisDecider{
		Group: name, Name: "limitspec lua/" + name + ".lua", Ours: true, Command: evalSHA,
		load:     loader(s.Decide.Source),
		admitted: firstIsOne,
		keys:     func(id string, _ time.Time) []string { return s.KeyNames(id, "", params) },
	}
	call := scriptCall(func(ctx context.Context, p redis.Pipeliner, keys []string, argv []any) *redis.Cmd {
		return p.EvalSha(ctx, s.Decide.SHA1, keys, argv...)
	})
	if functions {
		if call, err = d.byFunction(s); err != nil {
			return nil, err
		}
	}
	if serverClock {
		d.Name += ", the server's clock (empty now_ms)"
	}
	d.queue = func(ctx context.Context, p redis.Pipeliner, id string, now time.Time) *redis.Cmd {
		ms := strconv.FormatInt(now.UnixMilli(), 10)
		if serverClock {
			ms = ""
		}
		argv := []any{ms, "1", kit.ForceArg(false)}
		for _, in := range s.Inputs {
			argv = append(argv, input(in))
		}
		for _, v := range params {
			argv = append(argv, v)
		}
		return call(ctx, p, s.KeyNames(id, "", params), argv)
	}
	return d, nil
}

// byFunction makes d decide by FCALL of s's decision in s's Functions
// library, loaded by redislimit.LoadLibrary, and returns the call.
func (d *redisDecider) byFunction(s *kit.Scripts) (scriptCall, error) {
	lib, ok := kit.LookupLibrary(s.Library)
	if !ok {
		return nil, fmt.Errorf("no Functions library %s", s.Library)
	}
	fn := lib.Name + "_" + s.Decide.Name
	d.Name, d.Command = "limitspec FCALL "+fn, fcall
	d.load = func(ctx context.Context, rdb *redis.Client) error {
		_, err := redislimit.LoadLibrary(ctx, rdb, lib)
		return err
	}
	return func(ctx context.Context, p redis.Pipeliner, keys []string, argv []any) *redis.Cmd {
		return p.FCall(ctx, fn, keys, argv...)
	}, nil
}

// input is the value of a script's string input: meta_window's meta.
func input(name string) string {
	if name == "meta" {
		return Meta
	}
	return ""
}

// loader is a load function for a script's source.
func loader(src string) func(ctx context.Context, rdb *redis.Client) error {
	return func(ctx context.Context, rdb *redis.Client) error {
		return rdb.ScriptLoad(ctx, src).Err()
	}
}

// firstIsOne reads a reply whose first integer is 1 when admitted.
func firstIsOne(reply any) (bool, error) {
	r, ok := reply.([]any)
	if !ok || len(r) == 0 {
		return false, fmt.Errorf("unexpected reply %v", reply)
	}
	n, ok := r[0].(int64)
	if !ok {
		return false, fmt.Errorf("unexpected reply %v", reply)
	}
	return n == 1, nil
}

// redisRateLimit is gcraLimit as redis_rate takes it.
var redisRateLimit = redis_rate.Limit{Rate: Amount, Burst: Amount, Period: Per}

// redisRateDecider calls redis_rate's own Limiter.Allow, whose script
// call is queued on the pipeline through the client interface the
// Limiter accepts (queuedClient).
func redisRateDecider() *redisDecider {
	return &redisDecider{
		Group: "gcra", Name: redisRateRow, Command: evalSHA,
		load: func(ctx context.Context, rdb *redis.Client) error {
			// The first call sends the script (EVALSHA, then EVAL on
			// NOSCRIPT); its key goes, not to expire during a count.
			if _, err := redis_rate.NewLimiter(rdb).Allow(ctx, "load", redisRateLimit); err != nil {
				return err
			}
			return rdb.Del(ctx, "rate:load").Err()
		},
		queue: func(ctx context.Context, p redis.Pipeliner, id string, _ time.Time) *redis.Cmd {
			q := &queuedClient{Pipeliner: p}
			if _, err := redis_rate.NewLimiter(q).Allow(ctx, id, redisRateLimit); err != nil {
				panic(err) // the placeholder reply always parses
			}
			return q.last
		},
		admitted: firstIsOne,
		keys:     func(id string, _ time.Time) []string { return []string{"rate:" + id} },
	}
}

// queuedClient lets redis_rate's Limiter queue its script call on a
// pipeline: the call is added to the pipeline (kept in last, to read its
// real reply after Exec) and the Limiter gets a placeholder reply of an
// admission to parse.
type queuedClient struct {
	redis.Pipeliner
	last *redis.Cmd
}

// EvalSha queues the call and returns a placeholder.
func (q *queuedClient) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	q.last = q.Pipeliner.EvalSha(ctx, sha1, keys, args...)
	placeholder := redis.NewCmd(ctx)
	placeholder.SetVal([]any{int64(1), int64(0), "-1", "0"})
	return placeholder
}

// member is a unique sorted-set member, 36 characters as the UUIDs
// rolling-rate-limiter stores: a random prefix of the run and a count.
func member() string {
	return memberPrefix + fmt.Sprintf("%012x", memberCount.Add(1))
}

var (
	memberPrefix = func() string {
		b := make([]byte, 12)
		rand.Read(b)
		return hex.EncodeToString(b)[:24]
	}()
	memberCount atomic.Int64
)
