package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// RedisTarget runs the generated Lua through go-redis, on miniredis in
// process, on a real Redis server or on a Redis Cluster. On a real server
// it writes only under a key prefix of its own, unique per run and per
// vector, inside the hash tag, and deletes what it wrote; it never flushes.
type RedisTarget struct {
	name    string
	rdb     redis.UniversalClient
	mini    *miniredis.Miniredis // nil on a real server
	run     string               // the run's prefix on a real server
	n       int                  // vectors begun
	prefix  string               // the current vector's prefix
	scripts map[string]*redis.Script
	// functions: scripts run as the libraries' functions (UseFunctions),
	// which it loaded on loadedOn.
	functions bool
	loadedOn  []loaded
}

// loaded is a library loaded on one server, to delete on Close.
type loaded struct {
	lib string
	on  *redis.Client
}

// NewMiniredisTarget starts an in-process miniredis.
func NewMiniredisTarget() (*RedisTarget, error) {
	m, err := miniredis.Run()
	if err != nil {
		return nil, err
	}
	return newRedisTarget("miniredis", redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true}), m), nil
}

// NewRedisTarget connects to a real Redis by URL (redis://host:port/db).
func NewRedisTarget(url string) (*RedisTarget, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis URL %q: %v", url, err)
	}
	opt.MaxRetries = 1
	opt.ContextTimeoutEnabled = true
	rdb := redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("cannot reach Redis at %s: %v", opt.Addr, err)
	}
	return newRedisTarget("redis", rdb, nil), nil
}

// NewRedisClusterTarget connects to a Redis Cluster through any of its
// nodes (host:port). Every call's keys share one hash tag, so each script
// runs on one node; a vector's keys spread over the cluster.
func NewRedisClusterTarget(addrs []string) (*RedisTarget, error) {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRetries: 1, ContextTimeoutEnabled: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("cannot reach the Redis Cluster at %v: %v", addrs, err)
	}
	return newRedisTarget("cluster", rdb, nil), nil
}

func newRedisTarget(name string, rdb redis.UniversalClient, m *miniredis.Miniredis) *RedisTarget {
	t := &RedisTarget{name: name, rdb: rdb, mini: m, scripts: map[string]*redis.Script{}}
	if m == nil {
		b := make([]byte, 6)
		rand.Read(b)
		t.run = "limitspec-verify:" + hex.EncodeToString(b) + ":"
	}
	for name, src := range scriptSources() {
		t.scripts[name] = redis.NewScript(src)
	}
	return t
}

func (t *RedisTarget) Name() string { return t.name }

// cluster reports whether the target is a Redis Cluster.
func (t *RedisTarget) cluster() bool {
	_, ok := t.rdb.(*redis.ClusterClient)
	return ok
}

func (t *RedisTarget) Begin(v *Vector) error {
	if t.cluster() {
		if err := notForCluster(v); err != nil {
			return err
		}
	}
	if t.mini != nil {
		t.mini.FlushAll()
	} else if err := t.cleanup(); err != nil {
		return err
	}
	t.n++
	if t.mini == nil {
		t.prefix = fmt.Sprintf("%s%d:", t.run, t.n)
	}
	return nil
}

func (t *RedisTarget) Decide(r Request) Outcome {
	c, refused := prepareCall(t.prefix, r, decideCall, "")
	if refused != nil {
		return *refused
	}
	res, err := t.eval(c)
	return decisionOutcome(c, res, err)
}

func (t *RedisTarget) Reset(r Request) Outcome {
	c, refused := prepareCall(t.prefix, r, resetCall, "")
	if refused != nil {
		return *refused
	}
	return resetOutcome(t.eval(c))
}

// resetOutcome is a reset script's outcome: empty when it replied with
// the number of keys deleted.
func resetOutcome(res any, err error) Outcome {
	if err != nil {
		return errorOutcome(redislimit.ErrorReply(err.Error()))
	}
	if _, ok := res.(int64); !ok {
		return failure("BADREPLY", fmt.Sprintf("reset reply %v is not an integer", res))
	}
	return Outcome{}
}

// decisionOutcome turns the reply of a decision script, or its error,
// into an Outcome.
func decisionOutcome(c scriptCall, res any, err error) Outcome {
	if err != nil {
		return errorOutcome(redislimit.ErrorReply(err.Error()))
	}
	list, ok := res.([]any)
	if !ok {
		return failure("BADREPLY", fmt.Sprintf("reply %v is not an array", res))
	}
	ints := make([]int64, len(list))
	for i, x := range list {
		n, ok := x.(int64)
		if !ok {
			return failure("BADREPLY", fmt.Sprintf("reply element %d is %T, want an integer", i, x))
		}
		ints[i] = n
	}
	return c.outcome(ints)
}

func (t *RedisTarget) View(view string, r Request) Outcome {
	c, refused := prepareCall(t.prefix, r, viewCall, view)
	if refused != nil {
		return *refused
	}
	res, err := t.eval(c)
	if err != nil {
		return errorOutcome(redislimit.ErrorReply(err.Error()))
	}
	return viewOutcome(res)
}

