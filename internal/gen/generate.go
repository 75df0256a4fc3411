package gen

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"
)

// goPackage is a Go package Generate writes into.
type goPackage struct {
	dir  string // relative to the output's root; "" is the root
	name string
	path string // its import path (a user's package: its directory)
}

// Output says where Generate writes each kind of file: the catalogue's
// split layout (the contract's typed limits at the root, the decisions in
// Go in package memory, the scripts in lua/), or one package of a user's
// module holding all of a user's spec.
type Output struct {
	contract, kit goPackage // what generated code imports
	limits        goPackage // typed limits, their helpers, ready-made policies
	memory        goPackage // the decisions in Go
	lua           goPackage // the embedding and registration of the scripts
	luaDir        string    // the .lua files, library.lua and manifest.json
	vectorsTest   bool      // a test that replays the package's vectors
}

const modulePath = "github.com/limitspec/limitspec"

// CatalogueOutput is the catalogue's layout, in this repository.
func CatalogueOutput() Output {
	root := goPackage{dir: "", name: "limitspec", path: modulePath}
	return Output{
		contract: root, limits: root,
		kit:    goPackage{dir: "kit", name: "kit", path: modulePath + "/kit"},
		memory: goPackage{dir: "memory", name: "memory", path: modulePath + "/memory"},
		lua:    goPackage{dir: "lua", name: "lua", path: modulePath + "/lua"},
		luaDir: "lua",
	}
}

// PackageOutput is the layout of a user's spec compiled into the package
// name: every path relative to the package's directory, the scripts under
// lua/, and a test that replays the vectors of testdata/vectors.
func PackageOutput(name string) Output {
	pkg := goPackage{dir: "", name: name, path: "."}
	return Output{
		contract: goPackage{name: "limitspec", path: modulePath},
		kit:      goPackage{name: "kit", path: modulePath + "/kit"},
		limits:   pkg, memory: pkg, lua: pkg,
		luaDir: "lua", vectorsTest: true,
	}
}

// qualifier is what code in package from writes before a name of package
// to: "" within one package, else to's name and a dot.
func (o *Output) qualifier(from, to goPackage) string {
	if from.path == to.path {
		return ""
	}
	return to.name + "."
}

// file is the path of a file of package p.
func (p goPackage) file(name string) string { return path.Join(p.dir, name) }

// luaFile is the path of a Lua script.
func (o *Output) luaFile(name string) string { return path.Join(o.luaDir, name+".lua") }

// reservedNames are the algorithm names whose Go file would be another
// generated file's.
var reservedNames = []string{"limits", "exact", "policies", "scripts", "vectors", "library", "manifest", policyScript, policyResetScript}

// Generate returns every generated file, by path relative to the output's
// root. It does no I/O and its output depends only on sp and o.
func Generate(sp *Spec, o Output) (map[string][]byte, error) {
	if err := checkReply(sp); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	algs := slices.Clone(sp.Algorithms)
	slices.SortFunc(algs, func(x, y *Algorithm) int { return strings.Compare(x.Name, y.Name) })
	for _, a := range algs {
		if slices.Contains(reservedNames, a.Name) {
			return nil, fmt.Errorf("%s: the name %s is reserved for a generated file (%v)", a.Pos, a.Name, reservedNames)
		}
		files[o.luaFile(a.Name)] = emitLua(sp, a, nil)
		files[o.luaFile(luaForceName(a.Name))] = emitLuaScript(sp, a, nil, true)
		files[o.luaFile(luaResetName(a.Name))] = emitLuaReset(sp, a)
		for _, v := range a.Views {
			files[o.luaFile(luaScriptName(a, v))] = emitLua(sp, a, v)
		}
		src, err := emitMemory(sp, a, &o)
		if err != nil {
			return nil, err
		}
		files[o.memory.file(a.Name+"_gen.go")] = src
	}
	files[o.luaFile(policyScript)] = emitLuaPolicy(sp, false)
	files[o.luaFile(policyResetScript)] = emitLuaPolicy(sp, true)
	if err := goFiles(sp, &o, files); err != nil {
		return nil, err
	}
	files[o.luaFile(libraryScript)] = emitLuaLibrary(sp, &o, files)
	man, err := emitManifest(sp, &o, algs, files)
	if err != nil {
		return nil, err
	}
	files[path.Join(o.luaDir, "manifest.json")] = man
	emb, err := emitLuaEmbed(sp, &o, algs, files)
	if err != nil {
		return nil, err
	}
	files[o.lua.file("scripts_gen.go")] = emb
	return files, nil
}

// goFiles adds the typed limits, their helpers, the ready-made policies
// and a user's vectors test.
func goFiles(sp *Spec, o *Output, files map[string][]byte) error {
	for name, emit := range map[string]func(*Spec, *Output) ([]byte, error){
		"limits_gen.go": emitLimits, "exact_gen.go": emitExact, "policies_gen.go": emitPolicies,
	} {
		src, err := emit(sp, o)
		if err != nil {
			return err
		}
		if src != nil {
			files[o.limits.file(name)] = src
		}
	}
	if o.vectorsTest {
		src, err := emitVectorsTest(sp, o)
		if err != nil {
			return err
		}
		files[o.limits.file("vectors_gen_test.go")] = src
	}
	return nil
}

// checkReply refuses a spec whose reply is not the one the policy script
// and package kit combine results by (kit.ReplyFields).
func checkReply(sp *Spec) error {
	if got := replyNames(sp); got != policyReply {
		return fmt.Errorf("the reply fields are %s; every spec's must be %s", got, policyReply)
	}
	return nil
}

// policyReply is the reply the policy script and kit.Reply combine
// results by: the fields by place.
const policyReply = "allowed, limit, remaining, retry_after_ms, reset_after_ms, delay_ms, tier"

// IsGenerated reports whether a file at path (relative to the output's
// root) was written by Generate for o, so that cmd/gen can remove one the
// spec no longer produces.
func (o *Output) IsGenerated(path string, content []byte) bool {
	dir, base := pathDir(path), pathBase(path)
	inGoDir := dir == o.limits.dir || dir == o.memory.dir || dir == o.lua.dir
	switch {
	case dir == o.luaDir && (strings.HasSuffix(base, ".lua") || base == "manifest.json"),
		inGoDir && (strings.HasSuffix(base, "_gen.go") || strings.HasSuffix(base, "_gen_test.go")):
		return strings.Contains(string(content[:min(len(content), 300)]), "DO NOT EDIT")
	}
	return false
}

// Dirs are the directories Generate writes into.
func (o *Output) Dirs() []string {
	var out []string
	for _, d := range []string{o.limits.dir, o.memory.dir, o.lua.dir, o.luaDir} {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func pathDir(p string) string {
	d := path.Dir(p)
	if d == "." {
		return ""
	}
	return d
}

func pathBase(p string) string { return path.Base(p) }

func sha1Hex(b []byte) string {
	h := sha1.Sum(b)
	return hex.EncodeToString(h[:])
}
