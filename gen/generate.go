package gen

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"maps"
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
// Go in package goimpl, the scripts in lua/), or one package of a user's
// module holding all of a user's spec.
type Output struct {
	contract, kit goPackage // what generated code imports
	limits        goPackage // typed limits, their helpers, ready-made policies
	names         goPackage // the registration of the typed limits by name
	memory        goPackage // the decisions in Go
	lua           goPackage // the embedding and registration of the scripts
	luaDir        string    // the .lua files, library.lua and manifest.json
	vectorsTest   bool      // a test that replays the package's vectors
	runtimeToo    bool      // package exact and kit.Reply (emit_exact.go, emit_reply.go): the catalogue
}

const modulePath = "github.com/limitspec/limitspec"

// CatalogueOutput is the catalogue's layout, in this repository.
func CatalogueOutput() Output {
	root := goPackage{dir: "", name: "limitspec", path: modulePath}
	return Output{
		contract: root, limits: root,
		kit:    goPackage{dir: "kit", name: "kit", path: modulePath + "/kit"},
		memory: goPackage{dir: "goimpl", name: "goimpl", path: modulePath + "/goimpl"},
		names:  goPackage{dir: "policyfile", name: "policyfile", path: modulePath + "/policyfile"},
		lua:    goPackage{dir: "lua", name: "lua", path: modulePath + "/lua"},
		luaDir: "lua", runtimeToo: true,
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
		limits:   pkg, memory: pkg, lua: pkg, names: pkg,
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

// fileSet collects the generated files by path, and refuses a second
// file at one path: an algorithm or a view whose name makes another
// file's name (a view named reset, an algorithm named policy).
type fileSet struct {
	files map[string][]byte
	by    map[string]string // what wrote each file
}

// put adds the file at path, written for by.
func (f *fileSet) put(path, by string, b []byte) error {
	if other, ok := f.by[path]; ok {
		return fmt.Errorf("%s: its file %s is also %s's: rename it", by, path, other)
	}
	f.files[path], f.by[path] = b, by
	return nil
}

// Generate returns every generated file, by path relative to the output's
// root. It does no I/O and its output depends only on sp and o.
func Generate(sp *Spec, o Output) (map[string][]byte, error) {
	if err := checkReply(sp); err != nil {
		return nil, err
	}
	fs := &fileSet{files: map[string][]byte{}, by: map[string]string{}}
	if err := goFiles(sp, &o, fs); err != nil {
		return nil, err
	}
	// The files written last, from the others, have their paths taken
	// first.
	for path, by := range map[string]string{
		o.luaFile(policyScript): "the policy script", o.luaFile(policyResetScript): "the policy reset script",
		o.luaFile(holdsScript):   "the holds script",
		o.luaFile(libraryScript): "the Functions library", o.lua.file("scripts_gen.go"): "the scripts' registration",
	} {
		if err := fs.put(path, by, nil); err != nil {
			return nil, err
		}
	}
	algs := slices.Clone(sp.Algorithms)
	slices.SortFunc(algs, func(x, y *Algorithm) int { return strings.Compare(x.Name, y.Name) })
	codes := map[string]libFunc{} // each script's function in the library, by name
	for _, a := range algs {
		if err := algorithmFiles(sp, &o, a, fs, codes); err != nil {
			return nil, err
		}
	}
	files := fs.files
	for name, reset := range map[string]bool{policyScript: false, policyResetScript: true} {
		s := emitLuaPolicy(sp, reset)
		files[o.luaFile(name)], codes[name] = s.file, s.libFunction()
	}
	s := emitLuaHolds(sp)
	files[o.luaFile(holdsScript)], codes[holdsScript] = s.file, s.libFunction()
	files[o.luaFile(libraryScript)] = emitLuaLibrary(sp, &o, files, codes)
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

// algorithmFiles adds an algorithm's scripts (decision, reset, views)
// and its table for package goimpl.
func algorithmFiles(sp *Spec, o *Output, a *Algorithm, fs *fileSet, codes map[string]libFunc) error {
	by := fmt.Sprintf("%s: algorithm %s", a.Pos, a.Name)
	scripts := map[string]scriptParts{
		a.Name:               emitLua(sp, a, nil),
		luaResetName(a.Name): emitLuaReset(sp, a),
	}
	for _, v := range a.Views {
		name := luaScriptName(a, v)
		if _, dup := scripts[name]; dup {
			return fmt.Errorf("%s: its view %s's script %s is another of its scripts': rename the view", by, v.Name, name)
		}
		scripts[name] = emitLua(sp, a, v)
	}
	for _, name := range slices.Sorted(maps.Keys(scripts)) {
		if err := fs.put(o.luaFile(name), by, scripts[name].file); err != nil {
			return err
		}
		codes[name] = scripts[name].libFunction()
	}
	src, err := emitMemory(sp, a, o)
	if err != nil {
		return err
	}
	return fs.put(o.memory.file(a.Name+"_gen.go"), by, src)
}

// goFiles adds the typed limits, their helpers, the ready-made policies,
// their registration by name, the runtime's generated files (the
// catalogue's alone: an emitter returns nil for an output it does not
// write) and a user's vectors test.
func goFiles(sp *Spec, o *Output, fs *fileSet) error {
	type goFile struct {
		path, by string
		emit     func(*Spec, *Output) ([]byte, error)
	}
	files := []goFile{
		{o.limits.file("limits_gen.go"), "the typed limits", emitLimits},
		{o.limits.file("exact_gen.go"), "the typed limits", emitExactCopy},
		{o.limits.file("policies_gen.go"), "the typed limits", emitPolicies},
		{exactPackage.file("exact_gen.go"), "the runtime of generated code", emitExact},
		{o.kit.file("reply_gen.go"), "the runtime of generated code", emitReply},
	}
	if o.names.path != o.limits.path {
		files = append(files, goFile{o.names.file("limits_gen.go"), "the typed limits' registration", emitNames})
	}
	if o.memory.path != o.limits.path {
		files = append(files, goFile{o.memory.file("constants_gen.go"), "the spec's constants", emitMemoryConstants})
	}
	if o.vectorsTest {
		files = append(files, goFile{o.limits.file("vectors_gen_test.go"), "the vectors test", emitVectorsTest})
	}
	for _, f := range files {
		src, err := f.emit(sp, o)
		if err != nil {
			return err
		}
		if src == nil {
			continue
		}
		if err := fs.put(f.path, f.by, src); err != nil {
			return err
		}
	}
	return nil
}

// checkReply refuses a spec whose reply is not the one the policy script
// combines results by, by place (emit_lua_policy.go); kit.Reply is
// generated from the spec's reply (emit_reply.go).
func checkReply(sp *Spec) error {
	if got := replyNames(sp); got != policyReply {
		return fmt.Errorf("the reply fields are %s; every spec's must be %s", got, policyReply)
	}
	return nil
}

// policyReply is the reply the policy script combines results by: the
// fields by place.
const policyReply = "allowed, limit, remaining, retry_after_ms, reset_after_ms, delay_ms, tier"

// IsGenerated reports whether a file at path (relative to the output's
// root) was written by Generate for o (it says so in its head: another
// tool's generated file is not), so that cmd/gen can remove one the spec
// no longer produces.
func (o *Output) IsGenerated(file string, content []byte) bool {
	dir, base := pathDir(file), path.Base(file)
	inGoDir := slices.Contains(o.goDirs(), dir)
	switch {
	case dir == o.luaDir && (strings.HasSuffix(base, ".lua") || base == "manifest.json"),
		inGoDir && (strings.HasSuffix(base, "_gen.go") || strings.HasSuffix(base, "_gen_test.go")):
		return strings.Contains(string(content[:min(len(content), 300)]), "Code generated by cmd/gen from ")
	}
	return false
}

// goDirs are the directories of the Go packages Generate writes into.
func (o *Output) goDirs() []string {
	dirs := []string{o.limits.dir, o.memory.dir, o.lua.dir}
	if o.runtimeToo {
		dirs = append(dirs, exactPackage.dir, o.kit.dir)
	}
	return dirs
}

// Dirs are the directories Generate writes into.
func (o *Output) Dirs() []string {
	var out []string
	for _, d := range append(o.goDirs(), o.luaDir) {
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

func sha1Hex(b []byte) string {
	h := sha1.Sum(b)
	return hex.EncodeToString(h[:])
}
