package conformance

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/exact"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/kit"
	"github.com/limitspec/limitspec/policyfile"
	"github.com/limitspec/limitspec/redislimit"
)

const instructionsFile = "testdata/instructions.txt"

// instructionTolerance is how far a count may pass its budget before
// TestInstructionBudgets fails: a Redis server's hash seeds change from
// one start to the next, and with them a few of the instructions of its
// lookups (runs of one build differ by well under 1%).
const instructionTolerance = 0.02

// The load of one subject: instrKeys keys decided once each to create
// them, then instrCalls decisions over them, counted.
const (
	instrKeys  = 200
	instrCalls = 2000
	instrDepth = 16
)

// instrSubject is one script call counted: an algorithm's decision
// admitting a request of cost 1 on an existing key, with the caller's
// clock or (serverClock) the server's, by EVALSHA or (functions) by
// FCALL of the Functions library; with id, a request with an id of its
// own (its request key read, then written).
type instrSubject struct {
	limit limitspec.Limit
	// policy, when not nil, is decided in limit's place, for identity
	// values of its own at each call: by EVALSHA of the script redislimit
	// composes for it, or by FCALL of the library's policy (or holds)
	// function. With pair, a holding policy's subject is a reserve and its
	// commit, of costs (each limit's).
	policy                     *limitspec.Policy
	pair                       bool
	costs                      map[string]int64
	serverClock, functions, id bool
	// source is the script run by EVALSHA in place of the algorithm's
	// (or the policy's), when it is not empty (TestScriptsStayWhole).
	source string
}

// name is the subject's line name in instructionsFile.
func (s instrSubject) name() string {
	if s.policy != nil {
		return "policy " + s.policy.Name() + exact.Pick(s.pair, " reserve+commit", " admitted") + exact.Pick(s.functions, " fcall", "")
	}
	n := s.limit.Algorithm().String() + " admitted"
	if s.id {
		n += " id"
	}
	if s.functions {
		n += " fcall"
	}
	if s.serverClock {
		n += " server-clock"
	}
	return n
}

// instrSubjects are the subjects: every algorithm of the catalogue with
// limits so large that every counted decision admits, by EVALSHA and by
// FCALL, gcra on the server's clock too; and the policy ip_user by both.
func instrSubjects() []instrSubject {
	const n, per = 1_000_000, time.Minute
	limits := []limitspec.Limit{
		limitspec.GCRA{Burst: n, Rate: n, Period: per},
		limitspec.FixedWindow{Limit: n, Window: per},
		limitspec.SlidingLog{Limit: 100_000, Window: per},
		limitspec.SlidingWindow{Limit: n, Window: per},
		limitspec.TokenBucket{Capacity: n, RefillTokens: n, Refill: per},
		limitspec.LeakyBucket{Capacity: n, Rate: n, Period: per},
		limitspec.BucketWindow{Limit: n, Window: per, Bucket: time.Second},
		limitspec.MetaWindow{Limit: 100_000, Window: per},
		// concurrency is refused alone: its holding policies are below
	}
	var out []instrSubject
	for _, l := range limits {
		out = append(out, instrSubject{limit: l}, instrSubject{limit: l, functions: true})
	}
	out = append(out, instrSubject{limit: limits[0], serverClock: true}, instrSubject{limit: limits[0], serverClock: true, functions: true})
	out = append(out, instrSubject{limit: limits[0], id: true}, instrSubject{limit: limits[0], id: true, functions: true},
		instrSubject{limit: limits[1], id: true})
	// a policy of six fixed windows, two identities: every call admits
	// (each pair of keys is decided every 200 ms, 11 times in all)
	ipUser, err := limitspec.IPUserPolicy()
	if err != nil {
		panic(err)
	}
	out = append(out, instrSubject{policy: ipUser}, instrSubject{policy: ipUser, functions: true})
	// a policy of gcra alone, and as a holding policy: its decision
	// counting holds (none held) and a reserve and its commit, the price
	// of a policy and of holds beside gcra's alone
	one := mustPolicy("one_gcra", limitspec.PolicyLimit{Name: "rate", Limit: limits[0], Identity: "user"})
	held := mustPolicy("held_gcra", limitspec.PolicyLimit{Name: "rate", Limit: limits[0], Identity: "user"}).WithHolds()
	out = append(out, instrSubject{policy: one}, instrSubject{policy: one, functions: true},
		instrSubject{policy: held}, instrSubject{policy: held, functions: true},
		instrSubject{policy: held, pair: true}, instrSubject{policy: held, pair: true, functions: true})
	// an LLM gateway: 1 slot, 1 request and 400 tokens reserved, 1, 1
	// and 150 committed, in one policy of three units
	gateway := mustPolicy("llm_gateway",
		limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: n}, Identity: "key", Unit: "slots"},
		limitspec.PolicyLimit{Name: "requests", Limit: limitspec.FixedWindow{Limit: n, Window: per}, Identity: "key"},
		limitspec.PolicyLimit{Name: "tokens", Limit: limitspec.TokenBucket{Capacity: n, RefillTokens: n, Refill: per}, Identity: "key", Unit: "tokens"},
	).WithHolds()
	return append(out, instrSubject{policy: gateway, pair: true, costs: map[string]int64{"tokens": 400}})
}

