package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// goal is a figure the project aims at: row Ours's value in column
// Column of the table titled Table, against row Than's in the same
// column (fastestPeer: the best peer of Ours's group there; "": Target
// is a value, not a ratio). It is met when the value, or its ratio to
// Than's, is at most Target in a lower-is-better column and at least
// Target in a higher-is-better one. Cause says in a line why it is not
// met, should it not be.
type goal struct {
	Name   string
	Table  string
	Column int
	Ours   string
	Than   string
	Target float64
	Cause  string
}

// fastestPeer as a goal's Than is the best peer of Ours's group.
const fastestPeer = "*"

// The rows the goals name, beside the tables' own.
const (
	boundRow          = "limitspec goimpl.Bound (gcra)"
	memoryRow         = "limitspec goimpl.Limiter (gcra)"
	gcraScriptRow     = "limitspec lua/gcra.lua"
	gcraServerRow     = "limitspec lua/gcra.lua, the server's clock (empty now_ms)"
	gcraFCallRow      = "limitspec FCALL limitspec_gcra"
	gcraFCallServer   = "limitspec FCALL limitspec_gcra, the server's clock (empty now_ms)"
	redisRateRow      = "go-redis/redis_rate v10 (Limiter.Allow's script)"
	redislimitRow     = "limitspec redislimit.Limiter (gcra)"
	unbatchedRow      = "limitspec redislimit.Limiter (gcra), NoBatching"
	redisBoundRow     = "limitspec redislimit.Bound (gcra)"
	unbatchedBoundRow = "limitspec redislimit.Bound (gcra), NoBatching"
	redisRateAllowRow = "go-redis/redis_rate v10 Limiter.Allow"
	denialsRow        = "limitspec denials.Limiter over redislimit.Limiter (gcra)"
)

// The causes of the goals not met, each a line.
const (
	causeBound   = "the key's state is still found in a map under a shard's lock and computed exactly (divisions); docs/performance.md: Where limitspec is behind"
	causeAllow   = "a call through the general API checks the request, converts the limit from the interface, finds the state by key and parameters and fills a Result with a Limits slice (its one allocation); docs/performance.md: Where limitspec is behind"
	causeGCRA    = "its six arguments and seven-integer reply cost more to call than redis_rate's four and four, it checks every argument, and on the server's clock it calls TIME, as redis_rate always does; its commands and its decision cost less than redis_rate's (the parts figure counts each); docs/performance.md: Where limitspec is behind"
	causeWindow  = "calling a script of five arguments and a seven-integer reply and running GET and PSETEX alone come to more than twice the INCR script's whole (the parts figure counts them), which keeps no time, counts denied requests and answers one integer; docs/performance.md: Where limitspec is behind"
	causeLog     = "each entry keeps its cost and a running sum, and the decision finds when entries leave the window, where the ZCARD script only counts and adds; docs/performance.md: Where limitspec is behind"
	causeTput    = "one Redis core runs the script at the Redis CPU above per decision and shares the machine's cores with the client's goroutines; docs/performance.md: Where limitspec is behind"
	causeDenials = "the cache answers from a map under a lock, shared by every goroutine of the process"
	causeRLS     = "each request is planned (its descriptors matched, a policy found by shape) and decided by one script, where the reference pipelines INCRBY and EXPIRE; run it again: the services share two cores with the load"
	causeMemory  = "the key's name names the limit's parameters (:gc:<rate>:<period_ms>), so that two limits never share a state; docs/performance.md: Where limitspec is behind"
	// The causes of the holds goals, each read off the scripts' Redis
	// commands (MONITOR) or a profile of goimpl.
	causeHoldsPolicy        = "the composed policy script runs gcra's Redis commands (GET, PSETEX) inside the policy's driver, which checks the cost and composes the reply: 8 integers, the binding index and the limit's 7, where gcra's script replies 7"
	causeHoldsDecision      = "a holding decision runs a Redis command more than the plain policy's (HGET of the holds summary, beside GET and PSETEX) and takes two keys more (the holds keys: each argument costs Redis about as much as a line of the script), with the holds script's checks of its op"
	causeHoldsPair          = "a pair is two script calls, each paying for a call (about a decision's cost), and up to ten Redis commands where gcra decided alone runs two (GET, PSETEX): the reserve HMGET, GET, ZADD, HSET and, when the keys' TTL must reach further, PEXPIRE of both holds keys; the commit HMGET, GET, PSETEX and HSET (the id's remembered reply)"
	causeHoldsLive          = "a call's commands on a key's holds (HMGET, HSET, ZADD) cost more as its hash and sorted set grow (a sorted set's insert grows with the log of its size, and a larger key fits worse in the CPU's caches)"
	causeHoldsLocalDecision = "a holding decision locks its key's holds shard, then its state shard, and counts the key's holds around gcra's decision, beside what a plain policy's decision does over gcra's (the request's checks, the policy's plan found, a Result of its limits: the row above)"
	causeHoldsLocalPair     = "a pair is two calls, each locking its key's holds shard, then its state shard, checking the request and the op, finding the policy's plan and making a Result; the reserve adds the hold to the key's list, and the commit ends it, charges gcra and remembers the id with its reply for REQUEST_MS (endedList.put)"
	causeHoldsAllocs        = "Limit and Hold return a new Result whose Limits slice is allocated at each call (LimitInto and HoldInto reuse one); past that, a key's list of holds and of remembered ends grows as pairs come (holdList.add, endedList.put, by a memory profile)"
)

