// Command bench compares limitspec with its peers, side by side, in one
// run: the Redis CPU of an admitted decision (every algorithm, by EVALSHA
// and by FCALL, on the caller's clock and on the server's, beside its
// hand-written peers),
// decisions per second through one Redis (batched and not, and from
// leases), the denied path of a hot key (with and without the denials
// cache), in-process ns/op and allocations, heap per tracked key in
// process, and Redis memory per key; what a hold (a reservation, a
// slot) costs beside a plain decision, on Redis and in process;
// ShouldRateLimit of cmd/limitspec-rls beside envoyproxy/ratelimit's
// (decisions/s, p50, p99; each built from its module and run as a
// process of its own on the same Redis); then the Goals table, which reads the project's targets off those
// figures. It starts a throwaway
// redis-server on a free loopback port, measures, prints Markdown tables
// headed with the machine and the versions, and stops the server:
//
//	make bench                      # from the repository's root
//	cd bench && go run . -only redis-cpu,heap
//	cd bench && go run . -doc ../docs/performance.md -readme ../README.md
//
// Two more figures run only when -only names them, for they need
// valgrind and take minutes: redis-instructions, the instructions a
// redis-server under valgrind's callgrind runs per decision of every
// script of the Redis CPU figure, and redis-instruction-parts, those of
// gcra, fixed_window and sliding_log and their peers split into calling
// a script, its Redis commands, its argument checks and the rest:
//
//	cd bench && go run . -only redis-instructions,redis-instruction-parts
//
// It is a module of its own, so that the peers never enter the main
// module's go.mod.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// figures are the names -only takes by default, in the order they run
// (holds measures a table on Redis, after redis-memory, and one in
// process, after heap); optional, those it takes only when named (they
// need more tools).
var (
	figures  = []string{"redis-cpu", "throughput", "denied", "redis-memory", "inprocess", "heap", "holds", "rls"}
	optional = []string{"redis-instructions", "redis-instruction-parts"}
)

// options are the command's flags.
type options struct {
	only, readme, serverBin string
	doc                     string
	cpu                     cpuOptions
	instr                   instrOptions
	tput                    throughputOptions
	benchtime               string
	heapKeys, rounds        int
	holdKeys                int
}

