package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/conformance"
	"github.com/limitspec/limitspec/gen"
	"github.com/limitspec/limitspec/kit"
)

// compileSpec compiles a user's spec file over the catalogue, in memory,
// as cmd/gen -spec FILE -package library would, and registers its Lua
// for the targets that run the scripts.
func compileSpec(file, library string) error {
	if library == "" {
		library = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	sp, err := gen.LoadUserSpec(library, filepath.ToSlash(file), src)
	if err != nil {
		return err
	}
	files, err := gen.Generate(sp, gen.PackageOutput(library))
	if err != nil {
		return err
	}
	lua := fstest.MapFS{}
	for path, b := range files {
		if rest, ok := strings.CutPrefix(path, "lua/"); ok {
			lua[rest] = &fstest.MapFile{Data: b}
		}
	}
	if err := conformance.RegisterScripts(lua); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	return nil
}

// unknownAlgorithms refuses vectors that name an algorithm of no spec
// linked in or given, with the way to run them.
func unknownAlgorithms(vectors []conformance.Vector) error {
	unknown := map[string]bool{}
	for _, v := range vectors {
		for _, a := range v.Algorithms() {
			if _, ok := kit.LookupScripts(limitspec.ParseAlgorithm(a)); !ok {
				unknown[a] = true
			}
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(unknown))
	lib, _, _ := strings.Cut(names[0], ".")
	return fmt.Errorf("the vectors name algorithms of no spec given: %s; give the spec that states them (-spec FILE -package %s), "+
		"or run them from a Go test of the package cmd/gen compiles (conformance.Test)", strings.Join(names, ", "), lib)
}