// goals are the project's goals, in the order the Goals table lists
// them. A goal whose table was not measured is left out of it; one
// whose row is missing (a row not written yet) is listed as skipped.
var goals = slices.Concat([]goal{
	{"in-process, bound handle, 1 goroutine", titleInProcess, 0, boundRow, fastestPeer, 1, causeBound},
	{"in-process, bound handle, GOMAXPROCS goroutines", titleInProcess, 1, boundRow, fastestPeer, 1, causeBound},
	{"in-process, bound handle, allocations", titleInProcess, 2, boundRow, "", 0, "a decision allocates (B/op in the table)"},
	{"in-process, per-call Allow, 1 goroutine", titleInProcess, 0, memoryRow, fastestPeer, 1.5, causeAllow},
	{"in-process, per-call Allow, GOMAXPROCS goroutines", titleInProcess, 1, memoryRow, fastestPeer, 1.5, causeAllow},
}, scriptGoals(titleRedisCPU, "Redis CPU", 1), scriptGoals(titleInstructions, "instructions", 0), []goal{
	{"decisions/s through one Redis, the defaults", titleThroughput, 0, redislimitRow, redisRateAllowRow, 2, causeTput},
	{"decisions/s through one Redis, NoBatching", titleThroughput, 0, unbatchedRow, redisRateAllowRow, 1.1, causeTput},
	{"decisions/s through one Redis, a bound handle, the defaults", titleThroughput, 0, redisBoundRow, redisRateAllowRow, 2, causeTput},
	{"decisions/s through one Redis, a bound handle, NoBatching", titleThroughput, 0, unbatchedBoundRow, redisRateAllowRow, 1.1, causeTput},
	{"a hot denied key, 1 goroutine", titleDenied, 0, denialsRow, redisRateAllowRow, 0.1, causeDenials},
	{"a hot denied key, many goroutines", titleDenied, 1, denialsRow, redisRateAllowRow, 0.1, causeDenials},
	{"Redis memory per key (gcra)", titleRedisMemory, 0, gcraScriptRow, redisRateRow, 1, causeMemory},
}, rlsGoals(), holdsGoals())

// rlsGoals are the rate limit service's (issue: decisions/s at least the
// reference's, p99 no worse, for fixed windows): for a request of one
// descriptor and of two.
func rlsGoals() []goal {
	var out []goal
	for _, group := range []string{"one descriptor", "two descriptors"} {
		ours, than := "limitspec-rls, "+group, referenceRLS+", "+group
		out = append(out,
			goal{"Envoy's rate limit service, decisions/s, " + group, titleRLS, 0, ours, than, 1, causeRLS},
			goal{"Envoy's rate limit service, p99, " + group, titleRLS, 2, ours, than, 1, causeRLS})
	}
	return out
}

