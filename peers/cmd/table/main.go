// Command table runs the gcra vectors on each peer's adapter through
// `verify -exec` (docs/protocol.md) and prints, vector by vector, where
// each peer agrees with the contract and the first step where it
// departs, as a Markdown table: the table of docs/peers.md.
//
//	cd peers && go run ./cmd/table [-doc ../docs/peers.md]
//
// With -doc it writes the table into that file, between the lines
// "<!-- table -->" and "<!-- /table -->", instead of printing it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// peers are the adapters, by package, and their names in the table.
var peers = []struct{ pkg, name string }{
	{"./timerate", "golang.org/x/time/rate"},
	{"./throttled", "throttled/v2 GCRA"},
}

func main() {
	doc := flag.String("doc", "", "write the table into this file, between <!-- table --> and <!-- /table -->")
	flag.Parse()
	if err := run(*doc); err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		os.Exit(1)
	}
}

func run(doc string) error {
	dir, err := os.MkdirTemp("", "peers")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	verify := filepath.Join(dir, "verify")
	if err := build("..", verify, "./cmd/verify"); err != nil {
		return err
	}
	var reports []report
	for _, p := range peers {
		bin := filepath.Join(dir, filepath.Base(p.pkg))
		if err := build(".", bin, p.pkg); err != nil {
			return err
		}
		// verify exits 1 when a vector fails, as some do: its output is
		// what counts.
		cmd := exec.Command(verify, "-vectors", "vectors/gcra", "-exec", bin, "-v")
		cmd.Dir, cmd.Stderr = "..", os.Stderr
		out, _ := cmd.Output()
		r, err := parse(out)
		if err != nil {
			return fmt.Errorf("%s: %v\n%s", p.pkg, err, out)
		}
		r.name = p.name
		reports = append(reports, r)
	}
	table := markdown(reports)
	if doc == "" {
		fmt.Print(table)
		return nil
	}
	return writeInto(doc, table)
}

// build builds the package pkg of the module in dir into bin.
func build(dir, bin, pkg string) error {
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %v\n%s", pkg, err, out)
	}
	return nil
}

// writeInto replaces what lies between the markers of doc with table.
func writeInto(doc, table string) error {
	b, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	const begin, end = "<!-- table -->\n", "<!-- /table -->\n"
	before, rest, ok1 := bytes.Cut(b, []byte(begin))
	_, after, ok2 := bytes.Cut(rest, []byte(end))
	if !ok1 || !ok2 {
		return fmt.Errorf("%s: no %q and %q lines", doc, strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	out := string(before) + begin + table + end + string(after)
	return os.WriteFile(doc, []byte(out), 0o644)
}
