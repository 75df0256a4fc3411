package main

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/redis/go-redis/v9"
)

// The holds figure (-only holds) measures what a hold costs beside a
// plain decision, each request one limit on one key: on Redis
// (holdsRedis) and in process (holdsInProcess). Its rows, in both tables:
const (
	// holdsRefRow: gcra decided alone, by its own script or by
	// goimpl.Limiter.Allow; the reference every ratio is to.
	holdsRefRow = "gcra decided alone, the reference"
	// policyRow: a decision of a plain policy of that one gcra limit,
	// which the holding rows add their holds to.
	policyRow = "a policy of one gcra limit, a decision"
	// heldDecisionRow: a decision of the same policy made a holding one
	// (Policy.WithHolds), no hold held: it reads the key's holds.
	heldDecisionRow = "a holding policy of one gcra limit, a decision, no hold held"
	// reserveCommitRow: a reserve of 1 on that holding policy, then its
	// commit of 1 (what it spent); the pair is one request.
	reserveCommitRow = "a holding policy of one gcra limit, reserve 1 + commit 1: a pair"
	// slotRow: a slot of a holding policy of one concurrency limit of
	// Amount slots: acquire (reserve 1), then release; one request.
	slotRow = "a slot of a holding policy of one concurrency limit, acquire (reserve 1) + release: a pair"
)

// holdsDeciders are the Redis rows of the holds figure (see the row
// constants), by EVALSHA on the caller's clock: gcra's own script
// (lua/gcra.lua), the catalogue's policy script (lua/policy.lua) and its
// holds script (lua/holds.lua).
func holdsDeciders() ([]*redisDecider, error) {
	ref, err := limitspecDecider(gcraLimit, false, byEvalSHA)
	if err != nil {
		return nil, err
	}
	ref.Name, ref.Ours = holdsRefRow+" (lua/gcra.lua)", false
	out := []*redisDecider{ref}
	for _, r := range []struct {
		name  string
		p     *limitspec.Policy
		calls []holdCall
	}{
		{policyRow + " (lua/policy.lua)", gcraPolicy, policyDecision},
		{heldDecisionRow + " (lua/holds.lua, op decide)", heldGCRA, heldDecision},
		{reserveCommitRow + " (lua/holds.lua, 2 calls)", heldGCRA, reserveCommit},
		{slotRow + " (lua/holds.lua, 2 calls)", slotPolicy, acquireRelease},
	} {
		d, err := policyDecider(r.name, r.p, r.calls)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// holdsRedis measures the Redis CPU of holdsDeciders as redisCPU
// measures its scripts (cpuOf, the least of o.Rounds rounds), in rounds
// of their own: per script call and per request (a decision, or a pair
// of calls), each with its ratio to gcra decided alone.
func holdsRedis(ctx context.Context, rdb *redis.Client, o cpuOptions) (Table, error) {
	ds, err := holdsDeciders()
	if err != nil {
		return Table{}, err
	}
	procs := max(1, runtime.NumCPU()-1)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	t := Table{
		Title: titleHoldsRedis,
		Notes: []string{fmt.Sprintf("What a reservation and a slot cost Redis beside a plain decision, measured as the Redis CPU figure measures: every row on an emptied server, one request per key on %s keys (not measured), then CONFIG RESETSTAT and %s requests spread evenly over the keys from %d goroutines each sending pipelines of %d requests (the driver on GOMAXPROCS %d); every row in turn, %d rounds, the least of each row's. "+
			"Each request is one limit on one key (a policy's limit counts the identity user), by EVALSHA on the caller's clock, KEYS and ARGV as redislimit builds them. A pair sends its two calls one after the other in the request's pipeline, with a hold id of 36 bytes of its own, held for %d s; the commit charges 1 (what was reserved), the release nothing; the slots are %s. No other hold is live on the key: the holds script reads all of a key's holds (HGETALL) and a reserve, commit or release writes them all again, so a key holding more costs more. "+
			"Script µs: INFO commandstats usec_per_call (per request: times the calls). Server CPU µs: the redis-server main thread's CPU over the run divided by the calls, or by the requests. Ratios are to gcra decided alone (the first row), in each column.",
			groupThousands(int64(o.Keys)), groupThousands(int64(o.Decisions)), o.Clients, o.Depth, procs, o.Rounds, int(holdFor/time.Second), groupThousands(Amount))},
		Columns: []Column{{"script µs per call", Lower}, {"server CPU µs per call", Lower}, {"script µs per request", Lower}, {"server CPU µs per request", Lower}},
	}
	usec, cpu, err := leastCPU(ctx, rdb, ds, o)
	if err != nil {
		return Table{}, err
	}
	for i, d := range ds {
		n := float64(d.calls())
		t.Rows = append(t.Rows, Row{Group: d.Group, Name: d.Name, Ours: d.Ours, Values: []float64{usec[i], cpu[i] / n, usec[i] * n, cpu[i]}})
	}
	return t, nil
}

// holdLimiters are the in-process rows of the holds figure (see the row
// constants), by goimpl.Limiter: Allow, Limit, and two calls of Hold for
// a pair.
var holdLimiters = []localLimiter{
	{"gcra", holdsRefRow + " (goimpl.Limiter.Allow)", false, memoryLimiter(gcraLimit), false},
	{"gcra", policyRow + " (Limit)", true, memoryPolicy(gcraPolicy), false},
	{"gcra", heldDecisionRow + " (Limit)", true, memoryPolicy(heldGCRA), false},
	{"gcra", reserveCommitRow + " (Hold, Hold)", true, memoryHoldPair(heldGCRA, limitspec.Commit, 1), false},
	{"gcra", slotRow + " (Hold, Hold)", true, memoryHoldPair(slotPolicy, limitspec.Release, 0), false},
}

// holdsInProcess measures holdLimiters as inProcess measures its
// limiters (benchLocal), an op being one request: a decision, or a pair
// of Hold calls; each value with its ratio to gcra decided alone.
func holdsInProcess(keys, rounds int, benchtime string) (Table, error) {
	t := Table{
		Title: titleHoldsInProcess,
		Notes: []string{fmt.Sprintf("What a reservation and a slot cost goimpl.Limiter beside a plain decision, measured as the in-process figure measures (testing.Benchmark, benchtime %s; every row in turn, %d rounds, the median of each row's ns/op; %s keys, each decided once before the timer starts; 1 goroutine, and GOMAXPROCS (%d) goroutines): an op is one request of one limit on one key, a decision or a pair of Hold calls (as on Redis: held for %d s, the commit charging 1, the release nothing). "+
			"Each key's IDs map is made once (a caller that makes one per request allocates a map more), and so are the hold ids. goimpl keeps a limiter's holds in one map under one lock, which every Hold and every decision of a holding policy takes, whatever its key. Ratios are to gcra decided alone (the first row), in each column.",
			benchtime, rounds, groupThousands(int64(keys)), runtime.GOMAXPROCS(0), int(holdFor/time.Second))},
		Columns: localColumns,
	}
	ks := ids(keys)
	makeRequestIDs(ks)
	rows, err := benchLocal(holdLimiters, ks, rounds)
	t.Rows = rows
	return t, err
}