// mustPolicy is limitspec.NewPolicy's policy, which must be made.
func mustPolicy(name string, limits ...limitspec.PolicyLimit) *limitspec.Policy {
	p, err := limitspec.NewPolicy(name, limits...)
	if err != nil {
		panic(err)
	}
	return p
}

// TestInstructionSubjectsCoverCatalogue: every algorithm of the catalogue
// has an instruction budget's subject, so that a new one cannot go
// without: alone, or, for an in-flight limit (refused alone), in a
// holding policy.
func TestInstructionSubjectsCoverCatalogue(t *testing.T) {
	covered := map[limitspec.Algorithm]bool{}
	for _, s := range instrSubjects() {
		switch {
		case s.limit != nil:
			covered[s.limit.Algorithm()] = true
		case s.policy != nil && s.policy.Holds():
			for _, pl := range s.policy.Limits() {
				if limitspec.InFlight(pl.Limit) {
					covered[pl.Limit.Algorithm()] = true
				}
			}
		}
	}
	catalogue := 0
	for _, a := range policyfile.Algorithms() {
		if a.Library != limitspec.Catalogue {
			continue
		}
		catalogue++
		if !covered[a] {
			t.Errorf("%s has no instruction budget (instrSubjects)", a)
		}
	}
	if catalogue != len(covered) {
		t.Errorf("%d catalogue algorithms, %d with budgets", catalogue, len(covered))
	}
}

// TestInstructionBudgets holds the Redis server's work per decision to
// testdata/instructions.txt: every algorithm's script, admitting a
// request on an existing key, and the policy script deciding ip_user's
// six limits, are run by a redis-server under valgrind's
// callgrind, which counts the instructions the server runs (reading,
// parsing and answering the call included; its timer's serverCron left
// out), the same on a busy machine as on a quiet one. A change that
// makes a decision dearer by more than instructionTolerance fails here until the budget is raised on purpose
// (go test ./conformance -run TestInstructionBudgets
// -update-budgets, and the diff reviewed); one that makes it cheaper by
// as much is logged, for the budget to be lowered. The budgets hold for
// the redis-server they were recorded with (its version heads the file):
// another version's server skips the test, saying so. It takes about a
// minute and a half, and is left out with -short.
func TestInstructionBudgets(t *testing.T) {
	if testing.Short() {
		t.Skip("left to make test-all: it runs a redis-server under valgrind for about a minute")
	}
	for _, tool := range []string{"valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found: make test-all installs valgrind (scripts/install-redis)", tool)
		}
	}
	out := filepath.Join(t.TempDir(), "callgrind.out")
	// serverCron runs by the clock, ten times a second, so that it would add
	// instructions by the run's duration, more on a busy machine: it is left
	// out of the count.
	srv := redistest.StartUnder(t, []string{"valgrind", "--tool=callgrind", "--toggle-collect=serverCron", "--collect-atstart=yes",
		"--callgrind-out-file=" + out})
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ReadTimeout: time.Minute})
	defer rdb.Close()
	ctx := t.Context()
	version := serverVersion(t, rdb)
	measured := map[string]int64{}
	for _, s := range instrSubjects() {
		n, err := countInstructions(ctx, rdb, srv.PID(), out, s)
		if err != nil {
			t.Fatalf("%s: %v", s.name(), err)
		}
		measured[s.name()] = n
	}
	if *updateBudgets {
		writeInstructionBudgets(t, version, measured)
		return
	}
	checkInstructionBudgets(t, version, measured)
}