// scriptGoals are the goals of the scripts in the figure title (the
// Redis CPU or the instructions), named figure in the goals, read from
// its column col: gcra by EVALSHA and FCALL, on each clock, beside
// redis_rate's script, and fixed_window and sliding_log beside their
// hand-written scripts.
func scriptGoals(title, figure string, col int) []goal {
	return []goal{
		{"gcra " + figure + " by EVALSHA, the client's clock", title, col, gcraScriptRow, redisRateRow, 1, causeGCRA},
		{"gcra " + figure + " by EVALSHA, the server's clock", title, col, gcraServerRow, redisRateRow, 1, causeGCRA},
		{"gcra " + figure + " by FCALL, the client's clock", title, col, gcraFCallRow, redisRateRow, 1, causeGCRA},
		{"gcra " + figure + " by FCALL, the server's clock", title, col, gcraFCallServer, redisRateRow, 1, causeGCRA},
		{"fixed_window " + figure, title, col, "limitspec lua/fixed_window.lua", "INCR + PEXPIRE script", 2, causeWindow},
		{"sliding_log " + figure, title, col, "limitspec lua/sliding_log.lua", "ZCARD log script (ZREMRANGEBYSCORE, ZCARD, ZADD, PEXPIRE)", 2, causeLog},
	}
}

