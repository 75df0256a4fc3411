package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/redis/go-redis/v9"
)

// The holds figure (-only holds) measures what a hold costs beside a
// plain decision, each request one limit on one key: on Redis
// (holdsRedis) and in process (holdsInProcess). Its rows, in both tables,
// each named by its constant, ": " and how it is called (the goals find
// them so):
const (
	// holdsRefRow: gcra decided alone, by its own script or by
	// goimpl.Limiter.Allow; the reference every ratio of groupGCRA is to.
	holdsRefRow = "gcra decided alone, the reference"
	// policyRow: a decision of a plain policy of that one gcra limit,
	// which the holding rows add their holds to.
	policyRow = "a policy of one gcra limit, a decision"
	// heldDecisionRow: a decision of the same policy made a holding one
	// (Policy.WithHolds), no hold live: it reads the key's holds.
	heldDecisionRow = "a holding policy of one gcra limit, a decision, no hold live"
	// reserveCommitRow: a reserve of 1 on that holding policy, then its
	// commit of 1 (what it spent); the pair is one request.
	reserveCommitRow = "a holding policy of one gcra limit, reserve 1 + commit 1: a pair"
	// slotRow: a slot of a holding policy of one concurrency limit of
	// Amount slots: acquire (reserve 1), then release; one request.
	slotRow = "a slot of a holding policy of one concurrency limit, acquire (reserve 1) + release: a pair"
	// The rows of live holds (liveRow) follow, in groupLive.
)

// How the rows are called, after their names.
const (
	viaGCRAScript     = "lua/gcra.lua"
	viaComposed       = "its composed script"
	viaComposedDecide = "its composed script, op decide"
	viaComposedPair   = "its composed script, 2 calls"
	viaAllow          = "goimpl.Limiter.Allow"
	viaLimiterLimit   = "goimpl.Limiter.Limit"
	viaBoundLimit     = "goimpl.BoundPolicy.Limit, bound once"
	viaLimiterHold    = "goimpl.Limiter.Hold, Hold"
	viaBoundHold      = "goimpl.BoundPolicy.Hold, Hold, bound once"
)

// groupGCRA is the group of the rows compared with gcra decided alone.
const groupGCRA = "with gcra alone"

// via names row called how.
func via(row, how string) string { return row + ": " + how }

// holdsDeciders are the Redis rows of the holds figure (see the row
// constants), by EVALSHA on the caller's clock: gcra's own script
// (lua/gcra.lua), then each policy's composed script as package
// redislimit calls it (composedDecider), and the rows of live holds on
// liveIDs (liveDeciders).
func holdsDeciders(liveIDs []string) ([]*redisDecider, error) {
	ref, err := limitspecDecider(gcraLimit, false, byEvalSHA)
	if err != nil {
		return nil, err
	}
	ref.Group, ref.Name, ref.Ours = groupGCRA, via(holdsRefRow, viaGCRAScript), false
	out := []*redisDecider{ref}
	for _, r := range []struct {
		name  string
		p     *limitspec.Policy
		calls []holdCall
	}{
		{via(policyRow, viaComposed), gcraPolicy, policyDecision},
		{via(heldDecisionRow, viaComposedDecide), heldGCRA, heldDecision},
		{via(reserveCommitRow, viaComposedPair), heldGCRA, reserveCommit},
		{via(slotRow, viaComposedPair), slotPolicy, acquireRelease},
	} {
		d, err := composedDecider(r.name, r.p, r.calls)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		out = append(out, d)
	}
	live, err := liveDeciders(liveIDs)
	if err != nil {
		return nil, err
	}
	return append(out, live...), nil
}

