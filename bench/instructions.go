package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The load of the instructions figure: few enough decisions for a server
// running under valgrind (about 50 times slower), from one client, so
// that every run counts the same work.
const (
	instrKeys      = 2000
	instrDecisions = 20000
	instrDepth     = 16
)

// instructions counts the instructions redis-server runs per admitted
// decision of every decider of the Redis CPU figure: the server runs
// under valgrind's callgrind, which counts instructions rather than
// time, so that the figure is the same on a busy machine and a quiet
// one. Per decider, on an emptied server: one decision per key (creating
// the keys; not counted), the counters zeroed, instrDecisions decisions
// pipelined, the counters dumped. It returns the server's version too.
func instructions(ctx context.Context, o options) (string, Table, error) {
	for _, tool := range []string{"valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", Table{}, fmt.Errorf("%s not found: install valgrind (apt-get install valgrind)", tool)
		}
	}
	dir, err := os.MkdirTemp("", "limitspec-bench-callgrind-")
	if err != nil {
		return "", Table{}, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "callgrind.out")
	srv, err := startServer(o.serverBin, "valgrind", "--tool=callgrind", "--callgrind-out-file="+out)
	if err != nil {
		return "", Table{}, err
	}
	defer srv.Stop()
	rdb := redis.NewClient(&redis.Options{Addr: srv.addr})
	defer rdb.Close()
	version, err := redisVersion(ctx, rdb)
	if err != nil {
		return "", Table{}, err
	}
	fmt.Fprintf(os.Stderr, "bench: measuring redis-instructions on redis-server %s under callgrind\n", version)
	ds, err := redisCPUDeciders()
	if err != nil {
		return "", Table{}, err
	}
	t := Table{
		Title: titleInstructions,
		Notes: []string{fmt.Sprintf("redis-server run under valgrind --tool=callgrind, which counts the instructions it runs: the same figure on a busy machine as on a quiet one. Per script, on an emptied server: one decision per key on %d keys (creating them; not counted), then the counters zeroed and %d decisions from one client in pipelines of %d, every one admitted; the instructions the server ran (reading, parsing and answering the calls included) divided by the decisions. limitspec's scripts run on the caller's clock and on the server's (an empty now_ms), as in the Redis CPU figure.",
			instrKeys, instrDecisions, instrDepth)},
		Columns: []Column{{"instructions per decision", Lower}},
	}
	keys := ids(instrKeys)
	for _, d := range ds {
		n, err := instructionsOf(ctx, rdb, srv, d, keys, out)
		if err != nil {
			return "", Table{}, fmt.Errorf("%s: %w", d.Name, err)
		}
		t.Rows = append(t.Rows, Row{Group: d.Group, Name: d.Name, Ours: d.Ours, Values: []float64{n}})
	}
	return version, t, nil
}

// instructionsOf counts one decider's instructions per decision (see
// instructions); out is the server's callgrind output file.
func instructionsOf(ctx context.Context, rdb *redis.Client, srv *server, d *redisDecider, keys []string, out string) (float64, error) {
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return 0, err
	}
	if err := d.load(ctx, rdb); err != nil {
		return 0, err
	}
	if err := drive(ctx, rdb, d, keys, len(keys), 1, instrDepth); err != nil {
		return 0, err
	}
	pid := strconv.Itoa(srv.cmd.Process.Pid)
	if err := exec.Command("callgrind_control", "-z", pid).Run(); err != nil {
		return 0, fmt.Errorf("callgrind_control -z: %w", err)
	}
	if err := drive(ctx, rdb, d, keys, instrDecisions, 1, instrDepth); err != nil {
		return 0, err
	}
	before, _ := filepath.Glob(out + ".*")
	if err := exec.Command("callgrind_control", "-d", pid).Run(); err != nil {
		return 0, fmt.Errorf("callgrind_control -d: %w", err)
	}
	after, _ := filepath.Glob(out + ".*")
	dump := newest(after, before)
	if dump == "" {
		return 0, fmt.Errorf("callgrind wrote no dump beside %s", out)
	}
	total, err := dumpTotal(dump)
	return float64(total) / instrDecisions, err
}

// newest is the file of after that before does not hold.
func newest(after, before []string) string {
	for _, f := range after {
		if !slices.Contains(before, f) {
			return f
		}
	}
	return ""
}

// dumpTotal reads the instructions a callgrind dump counted (its
// "summary:" or "totals:" line).
func dumpTotal(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		for _, p := range []string{"summary:", "totals:"} {
			if rest, ok := strings.CutPrefix(line, p); ok {
				fields := strings.Fields(rest)
				if len(fields) > 0 {
					return strconv.ParseInt(fields[0], 10, 64)
				}
			}
		}
	}
	return 0, fmt.Errorf("%s: no summary line", path)
}
