// Command measure reports, for every generated script on a real Redis, what
// one active key costs: its memory (MEMORY USAGE) and the Redis commands
// each decision runs, at growing limits. The algorithm guide in README.md
// is its output.
//
//	go run ./cmd/measure -redis redis://127.0.0.1:6379
//
// The load: for each algorithm and limit L, 20 keys each receive L/2
// admitted requests of cost 1 (at most 100), one per ms, plus as many
// denied ones at a full key. Parameters: the first (limit, capacity,
// burst) is L, those in ms are 60000, the others (rates) are L. It writes
// only under its own random key prefix and deletes what it wrote.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/limitspec/limitspec/lua"
	"github.com/redis/go-redis/v9"
)

func main() {
	url := flag.String("redis", os.Getenv("REDIS_URL"), "URL of the Redis to measure on (default $REDIS_URL)")
	flag.Parse()
	if *url == "" {
		fmt.Fprintln(os.Stderr, "measure: -redis URL is required")
		os.Exit(2)
	}
	if err := run(*url, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
}

// Limits are the limits each algorithm is measured at.
var Limits = []int64{10, 1000, 100000}

const keysPerRun = 20

func run(url string, w io.Writer) error {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("cannot reach Redis at %s: %v", opt.Addr, err)
	}
	version, _ := serverVersion(ctx, rdb)
	fmt.Fprintf(w, "Measured on Redis %s with `go run ./cmd/measure`: %d keys per row, each given min(L/2, 100) admitted requests of cost 1 (one per ms) and as many denied ones.\n\n", version, keysPerRun)
	fmt.Fprintln(w, "| algorithm | limit L | bytes per key (MEMORY USAGE) | keys per limiter key | commands per admitted decision | commands per denied decision | round trips |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
	b := make([]byte, 6)
	rand.Read(b)
	prefix := "limitspec-measure:" + hex.EncodeToString(b) + ":"
	defer cleanup(ctx, rdb, prefix)
	for _, s := range lua.Scripts {
		for _, L := range Limits {
			row, err := measure(ctx, rdb, s, L, fmt.Sprintf("%s%s:%d:", prefix, s.Name, L))
			if err != nil {
				return fmt.Errorf("%s, L=%d: %v", s.Name, L, err)
			}
			fmt.Fprintf(w, "| %s | %d | %s | %d | %s | %s | 1 |\n", s.Name, L, row.bytes, len(s.Keys), row.admitted, row.denied)
		}
	}
	return nil
}

type row struct{ bytes, admitted, denied string }

// params scales an algorithm's parameters with L.
func params(s lua.Script, L int64) []any {
	var out []any
	for i, p := range s.Params {
		switch {
		case i == 0:
			out = append(out, L)
		case strings.HasSuffix(p, "_ms"):
			out = append(out, 60000)
		default:
			out = append(out, L)
		}
	}
	return out
}

func measure(ctx context.Context, rdb *redis.Client, s lua.Script, L int64, prefix string) (row, error) {
	script := redis.NewScript(s.Source)
	n := min(L/2, 100)
	now := int64(1700000000000)
	decide := func(key string, t, cost int64) (bool, error) {
		args := append([]any{t, cost}, params(s, L)...)
		res, err := script.Run(ctx, rdb, s.KeyNames(prefix+key), args...).Int64Slice()
		if err != nil {
			return false, err
		}
		return res[0] == 1, nil
	}
	// Admitted requests.
	before, err := commandCalls(ctx, rdb)
	if err != nil {
		return row{}, err
	}
	admitted := 0
	for k := 0; k < keysPerRun; k++ {
		for i := int64(0); i < n; i++ {
			ok, err := decide(strconv.Itoa(k), now+i, 1)
			if err != nil {
				return row{}, err
			}
			if ok {
				admitted++
			}
		}
	}
	mid, err := commandCalls(ctx, rdb)
	if err != nil {
		return row{}, err
	}
	if admitted != keysPerRun*int(n) {
		return row{}, fmt.Errorf("%d of %d requests admitted", admitted, keysPerRun*n)
	}
	// Denied requests: exhaust one key with one request of cost L, then
	// ask again.
	full := "full"
	if ok, err := decide(full, now, L); err != nil || !ok {
		return row{}, fmt.Errorf("a first request of cost L was not admitted: %v", err)
	}
	base, err := commandCalls(ctx, rdb)
	if err != nil {
		return row{}, err
	}
	for i := 0; i < keysPerRun; i++ {
		if ok, err := decide(full, now, 1); err != nil || ok {
			return row{}, fmt.Errorf("expected a denial: %v", err)
		}
	}
	after, err := commandCalls(ctx, rdb)
	if err != nil {
		return row{}, err
	}
	var total int64
	for k := 0; k < keysPerRun; k++ {
		for _, name := range s.KeyNames(prefix + strconv.Itoa(k)) {
			b, err := rdb.MemoryUsage(ctx, name).Result()
			if err != nil {
				return row{}, fmt.Errorf("MEMORY USAGE %s: %v", name, err)
			}
			total += b
		}
	}
	return row{
		bytes:    strconv.FormatInt(total/keysPerRun, 10),
		admitted: perDecision(before, mid, int64(admitted)),
		denied:   perDecision(base, after, keysPerRun),
	}, nil
}

// commandCalls reads the calls of every command from INFO commandstats.
func commandCalls(ctx context.Context, rdb *redis.Client) (map[string]int64, error) {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		n, _ := strconv.ParseInt(calls, 10, 64)
		out[strings.TrimPrefix(name, "cmdstat_")] = n
	}
	return out, nil
}

// perDecision lists the commands run between two readings, per decision,
// leaving out the script call itself and the measuring commands.
func perDecision(before, after map[string]int64, decisions int64) string {
	var parts []string
	for _, name := range []string{"hmget", "hget", "hset", "pexpire", "zadd", "zrangebyscore", "zremrangebyscore", "rpush", "lrange", "ltrim", "mget", "del"} {
		d := after[name] - before[name]
		if d == 0 {
			continue
		}
		per := float64(d) / float64(decisions)
		parts = append(parts, fmt.Sprintf("%s %s", strings.ToUpper(name), strconv.FormatFloat(per, 'f', -1, 64)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func serverVersion(ctx context.Context, rdb *redis.Client) (string, error) {
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v, nil
		}
	}
	return "?", nil
}

func cleanup(ctx context.Context, rdb *redis.Client, prefix string) {
	iter := rdb.Scan(ctx, 0, "{"+prefix+"*", 500).Iterator()
	for iter.Next(ctx) {
		rdb.Del(ctx, iter.Val())
	}
}
