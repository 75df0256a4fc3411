// Command gen compiles spec/algorithms.yaml and spec/policies.yaml into the Lua scripts of package
// lua and the Go limiters of package goimpl. It is the go:generate entry of
// the repository:
//
//	go generate ./...         (runs: go run ./cmd/gen)
//	go run ./cmd/gen -check   (exit 1 if a generated file is stale)
//
// It parses and checks the spec (errors name file and line), emits every
// file in memory, then writes only the files whose bytes changed and
// removes generated files the spec no longer produces.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/limitspec/limitspec/internal/gen"
)

func main() {
	root := flag.String("root", ".", "repository root: where spec/, lua/ and goimpl/ are")
	check := flag.Bool("check", false, "write nothing; exit 1 if any generated file differs from the spec")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./cmd/gen [-root DIR] [-check]\n\nGenerates lua/*.lua, lua/manifest.json, lua/scripts_gen.go and goimpl/*_gen.go from spec/algorithms.yaml.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	stale, err := run(*root, *check)
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
		fmt.Fprintln(os.Stderr, "gen: stale generated files; run go generate ./...")
		os.Exit(1)
	}
}

// run generates into root and returns the files written (or, with check,
// the files that would be).
func run(root string, check bool) ([]string, error) {
	sp, err := gen.LoadDir(filepath.Join(root, "spec"))
	if err != nil {
		return nil, err
	}
	files, err := gen.Generate(sp)
	if err != nil {
		return nil, err
	}
	var changed []string
	for path, want := range files {
		have, err := os.ReadFile(filepath.Join(root, path))
		if err == nil && bytes.Equal(have, want) {
			continue
		}
		changed = append(changed, path)
		if !check {
			if err := os.WriteFile(filepath.Join(root, path), want, 0o644); err != nil {
				return nil, err
			}
		}
	}
	for _, dir := range []string{"lua", "goimpl", "redisimpl"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if _, ok := files[rel]; ok {
				return nil
			}
			content, err := os.ReadFile(p)
			if err != nil || !gen.IsGenerated(rel, content) {
				return err
			}
			changed = append(changed, rel+" (removed)")
			if check {
				return nil
			}
			return os.Remove(p)
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(changed)
	return changed, nil
}