// checkInstructionBudgets compares what was measured on a redis-server of
// version with the budgets.
func checkInstructionBudgets(t *testing.T, version string, measured map[string]int64) {
	budgetVersion, budgets := readInstructionBudgets(t)
	if version != budgetVersion {
		t.Skipf("the budgets were counted on redis-server %s, this one is %s: its instructions differ", budgetVersion, version)
	}
	for name, got := range measured {
		want, ok := budgets[name]
		switch {
		case !ok:
			t.Errorf("%s: no budget in %s (measured %d instructions): record it with -update-budgets", name, instructionsFile, got)
		case float64(got) > float64(want)*(1+instructionTolerance):
			t.Errorf("%s: %d instructions per decision; the budget is %d (+%.0f%%)", name, got, want, 100*instructionTolerance)
		case float64(got) < float64(want)*(1-instructionTolerance):
			t.Logf("%s: %d instructions per decision, cheaper than its budget of %d: lower it with -update-budgets", name, got, want)
		default:
			t.Logf("%s: %d instructions per decision, budget %d", name, got, want)
		}
	}
	for name := range budgets {
		if _, ok := measured[name]; !ok {
			t.Errorf("%s: a budget for nothing measured", name)
		}
	}
}

// countInstructions counts the instructions the server of pid, whose
// callgrind writes out, runs per decision of s: on an emptied server
// with its scripts flushed (a fresh Lua state, so that the garbage
// collector's work falls the same way at each run), instrKeys decisions
// to create the keys, the counters zeroed, then instrCalls decisions
// at times one ms apart, counted.
func countInstructions(ctx context.Context, rdb *redis.Client, pid int, out string, s instrSubject) (int64, error) {
	call, err := s.caller(ctx, rdb)
	if err != nil {
		return 0, err
	}
	if err := pipelined(ctx, rdb, 0, instrKeys, call); err != nil {
		return 0, err
	}
	if err := exec.Command("callgrind_control", "-z", strconv.Itoa(pid)).Run(); err != nil {
		return 0, fmt.Errorf("callgrind_control -z: %w", err)
	}
	if err := pipelined(ctx, rdb, instrKeys, instrKeys+instrCalls, call); err != nil {
		return 0, err
	}
	total, err := dumpInstructions(pid, out)
	return total / instrCalls, err
}

// caller gives the server a fresh Lua state with s's script (see
// freshScript) and returns what queues s's decision number i.
func (s instrSubject) caller(ctx context.Context, rdb *redis.Client) (func(redis.Pipeliner, int), error) {
	if s.source != "" && s.functions {
		return nil, fmt.Errorf("a script of its own runs by EVALSHA: FCALL would run the library's")
	}
	if s.policy != nil {
		return s.policyCaller(ctx, rdb)
	}
	sc, ok := kit.LookupScripts(s.limit.Algorithm())
	if !ok {
		return nil, fmt.Errorf("no scripts")
	}
	args, err := sc.Args(s.limit)
	if err != nil {
		return nil, err
	}
	params := kit.Decimal(args)
	if s.source != "" {
		other := *sc
		other.Decide = kit.Script{Name: "other", Source: s.source}
		sc = &other
	}
	run, err := freshScript(ctx, rdb, sc, s.functions)
	if err != nil {
		return nil, err
	}
	return func(p redis.Pipeliner, i int) {
		now := strconv.FormatInt(1_700_000_000_000+int64(i), 10)
		if s.serverClock {
			now = ""
		}
		argv := []any{now, "1", kit.ForceArg(false)}
		keys := sc.KeyNames(fmt.Sprintf("user:%05d", i%instrKeys), "", params)
		if s.id { // a request key after the state's, a new id each call
			keys = append(keys, fmt.Sprintf("{user:%05d", i%instrKeys)+limitcall.RequestKeyTail(fmt.Sprintf("req-%08d", i)))
		}
		for _, in := range sc.Inputs {
			argv = append(argv, in+":12345")
		}
		for _, v := range params {
			argv = append(argv, v)
		}
		run(p, keys, argv)
	}, nil
}