// goalsTable is the Goals table of goals checked against tables, as
// Markdown; "" when tables hold none of the goals' tables.
func goalsTable(goals []goal, tables []Table) string {
	var lines [][]string
	for _, g := range goals {
		if t, ok := tableTitled(tables, g.Table); ok {
			lines = append(lines, g.check(t))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("### Goals\n\n")
	b.WriteString("Each figure the project aims at, read from the tables above: the target (a ratio to the row named, in the same column of the same table, or a value), the values measured, their ratio, whether it is met and, if not, why. A goal whose table this run did not measure is left out; one whose row is missing is listed as skipped.\n\n")
	writeRow(&b, []string{"goal", "measured in", "target", "measured", "ratio", "met", "why not"})
	writeRow(&b, []string{"---", "---", "---", "---", "---", "---", "---"})
	for _, l := range lines {
		writeRow(&b, l)
	}
	b.WriteString("\n")
	return b.String()
}

// check is g's line of the Goals table, read from t.
func (g goal) check(t Table) []string {
	col := t.Columns[g.Column]
	where := t.Title + ": " + col.Name
	cmp := "≤"
	if col.Better == Higher {
		cmp = "≥"
	}
	target := fmt.Sprintf("%s %s", cmp, formatValue(g.Target))
	if g.Than != "" {
		target = fmt.Sprintf("%s %.2f× %s", cmp, g.Target, thanText(g.Than))
	}
	line := func(measured, ratio, met string) []string {
		return []string{g.Name, where, target, measured, ratio, met, ""}
	}
	ours, ok := rowNamed(t, g.Ours)
	if !ok || math.IsNaN(ours.Values[g.Column]) {
		return line("—", "—", fmt.Sprintf("skipped: no row %q", g.Ours))
	}
	v := ours.Values[g.Column]
	if g.Than == "" {
		out := line(formatValue(v), "—", metText(col.Better, v, g.Target))
		return withCause(out, g.Cause)
	}
	ref, refName, ok := g.reference(t, ours)
	if !ok {
		return line(formatValue(v), "—", fmt.Sprintf("skipped: no row %q", g.Than))
	}
	measured := fmt.Sprintf("%s against %s", formatValue(v), formatValue(ref))
	if g.Than == fastestPeer {
		measured += " (" + refName + ")"
	}
	if ref == 0 {
		return line(measured, "—", "skipped: the reference is 0")
	}
	return withCause(line(measured, goalRatio(v, ref, g.Target), metText(col.Better, v/ref, g.Target)), g.Cause)
}

// reference is the value g compares ours with, and its row's name.
func (g goal) reference(t Table, ours Row) (float64, string, bool) {
	if g.Than == fastestPeer {
		best, ok := t.bestPeer(ours.Group, g.Column)
		if !ok {
			return 0, "", false
		}
		for _, r := range t.Rows {
			if !r.Ours && r.Group == ours.Group && r.Values[g.Column] == best {
				return best, r.Name, true
			}
		}
	}
	r, ok := rowNamed(t, g.Than)
	if !ok || math.IsNaN(r.Values[g.Column]) {
		return 0, "", false
	}
	return r.Values[g.Column], r.Name, true
}

// withCause fills a line's last cell with cause when it is not met.
func withCause(line []string, cause string) []string {
	if line[5] == "no" {
		line[6] = cause
	}
	return line
}

// metText is "yes" when x is at most target (lower is better) or at
// least target (higher is better), else "no".
func metText(better Better, x, target float64) string {
	if (better == Lower && x <= target) || (better == Higher && x >= target) {
		return "yes"
	}
	return "no"
}

// goalRatio is formatRatio's v/ref, with as many more digits as it takes
// to tell it from target when two digits would round it onto it (1.002×
// against a target of 1, not 1.00×).
func goalRatio(v, ref, target float64) string {
	r := v / ref
	for digits := 2; digits < 6; digits++ {
		s := strconv.FormatFloat(r, 'f', digits, 64)
		if r == target || s != strconv.FormatFloat(target, 'f', digits, 64) {
			if digits == 2 {
				return formatRatio(v, ref)
			}
			return s + "×"
		}
	}
	return formatRatio(v, ref)
}

// thanText names a goal's reference row.
func thanText(than string) string {
	if than == fastestPeer {
		return "the fastest peer"
	}
	return than
}

// tableTitled is the table of tables titled title.
func tableTitled(tables []Table, title string) (Table, bool) {
	for _, t := range tables {
		if t.Title == title {
			return t, true
		}
	}
	return Table{}, false
}

// rowNamed is t's row named name, or whose name is name followed by
// ": " and more (the memory figure's rows name their key after it).
func rowNamed(t Table, name string) (Row, bool) {
	for _, r := range t.Rows {
		if r.Name == name || strings.HasPrefix(r.Name, name+": ") {
			return r, true
		}
	}
	return Row{}, false
}

// holdsGoals are the goals of the holds figure: on Redis, server CPU per
// request beside gcra decided alone (a policy of that one limit, a
// holding policy's decision with no hold live, a reserve + commit pair);
// in process, ns/op from one goroutine beside gcra decided alone and
// allocations (a holding decision, a reserve + commit pair); and, on
// both, a reserve + release pair on a key of 20,000 live holds beside
// one of 10.
func holdsGoals() []goal {
	redisRef, localRef := via(holdsRefRow, viaGCRAScript), via(holdsRefRow, viaAllow)
	most, fewest := liveHoldCounts[len(liveHoldCounts)-1], liveHoldCounts[0]
	liveGoal := fmt.Sprintf("a pair with %s live holds on its key, beside %s", groupThousands(int64(most)), groupThousands(int64(fewest)))
	localDecision, localPair := via(heldDecisionRow, viaLimiterLimit), via(reserveCommitRow, viaLimiterHold)
	return []goal{
		{"holds on Redis: a policy of one gcra limit", titleHoldsRedis, 3, via(policyRow, viaComposed), redisRef, 1.15, causeHoldsPolicy},
		{"holds on Redis: a holding decision, no hold live", titleHoldsRedis, 3, via(heldDecisionRow, viaComposedDecide), redisRef, 1.25, causeHoldsDecision},
		{"holds on Redis: reserve 1 + commit 1", titleHoldsRedis, 3, via(reserveCommitRow, viaComposedPair), redisRef, 2.5, causeHoldsPair},
		{"holds on Redis: " + liveGoal, titleHoldsRedis, 3, via(liveRow(most), viaComposedPair), via(liveRow(fewest), viaComposedPair), 3, causeHoldsLive},
		{"holds in process: a holding decision, no hold live, 1 goroutine", titleHoldsInProcess, 0, localDecision, localRef, 2, causeHoldsLocalDecision},
		{"holds in process: a holding decision, allocations", titleHoldsInProcess, 2, localDecision, "", 1, causeHoldsAllocs},
		{"holds in process: reserve 1 + commit 1, 1 goroutine", titleHoldsInProcess, 0, localPair, localRef, 4, causeHoldsLocalPair},
		{"holds in process: reserve 1 + commit 1, allocations", titleHoldsInProcess, 2, localPair, "", 2, causeHoldsAllocs},
		{"holds in process: " + liveGoal + ", 1 goroutine", titleHoldsInProcess, 0, via(liveRow(most), viaLimiterHold), via(liveRow(fewest), viaLimiterHold), 3, causeHoldsLive},
	}
}