func main() {
	testing.Init() // testing.Benchmark's flags
	var o options
	flag.StringVar(&o.only, "only", strings.Join(figures, ","), "the figures to measure, comma-separated: "+strings.Join(figures, ", ")+
		"; also "+strings.Join(optional, ", ")+" (instructions per script call, and per part of a call, counted by valgrind's callgrind: slow, and needs valgrind)")
	flag.StringVar(&o.doc, "doc", "", "also write the report between the bench markers of this file (docs/performance.md)")
	flag.StringVar(&o.readme, "readme", "", "also write the report's headline, the Goals in short, between the bench:headline markers of this file (README.md)")
	flag.StringVar(&o.serverBin, "redis-server", "redis-server", "the redis-server binary to start")
	flag.IntVar(&o.cpu.Keys, "keys", 10000, "keys of the Redis and in-process figures")
	flag.IntVar(&o.cpu.Decisions, "decisions", 50000, "measured decisions per row of the Redis CPU figure")
	flag.IntVar(&o.cpu.Clients, "clients", 50, "concurrent clients of the Redis CPU figure")
	flag.IntVar(&o.cpu.Depth, "pipeline", 16, "pipeline depth of the Redis CPU figure")
	flag.IntVar(&o.tput.Goroutines, "goroutines", 64, "goroutines of the decisions/s figure and of the denied figure's parallel column")
	flag.DurationVar(&o.tput.Warm, "warm", 500*time.Millisecond, "warm-up of each decisions/s round and of each denied measure")
	flag.DurationVar(&o.tput.For, "for", time.Second, "measured time of each decisions/s round and of each denied measure")
	flag.StringVar(&o.benchtime, "benchtime", "500ms", "testing.Benchmark's benchtime for the in-process figure")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds of the Redis CPU, decisions/s, denied and in-process figures (each row the median, or the least for Redis CPU)")
	flag.IntVar(&o.heapKeys, "heap-keys", 100000, "keys of the heap figure")
	flag.IntVar(&o.holdKeys, "hold-keys", 16, "keys of the holds figure's rows of live holds (each holds up to 20,000 holds, made before the measurement)")
	flag.IntVar(&o.instr.Keys, "instr-keys", 200, "keys of the instruction figures")
	flag.IntVar(&o.instr.Decisions, "instr-decisions", 20000, "counted decisions per script of the instruction figures")
	flag.Parse()
	o.tput.Keys, o.cpu.Rounds, o.tput.Rounds = o.cpu.Keys, o.rounds, o.rounds
	o.instr.Depth = 16
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// run measures the figures o.only names, prints the report and, with
// o.doc, writes it into that file, and with o.readme its headline into
// that one.
func run(o options) error {
	want, err := selected(o.only)
	if err != nil {
		return err
	}
	if err := checkLimits(); err != nil {
		return err
	}
	if o.holdKeys < 1 {
		return fmt.Errorf("-hold-keys %d: want at least 1", o.holdKeys)
	}
	if err := flag.Set("test.benchtime", o.benchtime); err != nil {
		return fmt.Errorf("-benchtime: %w", err)
	}
	ctx := context.Background()
	version := "not started"
	var tables []Table
	if want["redis-cpu"] || want["throughput"] || want["denied"] || want["redis-memory"] || want["holds"] || want["rls"] {
		version, tables, err = redisFigures(ctx, o, want)
		if err != nil {
			return err
		}
	}
	local, err := localFigures(o, want)
	if err != nil {
		return err
	}
	if want["redis-instructions"] || want["redis-instruction-parts"] {
		v, t, err := callgrindFigures(ctx, o, want)
		if err != nil {
			return err
		}
		version, local = v, append(local, t...)
	}
	report := environment(version, command()).Markdown() + LimitText()
	tables = append(tables, local...)
	for _, t := range tables {
		report += t.Markdown()
	}
	report += goalsTable(goals, tables)
	fmt.Print(report)
	if o.doc != "" {
		if err := updateDoc(o.doc, report); err != nil {
			return err
		}
	}
	if o.readme != "" {
		return updateHeadline(o.readme, report)
	}
	return nil
}

// command is the command line that reproduces the run: go run with the
// flags given, but -doc and -readme.
func command() string {
	c := "cd bench && go run ."
	flag.Visit(func(f *flag.Flag) {
		if f.Name != "doc" && f.Name != "readme" && !strings.HasPrefix(f.Name, "test.") {
			c += fmt.Sprintf(" -%s=%s", f.Name, f.Value)
		}
	})
	return c
}

// selected parses -only.
func selected(only string) (map[string]bool, error) {
	want := map[string]bool{}
	for f := range strings.SplitSeq(only, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(figures, f) && !slices.Contains(optional, f) {
			return nil, fmt.Errorf("-only: unknown figure %q (known: %s)", f, strings.Join(append(figures, optional...), ", "))
		}
		want[f] = true
	}
	return want, nil
}

// redisFigures starts a redis-server, measures the Redis figures wanted
// and stops it; it returns the server's version and the tables.
func redisFigures(ctx context.Context, o options, want map[string]bool) (string, []Table, error) {
	srv, err := startServer(o.serverBin)
	if err != nil {
		return "", nil, err
	}
	defer srv.Stop()
	opts := &redis.Options{Addr: srv.addr, ContextTimeoutEnabled: true, PoolSize: max(o.tput.Goroutines, o.cpu.Clients)}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	version, err := redisVersion(ctx, rdb)
	if err != nil {
		return "", nil, err
	}
	tables, err := measure(want, "on redis-server "+version+" at "+srv.addr, []step{
		{"redis-cpu", func() (Table, error) { return redisCPU(ctx, rdb, o.cpu) }},
		{"throughput", func() (Table, error) { return throughput(ctx, opts, o.tput) }},
		{"denied", func() (Table, error) { return denied(ctx, opts, o.tput) }},
		{"redis-memory", func() (Table, error) { return memoryUsage(ctx, rdb) }},
		{"holds", func() (Table, error) { return holdsRedis(ctx, rdb, o.cpu, o.holdKeys) }},
		{"rls", func() (Table, error) {
			return rlsFigure(ctx, srv.addr, rlsOptions{Goroutines: o.tput.Goroutines, Warm: o.tput.Warm, For: o.tput.For, Rounds: o.rounds})
		}},
	})
	return version, tables, err
}

// callgrindFigures starts a redis-server under valgrind's callgrind,
// counts the instruction figures wanted and stops it; it returns the
// server's version and the tables.
func callgrindFigures(ctx context.Context, o options, want map[string]bool) (string, []Table, error) {
	c, err := startCallgrind(ctx, o.serverBin)
	if err != nil {
		return "", nil, err
	}
	defer c.Stop()
	tables, err := measure(want, "on redis-server "+c.version+" under callgrind", []step{
		{"redis-instructions", func() (Table, error) { return instructions(ctx, c, o.instr) }},
		{"redis-instruction-parts", func() (Table, error) { return instructionParts(ctx, c, o.instr) }},
	})
	return c.version, tables, err
}

// localFigures measures the in-process figures wanted.
func localFigures(o options, want map[string]bool) ([]Table, error) {
	return measure(want, "in process", []step{
		{"inprocess", func() (Table, error) { return inProcess(o.cpu.Keys, o.rounds, o.benchtime) }},
		{"heap", func() (Table, error) { return heapPerKeyTable(o.heapKeys) }},
		{"holds", func() (Table, error) { return holdsInProcess(o.cpu.Keys, o.rounds, o.benchtime, o.holdKeys) }},
	})
}

// step is a figure to measure: its name, as -only names it, and how.
type step struct {
	name string
	do   func() (Table, error)
}

// measure measures the figures of steps wanted, in order, saying each
// on standard error with where it is measured, and returns their
// tables.
func measure(want map[string]bool, where string, steps []step) ([]Table, error) {
	var tables []Table
	for _, s := range steps {
		if !want[s.name] {
			continue
		}
		fmt.Fprintf(os.Stderr, "bench: measuring %s %s\n", s.name, where)
		t, err := s.do()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		tables = append(tables, t)
	}
	return tables, nil
}
