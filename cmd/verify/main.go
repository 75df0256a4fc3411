// Command verify replays conformance vectors (docs/vectors.md) against
// every implementation of the catalogue's algorithms and policies, package
// memory's limiter and the Lua scripts on every Redis it is given, and
// reports where any of them departs from a vector or from another.
//
//	go run ./cmd/verify [-vectors DIR] [-redis URL] [-cluster ADDRS] [-functions] [-v]
//	go run ./cmd/verify -exec CMD [-exec-timeout D] [-vectors DIR]
//
// With -exec it replays them on an implementation in any language
// instead, through the line protocol of docs/protocol.md.
//
// See -h for the details.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/limitspec/limitspec/internal/conformance"
)

const usage = `usage: go run ./cmd/verify [-vectors DIR] [-redis URL] [-cluster ADDRS] [-functions] [-v]
       go run ./cmd/verify -exec CMD [-exec-timeout D] [-vectors DIR] [-v]

Replays every vector (*.json, searched recursively) in DIR against every
target and checks each step against the vector's expectations and against
the other targets:

  memory     package memory's limiter (the generated Go), given the typed
             limit or the policy the vector names
  gopherlua  the generated Lua in gopher-lua, over an in-process store
  miniredis  the generated Lua in miniredis, through go-redis
  redis      the generated Lua on a real Redis (only with -redis or REDIS_URL)
  cluster    the generated Lua on a Redis Cluster (only with -cluster)
  redis-functions, cluster-functions
             the same through the Redis Functions library, lua/library.lua
             (FCALL limitspec_<script>; only with -functions)

  exec:NAME  with -exec, in place of the embedded targets: the program
             CMD, run by sh -c, an adapter of another implementation
             speaking the line protocol of docs/protocol.md (NAME is
             the name it gives). It is held to the vectors only, on the
             result fields it says it reports, and is compared with no
             other target. Vectors of the algorithms it does not
             implement, of policies and with a view are SKIPped;
             wrong_type steps are not run (as on memory). A first line
             names what it implements and the fields not compared. An
             adapter that takes longer than -exec-timeout to reply, or
             exits, FAILs its vector and every later one; it is stopped
             (with what it started) when verify ends.

The algorithms are the catalogue's (spec/algorithms.yaml); the vectors of
a user's spec (algorithm "library.name") run in the test cmd/gen writes
into its package, which links its scripts in (kit/vectortest).

A vector (docs/vectors.md) is a JSON object {"name", "algorithm",
"params", "steps"}; each step is {"t_ms", "key", "cost" (default 1),
"expect"}, where expect holds any of allowed, limit, remaining,
retry_after_ms, reset_after_ms, delay_ms and tier, or {"error": true}.
A step may also give "params" (the algorithm's parameters from that step
on), "meta" (meta_window's string input), "force": true (the forced
call), "reset": true (delete the key's state; expect {"error": false} or
{"error": true}), "view" (run a read-only view; expect "entries") or
"wrong_type" (first store another Redis type at the step's keys: true
for all, or a list of 1-based places in KEYS; the step must expect an
error, and only the targets with a keyspace run it). A vector of a
policy gives "policy" instead of "algorithm" and "params": the policy,
as a policy file writes it ({"name", "limits": [{"name", "algorithm",
"identity" or "constant", "params"}, ...]}); its steps give "ids"
(identity values by name) instead of "key", and expect may also hold
the binding limit's "index" (from 1) and each limit's own result in
"limits". On a cluster, a policy that counts several identities or a
constant, whose keys may lie in different slots, is not run (SKIP, with
the reason).

On every target but memory, verify checks after each step that every
key has a TTL, no longer than the longest its limit may need (its
horizon plus MAX_SKEW_MS plus the margin), and that a refused step
changed no key.
On a real Redis or Cluster it writes only keys whose hash tag starts with
a random prefix of its own ("{limitspec-verify:<random>:..."), and
deletes them all when done; it never flushes a database. With -functions
it loads the library on each master that lacks it and deletes it from
those when done; a master that holds another version of it is an error,
never replaced.

It prints a line per vector and target (PASS, FAIL with the first
divergence, or SKIP with the reason) and a last line "N passed, M
failed[, K skipped]" (vector x target pairs); it exits 1 if anything
failed, no vector was found, a vector could not be read or a target could
not be opened, 2 on a usage error.

Flags:
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("vectors", "vectors", "directory of vectors (*.json, searched recursively)")
	url := fs.String("redis", os.Getenv("REDIS_URL"), "URL of a real Redis to verify too, e.g. redis://127.0.0.1:6379/0 (default $REDIS_URL)")
	cluster := fs.String("cluster", "", "comma-separated host:port of Redis Cluster nodes to verify too")
	functions := fs.Bool("functions", false, "run the vectors on -redis and -cluster through the Redis Functions library (FCALL) too, loading lua/library.lua where it is missing and deleting it after; Redis 7 and later")
	verbose := fs.Bool("v", false, "print the comment of each failing vector")
	execCmd := fs.String("exec", "", "run the vectors on the adapter CMD (run by sh -c; docs/protocol.md) in place of the embedded targets")
	execTimeout := fs.Duration("exec-timeout", 10*time.Second, "with -exec, the longest wait for one reply of the adapter")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	vectors, err := conformance.Load(*dir)
	if err != nil {
		fmt.Fprintln(stderr, "verify:", err)
		return 1
	}
	if len(vectors) == 0 {
		fmt.Fprintf(stderr, "verify: no vectors (*.json) under %s\n", *dir)
		return 1
	}
	open := func() ([]conformance.Target, error) { return targets(*url, *cluster, *functions) }
	if *execCmd != "" {
		open = func() ([]conformance.Target, error) { return execTarget(*execCmd, *execTimeout, stdout, stderr) }
	}
	targets, err := open()
	if err != nil {
		fmt.Fprintln(stderr, "verify:", err)
		return 1
	}
	defer func() {
		for _, t := range targets {
			if err := t.Close(); err != nil {
				fmt.Fprintf(stderr, "verify: closing %s: %v\n", t.Name(), err)
			}
		}
	}()
	comments := map[string]string{}
	for _, v := range vectors {
		comments[v.Name] = v.Comment
	}
	results := conformance.Run(vectors, targets)
	skipped := 0
	for _, r := range results {
		if r.Skipped != "" {
			skipped++
			fmt.Fprintf(stdout, "SKIP %s [%s] %s\n", r.Vector, r.Target, r.Skipped)
			continue
		}
		if r.Passed() {
			fmt.Fprintf(stdout, "PASS %s [%s] %d steps\n", r.Vector, r.Target, r.Steps)
			continue
		}
		fmt.Fprintf(stdout, "FAIL %s [%s] %s\n  %s\n", r.Vector, r.Target, r.File, strings.ReplaceAll(r.Failed, "\n", "\n  "))
		if *verbose && comments[r.Vector] != "" {
			fmt.Fprintf(stdout, "  vector: %s\n", comments[r.Vector])
		}
	}
	passed, failed := conformance.Summary(results)
	if skipped > 0 {
		fmt.Fprintf(stdout, "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	} else {
		fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// execTarget starts the adapter command and names what it reports.
func execTarget(command string, timeout time.Duration, stdout, stderr io.Writer) ([]conformance.Target, error) {
	t, err := conformance.NewExecTarget(command, conformance.ExecOptions{Timeout: timeout, Stderr: stderr})
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(stdout, t.Describe())
	return []conformance.Target{t}, nil
}

// targets opens the embedded targets, the real Redis when url is set and
// the cluster when cluster is set; with functions, each real endpoint
// twice: through EVALSHA and through the Functions library.
func targets(url, cluster string, functions bool) (ts []conformance.Target, err error) {
	defer func() {
		if err != nil {
			for _, t := range ts {
				t.Close()
			}
			ts = nil
		}
	}()
	if ts, err = conformance.EmbeddedTargets(); err != nil {
		return nil, err
	}
	var open []func() (*conformance.RedisTarget, error)
	if url != "" {
		open = append(open, func() (*conformance.RedisTarget, error) { return conformance.NewRedisTarget(url) })
	}
	if cluster != "" {
		addrs := strings.Split(cluster, ",")
		open = append(open, func() (*conformance.RedisTarget, error) { return conformance.NewRedisClusterTarget(addrs) })
	}
	modes := []bool{false} // through EVALSHA, then through FCALL
	if functions {
		modes = append(modes, true)
	}
	for _, o := range open {
		for _, fn := range modes {
			t, err := o()
			if err != nil {
				return ts, err
			}
			ts = append(ts, t)
			if fn {
				if err := t.UseFunctions(); err != nil {
					return ts, err
				}
			}
		}
	}
	return ts, nil
}
