// Command verify replays conformance vectors (docs/vectors.md) against
// every implementation of the catalogue's algorithms and policies, package
// goimpl's limiter and the Lua scripts on every Redis it is given, and
// reports where any of them departs from a vector or from another. With
// -spec it compiles a user's spec in memory and runs its algorithms'
// vectors on the targets that run the scripts.
//
//	go run ./cmd/verify [-vectors DIR] [-run REGEXP] [-spec FILE [-package NAME]] [-redis URL] [-cluster ADDRS] [-functions] [-v | -json]
//	go run ./cmd/verify -exec CMD [-exec-timeout D] [-vectors DIR] [-run REGEXP] [-v | -json]
//
// With -exec it replays them on an implementation in any language
// instead, through the line protocol of docs/protocol.md.
//
// It prints a table, a row per algorithm and policy and a column per
// target, the first failures with their diffs, and a last line counting
// vector × target pairs. See -h for the details, every field of a vector
// and of -json's output.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/limitspec/limitspec/conformance"
)

// maxFailures is how many failures the default output details.
const maxFailures = 10

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are verify's flags.
type options struct {
	dir, url, cluster, run string
	spec, library          string
	functions, verbose     bool
	json                   bool
	exec                   string
	execTimeout            time.Duration
}

// parse reads the flags; ok is false on -h (code 0) or a usage error
// (code 2).
func parse(args []string, stderr io.Writer) (o options, code int, ok bool) {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.dir, "vectors", "vectors", "directory of vectors (*.json, searched recursively)")
	fs.StringVar(&o.run, "run", "", "run only the vectors whose name (not file path) matches this regular expression, e.g. 'gcra/' or 'force'")
	fs.StringVar(&o.spec, "spec", "", "a user's spec file (as cmd/gen -spec takes it): compile it in memory and run the vectors of its algorithms and policies on the targets that run the scripts")
	fs.StringVar(&o.library, "package", "", "with -spec: the spec's package name, which names its algorithms (\"quota.daily_quota\") and its Functions library (default: the base name of -spec without its extension)")
	fs.StringVar(&o.url, "redis", os.Getenv("REDIS_URL"), "URL of a real Redis to verify too, e.g. redis://127.0.0.1:6379/0 (default $REDIS_URL)")
	fs.StringVar(&o.cluster, "cluster", "", "comma-separated host:port of Redis Cluster nodes to verify too")
	fs.BoolVar(&o.functions, "functions", false, "run the vectors on -redis and -cluster through the Redis Functions library (FCALL) too, loading lua/library.lua where it is missing and deleting it after; Redis 7 and later")
	fs.BoolVar(&o.verbose, "v", false, "print a line per vector and target (PASS, FAIL with its diff and the vector's comment, SKIP with the reason) instead of the table")
	fs.BoolVar(&o.json, "json", false, "print the results as one JSON object instead (see above)")
	fs.StringVar(&o.exec, "exec", "", "run the vectors on the adapter CMD (run by sh -c; docs/protocol.md) in place of the embedded targets")
	fs.DurationVar(&o.execTimeout, "exec-timeout", 10*time.Second, "with -exec, the longest wait for one reply of the adapter")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	switch err := fs.Parse(args); {
	case err == flag.ErrHelp:
		return o, 0, false
	case err != nil:
		return o, 2, false
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "verify: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return o, 2, false
	case o.library != "" && o.spec == "":
		fmt.Fprintln(stderr, "verify: -package goes with -spec")
		return o, 2, false
	case o.verbose && o.json:
		fmt.Fprintln(stderr, "verify: give -v or -json, not both")
		return o, 2, false
	}
	return o, 0, true
}

func run(args []string, stdout, stderr io.Writer) int {
	o, code, ok := parse(args, stderr)
	if !ok {
		return code
	}
	selected, err := regexp.Compile(o.run)
	if err != nil {
		fmt.Fprintln(stderr, "verify: -run:", err)
		return 2
	}
	vectors, err := load(o.dir, selected)
	if err == nil && o.spec != "" {
		err = compileSpec(o.spec, o.library)
	}
	if err == nil && o.exec == "" {
		err = unknownAlgorithms(vectors)
	}
	if err != nil {
		fmt.Fprintln(stderr, "verify:", err)
		return 1
	}
	// A target opened here is a column of the table: the report names
	// the columns after the targets of the results.
	open := func() ([]conformance.Target, error) { return targets(o.url, o.cluster, o.functions) }
	if o.exec != "" {
		// The adapter's description is no part of -json's object.
		describe := stdout
		if o.json {
			describe = stderr
		}
		open = func() ([]conformance.Target, error) { return execTarget(o.exec, o.execTimeout, describe, stderr) }
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
	rep := newReport(vectors, conformance.Run(vectors, targets))
	if err := write(stdout, o, rep); err != nil {
		fmt.Fprintln(stderr, "verify:", err)
		return 1
	}
	if rep.Summary.Failed > 0 {
		return 1
	}
	return 0
}

// write prints the report as the flags ask: one JSON object (-json), a
// line per vector and target (-v), or the table with the first failures;
// the last two end with the summary line.
func write(w io.Writer, o options, rep report) error {
	switch {
	case o.json:
		return writeJSON(w, rep)
	case o.verbose:
		writeLines(w, rep)
	default:
		writeTable(w, rep)
		writeFailures(w, rep, maxFailures)
	}
	writeSummary(w, rep.Summary)
	return nil
}

// load reads the vectors under dir whose name matches selected; none is
// an error.
func load(dir string, selected *regexp.Regexp) ([]conformance.Vector, error) {
	all, err := conformance.Load(dir)
	if err != nil {
		return nil, err
	}
	var out []conformance.Vector
	for _, v := range all {
		if selected.MatchString(v.Name) {
			out = append(out, v)
		}
	}
	switch {
	case len(all) == 0:
		return nil, fmt.Errorf("no vectors (*.json) under %s", dir)
	case len(out) == 0:
		return nil, fmt.Errorf("none of the %d vectors under %s has a name matching -run %s", len(all), dir, selected)
	}
	return out, nil
}

// execTarget starts the adapter command and writes what it reports to
// describe.
func execTarget(command string, timeout time.Duration, describe, stderr io.Writer) ([]conformance.Target, error) {
	t, err := conformance.NewExecTarget(command, conformance.ExecOptions{Timeout: timeout, Stderr: stderr})
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(describe, t.Describe())
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