// policyCaller is caller for a policy: by EVALSHA the script redislimit
// composes for it (its limits written in), by FCALL the policy (or
// holds) function of its library (the limits in ARGV); each identity
// valued name:<n>, for one of instrKeys values. A pair is a reserve and
// its commit (of 150 tokens when the subject gives costs).
func (s instrSubject) policyCaller(ctx context.Context, rdb *redis.Client) (func(redis.Pipeliner, int), error) {
	tmpl, err := limitcall.NewPolicyTemplate(s.policy)
	if err != nil {
		return nil, err
	}
	script := tmpl.Composed(s.policy)
	limits := []any{}
	if s.functions || s.source != "" {
		script = tmpl.Library.Policy
		if s.policy.Holds() {
			script = tmpl.Library.Holds
		}
		for _, a := range tmpl.Limits {
			limits = append(limits, a)
		}
	}
	if s.source != "" {
		script = kit.Script{Name: "other", Source: s.source}
	}
	run, err := freshScript(ctx, rdb, &kit.Scripts{Library: tmpl.Library.Name, Decide: script}, s.functions)
	if err != nil {
		return nil, err
	}
	return func(p redis.Pipeliner, i int) {
		ids := map[string]string{}
		for _, id := range s.policy.Identities() {
			ids[id] = fmt.Sprintf("%s:%05d", id, i%instrKeys)
		}
		c, err := limitcall.NewPolicyCall(s.policy, ids, "")
		if err != nil {
			panic(err) // the identity values are valid keys
		}
		now := strconv.FormatInt(1_700_000_000_000+int64(i), 10)
		for _, h := range s.policyCalls(i) {
			if len(limits) == 0 && h[1] == "decide" {
				h = h[:2] // a composed script's decision: no id nor length, as redislimit sends it
			}
			run(p, c.Keys, append(append([]any{now}, h...), limits...))
		}
	}, nil
}

// policyCalls are the ARGV after now_ms of subject s's call number i:
// cost and force; a holding policy's cost, op, id and hold_ms, a
// reserve's then its commit's for a pair.
func (s instrSubject) policyCalls(i int) [][]any {
	if !s.policy.Holds() {
		return [][]any{{"1", kit.ForceArg(false)}}
	}
	if !s.pair {
		return [][]any{{"1", "decide", "", "0"}}
	}
	reserve, commit := "1", "1"
	if s.costs != nil {
		reserve, commit = "1,1,400", "1,1,150"
	}
	id := fmt.Sprintf("%036d", i)
	return [][]any{{reserve, "reserve", id, "60000"}, {commit, "commit", id, "0"}}
}

// freshScript empties the server and gives it a fresh Lua state (its
// scripts flushed, or its libraries flushed and the catalogue's loaded
// again), so that the garbage collector's work falls the same way at
// each run, and returns what queues a call of sc's decision, by EVALSHA
// or by FCALL.
func freshScript(ctx context.Context, rdb *redis.Client, sc *kit.Scripts, functions bool) (func(redis.Pipeliner, []string, []any), error) {
	for _, c := range []redis.Cmder{rdb.FlushAll(ctx), rdb.ScriptFlush(ctx), rdb.FunctionFlush(ctx)} {
		if c.Err() != nil {
			return nil, c.Err()
		}
	}
	if functions {
		lib, ok := kit.LookupLibrary(sc.Library)
		if !ok {
			return nil, fmt.Errorf("no library %s", sc.Library)
		}
		if _, err := redislimit.LoadLibrary(ctx, rdb, lib); err != nil {
			return nil, err
		}
		fn := lib.Name + "_" + sc.Decide.Name
		return func(p redis.Pipeliner, keys []string, argv []any) { p.FCall(ctx, fn, keys, argv...) }, nil
	}
	sha, err := rdb.ScriptLoad(ctx, sc.Decide.Source).Result()
	return func(p redis.Pipeliner, keys []string, argv []any) { p.EvalSha(ctx, sha, keys, argv...) }, err
}