// viewOutcome turns a view's reply into an Outcome.
func viewOutcome(res any) Outcome {
	list, ok := res.([]any)
	if !ok {
		return failure("BADREPLY", fmt.Sprintf("reply %v is not an array", res))
	}
	var out [][]string
	for _, x := range list {
		row, ok := x.([]any)
		if !ok {
			return failure("BADREPLY", fmt.Sprintf("entry %v is not an array", x))
		}
		var fields []string
		for _, f := range row {
			fields = append(fields, fmt.Sprint(f))
		}
		out = append(out, fields)
	}
	return entriesOutcome(out)
}

// eval runs a call's script with EVALSHA, falling back to EVAL, or as
// the library's function with FCALL.
func (t *RedisTarget) eval(c scriptCall) (any, error) {
	args := make([]any, len(c.argv))
	for i, a := range c.argv {
		args[i] = a
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if t.functions {
		return t.rdb.FCall(ctx, c.function(), c.keys, args...).Result()
	}
	return t.scripts[c.function()].Run(ctx, t.rdb, c.keys, args...).Result()
}

// pattern matches every key of the current vector: the prefix sits right
// after the opening brace of the hash tag.
func (t *RedisTarget) pattern() string { return "{" + t.prefix + "*" }

// Keys lists the vector's keys with their TTLs and contents in three
// round trips whatever their number: SCAN, then PTTL and TYPE of every key
// in one pipeline, then every key's value in another.
func (t *RedisTarget) Keys() ([]KeyTTL, error) {
	ctx := context.Background()
	names, err := t.scan(ctx, t.pattern())
	if err != nil || len(names) == 0 {
		return nil, err
	}
	sort.Strings(names)
	pttls, types := make([]*redis.Cmd, len(names)), make([]*redis.StatusCmd, len(names))
	if _, err := t.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, name := range names {
			// The raw reply: go-redis's PTTL overflows time.Duration past 292 years.
			pttls[i], types[i] = p.Do(ctx, "PTTL", name), p.Type(ctx, name)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	out := make([]KeyTTL, len(names))
	for i, name := range names {
		ms, err := pttls[i].Int64()
		if err != nil {
			return nil, err
		}
		out[i] = KeyTTL{Key: name, TTL: ms, Content: types[i].Val()}
	}
	return out, t.contents(ctx, out)
}

// contents renders each key's type and value into its Content, which
// holds the type: a hash's fields sorted, a string's value, and only the
// type of anything else.
func (t *RedisTarget) contents(ctx context.Context, keys []KeyTTL) error {
	values := make([]redis.Cmder, len(keys))
	_, err := t.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			switch k.Content {
			case "hash":
				values[i] = p.HGetAll(ctx, k.Key)
			case "string":
				values[i] = p.Get(ctx, k.Key)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := range keys {
		switch v := values[i].(type) {
		case *redis.MapStringStringCmd:
			fields := make([]string, 0, 2*len(v.Val()))
			for f, x := range v.Val() {
				fields = append(fields, f, x)
			}
			sort.Strings(fields) // a stable rendering; only equality matters
			keys[i].Content = fmt.Sprint(keys[i].Content, fields)
		case *redis.StringCmd:
			keys[i].Content += " " + v.Val()
		}
	}
	return nil
}

// scan lists the keys matching pattern, on every master of a cluster.
func (t *RedisTarget) scan(ctx context.Context, pattern string) ([]string, error) {
	var mu sync.Mutex
	var names []string
	one := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, pattern, 100).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			names = append(names, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	}
	var err error
	switch c := t.rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, one)
	case *redis.Client:
		err = one(ctx, c)
	default:
		err = fmt.Errorf("unsupported client %T", c)
	}
	return names, err
}

func (t *RedisTarget) PlantWrongType(r Request, w WrongType) error {
	ctx := context.Background()
	for _, k := range wrongTypeKeys(t.prefix, r, w) {
		// A value of no type the key holds (see wrongTypeKeys).
		if err := t.rdb.Del(ctx, k).Err(); err != nil {
			return err
		}
		plant := t.rdb.HSet(ctx, k, "x", "1").Err
		if plantedType(k) == "string" {
			plant = t.rdb.Set(ctx, k, "x", 0).Err
		}
		if err := plant(); err != nil {
			return err
		}
		if err := t.rdb.PExpire(ctx, k, time.Minute).Err(); err != nil {
			return err
		}
	}
	return nil
}

// cleanup deletes the keys of the current vector.
func (t *RedisTarget) cleanup() error {
	if t.prefix == "" {
		return nil
	}
	keys, err := t.Keys()
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := t.rdb.Del(context.Background(), k.Key).Err(); err != nil {
			return err
		}
	}
	return nil
}

func (t *RedisTarget) Close() error {
	var err error
	if t.mini == nil {
		err = t.cleanup()
	}
	if uerr := t.unloadLibrary(); err == nil {
		err = uerr
	}
	if cerr := t.rdb.Close(); err == nil {
		err = cerr
	}
	if t.mini != nil {
		t.mini.Close()
	}
	return err
}
