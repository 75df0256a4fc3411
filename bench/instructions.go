package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// instrOptions shape the load of the instruction figures: few enough
// decisions for a server running under valgrind (about 50 times
// slower), from one client, so that every run counts the same work.
type instrOptions struct {
	Keys, Decisions, Depth int
}

// callgrindServer is a redis-server run under valgrind's callgrind,
// which counts the instructions it runs rather than time, so that a
// count is the same on a busy machine and a quiet one. serverCron, the
// work the server does by the clock (10 times a second: memory
// statistics, expiry sampling) rather than per call, is left out: a
// server under valgrind runs about 50 times slower, so that it would be
// counted as many times more than on a server at work, and more on a
// busy machine than on a quiet one (about a million instructions per
// second of valgrind's run).
type callgrindServer struct {
	*server
	rdb *redis.Client
	// out is callgrind's output file: its dumps are written beside it.
	out     string
	version string
}

// startCallgrind starts bin under callgrind, counting but in serverCron.
func startCallgrind(ctx context.Context, bin string) (*callgrindServer, error) {
	for _, tool := range []string{"valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s not found: install valgrind (apt-get install valgrind)", tool)
		}
	}
	dir, err := os.MkdirTemp("", "limitspec-bench-callgrind-")
	if err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "callgrind.out")
	srv, err := startServer(bin, "valgrind", "--tool=callgrind", "--toggle-collect=serverCron", "--collect-atstart=yes", "--callgrind-out-file="+out)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c := &callgrindServer{server: srv, rdb: redis.NewClient(&redis.Options{Addr: srv.addr}), out: out}
	if c.version, err = redisVersion(ctx, c.rdb); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// Stop stops the server and removes callgrind's files.
func (c *callgrindServer) Stop() {
	c.rdb.Close()
	c.server.Stop()
	os.RemoveAll(filepath.Dir(c.out))
}

// instructions counts the instructions redis-server runs per admitted
// decision of every decider of the Redis CPU figure (see count).
func instructions(ctx context.Context, c *callgrindServer, o instrOptions) (Table, error) {
	ds, err := redisCPUDeciders()
	if err != nil {
		return Table{}, err
	}
	t := Table{
		Title: titleInstructions,
		Notes: []string{"redis-server run under valgrind --tool=callgrind, which counts the instructions it runs: the same figure on a busy machine as on a quiet one. " +
			"Each row: the instructions the server ran (reading, parsing and answering the calls included) divided by the decisions. " + o.method() +
			" limitspec's scripts run by EVALSHA and by FCALL, on the caller's clock and on the server's (an empty now_ms), as in the Redis CPU figure."},
		Columns: []Column{{"instructions per decision", Lower}},
	}
	for _, d := range ds {
		n, err := c.count(ctx, d, o)
		var expired *expiredError
		if errors.As(err, &expired) {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: %d keys expired during its %s counted decisions (a TTL of the script's own reckoning ran out between two decisions of a key), the next decision of each counted as one on a fresh key.",
				d.Name, expired.N, groupThousands(int64(o.Decisions))))
		} else if err != nil {
			return Table{}, fmt.Errorf("%s: %w", d.Name, err)
		}
		t.Rows = append(t.Rows, Row{Group: d.Group, Name: d.Name, Ours: d.Ours, Values: []float64{n}})
	}
	return t, nil
}

// method says how count counts, for a figure's notes.
func (o instrOptions) method() string {
	return fmt.Sprintf("Per script, from a fresh Lua state (FLUSHALL, SCRIPT FLUSH and FUNCTION FLUSH, then the script or library loaded: the garbage collector's work falls the same way at each run): "+
		"one decision per key on %s keys (creating them; not counted), then the counters zeroed and %s decisions over the keys in turn from one client in pipelines of %d, every one admitted; "+
		"a script given the caller's clock is given now_ms %d, then every next decision 1 ms later, at each run. "+
		"serverCron is not counted (--toggle-collect=serverCron --collect-atstart=yes): it runs by the clock, 10 times a second, not per call, and a server under valgrind runs about 50 times slower, so that it would be counted as many times more than on a server at work, and more on a busy machine.",
		groupThousands(int64(o.Keys)), groupThousands(int64(o.Decisions)), o.Depth, fixedEpochMs)
}

