// Command gen compiles a spec of rate-limiting algorithms into Lua
// scripts and Go: the catalogue of this module (spec/algorithms.yaml and
// spec/policies.yaml), or a user's own spec into a package of the user's
// module.
//
//	go generate ./...          (runs go run ./cmd/gen: the catalogue)
//	go run ./cmd/gen -check    (writes nothing; exit 1 if a generated file is stale)
//	go run github.com/limitspec/limitspec/cmd/gen -spec limits.yaml -out ./quotas -package quotas
//
// The catalogue goes into this module's packages: its typed limits into
// the root package limitspec (their registration by name into package
// policyfile), its decisions in Go into goimpl, its scripts into lua/
// with lua/library.lua (the Functions library limitspec) and
// lua/manifest.json, and their registration into package lua; the
// runtime it states into exact/ and kit/reply_gen.go.
//
// With -spec, a file holding a user's own algorithms and policies (the
// catalogue's constants, reply and algorithms are in scope; nothing of
// them is written again) goes into one package, -package (the base name
// of -out by default) in the directory -out: the typed limits, which the
// limiters of packages goimpl, redislimit, fallback and httplimit take as
// the catalogue's; the decisions in Go; the scripts in lua/ with
// manifest.json and a Functions library named after the package; the
// ready-made policies; and a test that replays the vectors of
// testdata/vectors, if the user writes any, on every embedded target.
//
// It parses and checks the spec (errors name file and line), emits every
// file in memory, then writes only the files whose bytes changed and
// removes the generated files the spec no longer produces.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/limitspec/limitspec/gen"
)

func main() {
	root := flag.String("root", ".", "the repository root, for the catalogue: where spec/, lua/ and goimpl/ are")
	specFile := flag.String("spec", "", "a user's spec file: compile it, over the catalogue, into one package")
	out := flag.String("out", "", "with -spec: the package's directory")
	pkg := flag.String("package", "", "with -spec: the package's name, and its Functions library's (default: the base name of -out)")
	check := flag.Bool("check", false, "write nothing; exit 1 if any generated file differs from the spec")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./cmd/gen [-root DIR] [-check]\n       go run github.com/limitspec/limitspec/cmd/gen -spec FILE -out DIR [-package NAME] [-check]\n\nCompiles the catalogue (spec/) into lua/, goimpl/ and the root package, or a user's spec into one package.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	t, err := target(*root, *specFile, *out, *pkg)
	if err == nil {
		err = t.load()
	}
	var stale []string
	if err == nil {
		stale, err = t.run(*check)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	for _, f := range stale {
		if *check {
			fmt.Println("stale:", f)
		} else {
			fmt.Println("wrote:", f)
		}
	}
	if *check && len(stale) > 0 {
		fmt.Fprintln(os.Stderr, "gen: stale generated files; run go generate ./... (or cmd/gen with the same flags)")
		os.Exit(1)
	}
}

// A compile is one spec and where its files go.
type compile struct {
	dir  string // the output's root on disk
	out  gen.Output
	load func() error
	sp   *gen.Spec
}

// target is the catalogue under root, or with specFile a user's spec.
func target(root, specFile, out, pkg string) (*compile, error) {
	if specFile == "" {
		if out != "" || pkg != "" {
			return nil, fmt.Errorf("-out and -package go with -spec")
		}
		c := &compile{dir: root, out: gen.CatalogueOutput()}
		c.load = func() (err error) {
			c.sp, err = gen.LoadCatalogue(os.DirFS(filepath.Join(root, "spec")))
			return err
		}
		return c, nil
	}
	if out == "" {
		return nil, fmt.Errorf("-spec needs -out, the package's directory")
	}
	if pkg == "" {
		abs, err := filepath.Abs(out)
		if err != nil {
			return nil, err
		}
		pkg = filepath.Base(abs)
	}
	c := &compile{dir: out, out: gen.PackageOutput(pkg)}
	c.load = func() error {
		src, err := os.ReadFile(specFile)
		if err != nil {
			return err
		}
		c.sp, err = gen.LoadUserSpec(pkg, filepath.ToSlash(specFile), src)
		return err
	}
	return c, nil
}

// run generates and returns the files written (or, with check, the
// files that would be).
func (c *compile) run(check bool) ([]string, error) {
	files, err := gen.Generate(c.sp, c.out)
	if err != nil {
		return nil, err
	}
	var changed []string
	for path, want := range files {
		full := filepath.Join(c.dir, path)
		have, err := os.ReadFile(full)
		if err == nil && bytes.Equal(have, want) {
			continue
		}
		changed = append(changed, path)
		if check {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, want, 0o644); err != nil {
			return nil, err
		}
	}
	removed, err := c.removeOrphans(files, check)
	if err != nil {
		return nil, err
	}
	changed = append(changed, removed...)
	sort.Strings(changed)
	return changed, nil
}

// removeOrphans removes (or, with check, lists) the generated files of
// the output's directories that Generate no longer produces.
func (c *compile) removeOrphans(files map[string][]byte, check bool) ([]string, error) {
	var removed []string
	for _, dir := range c.out.Dirs() {
		entries, err := os.ReadDir(filepath.Join(c.dir, dir))
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		for _, e := range entries {
			rel := filepath.ToSlash(filepath.Join(dir, e.Name()))
			if _, ok := files[rel]; ok || e.Type()&fs.ModeType != 0 {
				continue
			}
			content, err := os.ReadFile(filepath.Join(c.dir, rel))
			if err != nil || !c.out.IsGenerated(rel, content) {
				continue
			}
			removed = append(removed, rel+" (removed)")
			if !check {
				if err := os.Remove(filepath.Join(c.dir, rel)); err != nil {
					return nil, err
				}
			}
		}
	}
	return removed, nil
}