// pipelined runs call for the decisions from to to-1, in pipelines of
// instrDepth; each must admit.
func pipelined(ctx context.Context, rdb *redis.Client, from, to int, call func(redis.Pipeliner, int)) error {
	for start := from; start < to; start += instrDepth {
		p := rdb.Pipeline()
		for i := start; i < min(start+instrDepth, to); i++ {
			call(p, i)
		}
		cmds, err := p.Exec(ctx)
		if err != nil {
			return err
		}
		for _, c := range cmds {
			if !replyAdmits(c.(*redis.Cmd).Val()) {
				return fmt.Errorf("a decision that was to admit replied %v", c.(*redis.Cmd).Val())
			}
		}
	}
	return nil
}

// dumpInstructions has the callgrind of pid dump its counters beside out
// and reads the instructions counted since they were zeroed.
func dumpInstructions(pid int, out string) (int64, error) {
	before, _ := filepath.Glob(out + ".*")
	if err := exec.Command("callgrind_control", "-d", strconv.Itoa(pid)).Run(); err != nil {
		return 0, fmt.Errorf("callgrind_control -d: %w", err)
	}
	after, _ := filepath.Glob(out + ".*")
	for _, f := range after {
		if !slices.Contains(before, f) {
			return callgrindTotal(f)
		}
	}
	return 0, fmt.Errorf("callgrind wrote no dump beside %s", out)
}

// callgrindTotal reads the instructions a callgrind dump counted (its
// summary or totals line).
func callgrindTotal(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for _, p := range []string{"summary:", "totals:"} {
			if rest, ok := strings.CutPrefix(sc.Text(), p); ok {
				if fields := strings.Fields(rest); len(fields) > 0 {
					return strconv.ParseInt(fields[0], 10, 64)
				}
			}
		}
	}
	return 0, fmt.Errorf("%s: no summary line", path)
}

// serverVersion is the server's redis_version.
func serverVersion(t *testing.T, rdb *redis.Client) string {
	info, err := rdb.Info(t.Context(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v
		}
	}
	t.Fatal("INFO server names no redis_version")
	return ""
}

// readInstructionBudgets reads instructionsFile: the server's version and
// the budget of each subject.
func readInstructionBudgets(t *testing.T) (string, map[string]int64) {
	f, err := os.Open(instructionsFile)
	if err != nil {
		t.Fatalf("%v: record the budgets with -update-budgets", err)
	}
	defer f.Close()
	version, budgets := "", map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "# redis-server "); ok {
			version = v
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if i < 0 || err != nil {
			t.Fatalf("%s: bad line %q", instructionsFile, line)
		}
		budgets[line[:i]] = n
	}
	return version, budgets
}

// writeInstructionBudgets writes instructionsFile.
func writeInstructionBudgets(t *testing.T, version string, measured map[string]int64) {
	var b strings.Builder
	b.WriteString("# The instructions a redis-server runs per decision, by TestInstructionBudgets:\n")
	b.WriteString("# subject (an algorithm's admission on an existing key, or a policy's on existing keys) and instructions.\n")
	b.WriteString("# redis-server " + version + "\n")
	for _, n := range slices.Sorted(maps.Keys(measured)) {
		fmt.Fprintf(&b, "%s %d\n", n, measured[n])
	}
	if err := os.WriteFile(instructionsFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replyAdmits tells whether a script's reply admits: an algorithm's
// reply (7 integers, admitted first) or a policy's (the binding index,
// then each limit's 7, admitted first), which admits when every limit
// does.
func replyAdmits(reply any) bool {
	r, ok := reply.([]any)
	if !ok || len(r) == 0 {
		return false
	}
	first := 0
	if len(r)%7 == 1 {
		first = 1
	}
	for i := first; i < len(r); i += 7 {
		if r[i] != int64(1) {
			return false
		}
	}
	return true
}