// count counts the instructions the server runs per decision of d: from
// a fresh Lua state, o.Keys decisions (one per key) create the keys, the
// counters are zeroed, o.Decisions decisions are counted; decision i is
// at fixedClock(i). Keys that expire meanwhile (INFO stats) are an
// *expiredError beside the count: their next decisions were counted as
// ones on a fresh key (redis_rate's keys live 1 s, and a server under
// valgrind is slow).
func (c *callgrindServer) count(ctx context.Context, d *redisDecider, o instrOptions) (float64, error) {
	if err := freshLua(ctx, c.rdb); err != nil {
		return 0, err
	}
	if err := d.load(ctx, c.rdb); err != nil {
		return 0, err
	}
	run := decisions{IDs: ids(o.Keys), To: o.Keys, Clients: 1, Depth: o.Depth, Clock: fixedClock}
	if err := drive(ctx, c.rdb, d, run); err != nil {
		return 0, err
	}
	expired, err := expiredKeys(ctx, c.rdb)
	if err != nil {
		return 0, err
	}
	pid := strconv.Itoa(c.cmd.Process.Pid)
	if err := exec.Command("callgrind_control", "-z", pid).Run(); err != nil {
		return 0, fmt.Errorf("callgrind_control -z: %w", err)
	}
	run.From, run.To = o.Keys, o.Keys+o.Decisions
	if err := drive(ctx, c.rdb, d, run); err != nil {
		return 0, err
	}
	total, err := c.dump()
	if err != nil {
		return 0, err
	}
	perDecision := float64(total) / float64(o.Decisions)
	n, err := expiredKeys(ctx, c.rdb)
	if err != nil {
		return 0, err
	}
	if n != expired {
		return perDecision, &expiredError{n - expired}
	}
	return perDecision, nil
}

// expiredError reports keys that expired while a count ran: a key's TTL
// passed between two of its decisions, so that the later was decided on
// a fresh key.
type expiredError struct{ N int64 }

func (e *expiredError) Error() string {
	return fmt.Sprintf("%d keys expired while counted: a key's TTL passed between two of its decisions, so that the later was decided on a fresh key; fewer keys (-instr-keys) bring a key's decisions closer", e.N)
}

// expiredKeys is the number of keys the server has expired (INFO stats
// expired_keys).
func expiredKeys(ctx context.Context, rdb *redis.Client) (int64, error) {
	info, err := rdb.Info(ctx, "stats").Result()
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "expired_keys:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO stats names no expired_keys")
}

// freshLua empties the server and gives it a fresh Lua state: FLUSHALL,
// SCRIPT FLUSH and FUNCTION FLUSH.
func freshLua(ctx context.Context, rdb *redis.Client) error {
	for _, cmd := range []redis.Cmder{rdb.FlushAll(ctx), rdb.ScriptFlush(ctx), rdb.FunctionFlush(ctx)} {
		if err := cmd.Err(); err != nil {
			return err
		}
	}
	return nil
}

// dump has callgrind dump its counters and reads the instructions
// counted since they were zeroed.
func (c *callgrindServer) dump() (int64, error) {
	before, _ := filepath.Glob(c.out + ".*")
	if err := exec.Command("callgrind_control", "-d", strconv.Itoa(c.cmd.Process.Pid)).Run(); err != nil {
		return 0, fmt.Errorf("callgrind_control -d: %w", err)
	}
	after, _ := filepath.Glob(c.out + ".*")
	for _, f := range after {
		if !slices.Contains(before, f) {
			return dumpTotal(f)
		}
	}
	return 0, fmt.Errorf("callgrind wrote no dump beside %s", c.out)
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