// holdsRedis measures the Redis CPU of holdsDeciders as redisCPU
// measures its scripts (cpuOf, the least of o.Rounds rounds), in rounds
// of their own, the rows of live holds on holdKeys keys: per script call
// and per request (a decision, or a pair of calls), each with its ratio
// to its group's reference (gcra decided alone, or 10 live holds).
func holdsRedis(ctx context.Context, rdb *redis.Client, o cpuOptions, holdKeys int) (Table, error) {
	ds, err := holdsDeciders(liveKeys(holdKeys))
	if err != nil {
		return Table{}, err
	}
	procs := max(1, runtime.NumCPU()-1)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	t := Table{
		Title:   titleHoldsRedis,
		Notes:   holdsRedisNotes(o, procs, holdKeys),
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

// holdsRedisNotes say how holdsRedis measures: its load and calls, the
// holds keys and columns, and the rows of live holds.
func holdsRedisNotes(o cpuOptions, procs, holdKeys int) []string {
	return []string{holdsRedisHow(o, procs), holdsKeysNote, holdsRedisLive(o, holdKeys)}
}

// holdsRedisHow says how holdsRedis loads Redis and calls the scripts.
func holdsRedisHow(o cpuOptions, procs int) string {
	return fmt.Sprintf("What a reservation and a slot cost Redis beside a plain decision, measured as the Redis CPU figure measures: every row on an emptied server, one request per key on %s keys (not measured), then CONFIG RESETSTAT and %s requests spread evenly over the keys from %d goroutines each sending pipelines of %d requests (the driver on GOMAXPROCS %d); every row in turn, %d rounds, the least of each row's. "+
		"Each request is one limit on one key (a policy's limit counts the identity user), sent as package redislimit sends a policy it plans: by EVALSHA of the script composed for the policy (limitcall.Composed: the pieces of lua/policy.lua, or of lua/holds.lua for a holding policy, that its limit needs, the limit's parameters written in), KEYS the limit's state key then, for a holding policy, its holds keys {tag}:<limit>:hh and {tag}:<limit>:hz, ARGV now_ms (the caller's clock), cost and force, or for a holding policy now_ms, cost, op, id and hold_ms. "+
		"A request is admitted when every limit's allowed is 1 (a policy replies the binding limit's index, then each limit's 7 integers); every request must be, and a call refused (an error reply, as NOHOLD) fails the figure. A pair sends its two calls one after the other in the request's pipeline, with a hold id of 36 bytes of its own, held for %d s; the commit charges 1 (what was reserved), the release nothing; the slots are %s.",
		groupThousands(int64(o.Keys)), groupThousands(int64(o.Decisions)), o.Clients, o.Depth, procs, o.Rounds, int(holdFor/time.Second), groupThousands(Amount))
}

// holdsKeysNote says how Redis keeps holds, and what the columns are.
var holdsKeysNote = "A limit's holds are a hash ({tag}:<limit>:hh: a summary of the live holds, their sum and first and last end, and each id's hold) and a sorted set of the ids by their ends ({tag}:<limit>:hz). A call reads the summary and its id's hold (one HGET or HMGET), drops the holds that have ended, found by the sorted set (each once, by the first call at or after its end), and writes what it changed: its work does not grow with the holds live on its key, which the rows of live holds measure. A commit or release remembers the id it ended, with its reply, for 60 s (REQUEST_MS), so that the call sent again gets its reply again. " +
	"Script µs: INFO commandstats usec_per_call (per request: times the calls). Server CPU µs: the redis-server main thread's CPU over the run divided by the calls, or by the requests. Ratios are to the reference of the row's group, in each column: gcra decided alone (the first row), or " + liveReference() + "."

// holdsRedisLive is the note on the Redis rows of live holds.
func holdsRedisLive(o cpuOptions, holdKeys int) string {
	perKey := groupThousands(int64(o.Decisions / holdKeys))
	return liveNote(holdKeys, o.Keys, fmt.Sprintf("made before each round's measurement by reserves of 1 for 1 h, pipelined %s at a time, the keys at once (not measured), and checked before and after the measurement", groupThousands(liveBatch)),
		fmt.Sprintf("making the holds stays quick while the %s requests still spread over several keys; each key so takes %s pairs a round and keeps the ids they released (above) through the round, as in every row of live holds: a key of %s live holds keeps up to %s ended ids too",
			groupThousands(int64(o.Decisions)), perKey, groupThousands(int64(liveHoldCounts[0])), perKey))
}

// liveNote is the note on the rows of live holds on holdKeys keys
// (the other rows' on otherKeys): how the holds are made (made), and why
// that many keys (why).
func liveNote(holdKeys, otherKeys int, made, why string) string {
	most := int64(liveHoldCounts[len(liveHoldCounts)-1])
	return fmt.Sprintf("The rows of live holds (compared %s): a reserve 1 + release pair as the slot row's, on one of %d keys each holding n live holds (n = %s) of its own ids (36 bytes), %s: a decision of cost 1 must find %s − n − 1 slots left. "+
		"%d keys rather than the other rows' %s, for %s holds on each key take %s reserves, where %s keys would take %s: %s. Their ratios are to the row of %s live holds, in each column, and answer the goal of a pair with %s live holds costing at most 3× what it costs with %s.",
		groupLive, holdKeys, liveCountsText(), made, groupThousands(Amount),
		holdKeys, groupThousands(int64(otherKeys)), groupThousands(most), groupThousands(int64(holdKeys)*most), groupThousands(int64(otherKeys)), groupThousands(int64(otherKeys)*most), why,
		groupThousands(int64(liveHoldCounts[0])), groupThousands(most), groupThousands(int64(liveHoldCounts[0])))
}

// liveReference names the reference of the rows of live holds.
func liveReference() string {
	return fmt.Sprintf("a pair with %s live holds on its key (the rows of live holds)", groupThousands(int64(liveHoldCounts[0])))
}

// liveCountsText is liveHoldCounts in words: "10, 1,000 or 20,000".
func liveCountsText() string {
	var s []string
	for _, n := range liveHoldCounts {
		s = append(s, groupThousands(int64(n)))
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// holdLimiters are the in-process rows of the holds figure (see the row
// constants), by goimpl.Limiter: Allow, Limit, and two calls of Hold for
// a pair, and for the holding policy of one gcra limit through a
// goimpl.BoundPolicy too; then the rows of live holds on liveIDs
// (liveHoldLimiters).
func holdLimiters(liveIDs []string) []localLimiter {
	return append([]localLimiter{
		{groupGCRA, via(holdsRefRow, viaAllow), false, memoryLimiter(gcraLimit), false},
		{groupGCRA, via(policyRow, viaLimiterLimit), true, memoryPolicy(gcraPolicy, byLimiter), false},
		{groupGCRA, via(heldDecisionRow, viaLimiterLimit), true, memoryPolicy(heldGCRA, byLimiter), false},
		{groupGCRA, via(heldDecisionRow, viaBoundLimit), true, memoryPolicy(heldGCRA, byBound), false},
		{groupGCRA, via(reserveCommitRow, viaLimiterHold), true, memoryHoldPair(heldGCRA, byLimiter, limitspec.Commit, 1), false},
		{groupGCRA, via(reserveCommitRow, viaBoundHold), true, memoryHoldPair(heldGCRA, byBound, limitspec.Commit, 1), false},
		{groupGCRA, via(slotRow, viaLimiterHold), true, memoryHoldPair(slotPolicy, byLimiter, limitspec.Release, 0), false},
	}, liveHoldLimiters(liveIDs)...)
}

// holdsInProcess measures holdLimiters as inProcess measures its
// limiters (benchLocal), an op being one request: a decision, or a pair
// of Hold calls; the rows of live holds on holdKeys keys of their own.
// Each value has its ratio to its group's reference (gcra decided alone,
// or 10 live holds).
func holdsInProcess(keys, rounds int, benchtime string, holdKeys int) (Table, error) {
	t := Table{Title: titleHoldsInProcess, Notes: holdsLocalNotes(keys, rounds, benchtime, holdKeys), Columns: localColumns}
	ks, live := ids(keys), liveKeys(holdKeys)
	makeRequestIDs(append(ks[:len(ks):len(ks)], live...))
	ls := holdLimiters(live)
	n := len(ls) - len(liveHoldCounts)
	rows, err := benchLocal(ls[:n], ks, rounds)
	if err != nil {
		return t, err
	}
	liveRows, err := benchLocal(ls[n:], live, rounds)
	t.Rows = append(rows, liveRows...)
	return t, err
}

// holdsLocalNotes say how holdsInProcess measures: its load and calls,
// how goimpl keeps holds, and the rows of live holds.
func holdsLocalNotes(keys, rounds int, benchtime string, holdKeys int) []string {
	how := fmt.Sprintf("What a reservation and a slot cost goimpl beside a plain decision, measured as the in-process figure measures (testing.Benchmark, benchtime %s; every row in turn, %d rounds, the median of each row's ns/op; %s keys, each decided once before the timer starts; 1 goroutine, and GOMAXPROCS (%d) goroutines): an op is one request of one limit on one key, a decision or a pair of Hold calls (as on Redis: held for %d s, the commit charging 1, the release nothing). Every decision and every reserve must admit, and a call refused (an error) fails the figure. "+
		"Each key's IDs map is made once (a caller that makes one per request allocates a map more), and so are the hold ids. Limit and Hold return a new Result, whose Limits slice is allocated at each call; the BoundPolicy rows call a handle the policy was bound to once (Limiter.BindPolicy), which skips finding the policy's plan (its LimitInto and HoldInto, which reuse a Result, are not measured: the figure's limiters are shared by goroutines).",
		benchtime, rounds, groupThousands(int64(keys)), runtime.GOMAXPROCS(0), int(holdFor/time.Second))
	kept := "goimpl keeps each key's holds apart, in shards each under its own lock (a call locks only its keys' shards, no lock is the limiter's): a key's live holds in order of their ends, found by id through a map once they are more than a few, and the ids a commit or release ended, remembered for 60 s (REQUEST_MS); the holds that end are dropped by the first call on the key at or after their end. Ratios are to the reference of the row's group, in each column: gcra decided alone (the first row), or " + liveReference() + "."
	live := liveNote(holdKeys, keys, "made by Limiter.Hold (reserves of 1 for 1 h) on a new Limiter before each benchmark's timer starts, and checked then and when it stops",
		"the holds are made anew for each run of a benchmark (testing.Benchmark runs its function several times, each on a new Limiter), while the pairs still spread over several keys, which seldom share a shard's lock; each key keeps the ids of the pairs released on it (at most the 4,096 hold ids the pairs take in turn), as in every row of live holds")
	return []string{how, kept, live}
}
