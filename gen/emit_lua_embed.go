package gen

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// emitLuaEmbed returns the Go file that embeds a spec's scripts and
// registers them for package redislimit (kit.RegisterScripts and
// kit.RegisterLibrary): package lua for the catalogue, the user's package
// for a user's spec.
func emitLuaEmbed(sp *Spec, o *Output, algs []*Algorithm, files map[string][]byte) ([]byte, error) {
	var w writer
	goFileHeader(&w, sp.Source, o.lua.name)
	goImports(&w, []string{"_ embed", pick(slices.ContainsFunc(algs, hasDuration), "time", "")},
		o.contract.path, pick(picksDefault(algs), exactPackage.path, ""), o.kit.path,
		pick(o.limits.path != o.lua.path && o.limits.path != o.contract.path, o.limits.path, ""))
	w.line("")
	for _, n := range append(libraryScripts(o, files), libraryScript) {
		w.line("//go:embed %s", embedPath(o, n+".lua"))
		w.line("var %s string", sourceVar(n))
		w.line("")
	}
	scripts := goName(sp.Library + "_scripts")
	w.line("// %s are the scripts of each algorithm, as kit.RegisterScripts takes them.", scripts)
	w.line("var %s = []*kit.Scripts{", scripts)
	for _, a := range algs {
		luaRegisterScripts(&w, sp, o, a, files)
	}
	w.line("}")
	w.line("")
	w.line("func init() {")
	luaRegisterLibrary(&w, sp, o, files)
	w.line("for _, s := range %s {", scripts)
	w.line("kit.RegisterScripts(s)")
	w.line("}")
	w.line("}")
	for _, a := range algs {
		w.line("")
		w.line("// %s returns a %s limit's parameters as its scripts take them.", scriptArgs(a), a.Name)
		w.line("func %s(lim limitspec.Limit) ([]int64, error) {", scriptArgs(a))
		limitOf(&w, a, o.qualifier(o.lua, o.limits)+goType(a), "nil, ")
		var vals []string
		for _, p := range a.Params {
			vals = append(vals, wireValue(p, "l"))
		}
		w.line("return []int64{%s}, nil", strings.Join(vals, ", "))
		w.line("}")
	}
	return formatGo(w, "the scripts' embedding")
}

// embedPath is the path go:embed takes for a file of the Lua directory,
// from the embedding package's directory.
func embedPath(o *Output, name string) string {
	dir := o.luaDir
	if o.lua.dir != "" {
		dir = strings.TrimPrefix(strings.TrimPrefix(dir, o.lua.dir), "/")
	}
	return path.Join(dir, name)
}

// sourceVar is the variable holding a script's text.
func sourceVar(script string) string { return goName(script) + "Source" }

// scriptArgs is the function giving an algorithm's script parameters.
func scriptArgs(a *Algorithm) string { return goName(a.Name) + "ScriptArgs" }

// luaScript is the kit.Script literal of the named script.
func luaScript(o *Output, name string, files map[string][]byte) string {
	return fmt.Sprintf("kit.Script{Name: %q, Source: %s, SHA1: %q}", name, sourceVar(name), sha1Hex(files[o.luaFile(name)]))
}

// luaRegisterLibrary registers the spec's library and policy scripts.
func luaRegisterLibrary(w *writer, sp *Spec, o *Output, files map[string][]byte) {
	var algs []string
	for _, a := range sp.InScope() {
		algs = append(algs, fmt.Sprintf("{Library: %q, Name: %q}", a.Library, a.Name))
	}
	w.line("kit.RegisterLibrary(&kit.Library{")
	w.line("Name: %q, Version: %q, Source: %s,", sp.Library, libraryVersion(o, files), sourceVar(libraryScript))
	w.line("Policy: %s,", luaScript(o, policyScript, files))
	w.line("PolicyReset: %s,", luaScript(o, policyResetScript, files))
	w.line("Holds: %s,", luaScript(o, holdsScript, files))
	w.line("Algorithms: []limitspec.Algorithm{%s},", strings.Join(algs, ", "))
	w.line("})")
}

// luaRegisterScripts states the scripts of one algorithm, an element of
// the slice scripts.
func luaRegisterScripts(w *writer, sp *Spec, o *Output, a *Algorithm, files map[string][]byte) {
	var keys, inputs, params, views []string
	for _, s := range a.States {
		keys = append(keys, fmt.Sprintf("%q", strings.TrimPrefix(keyTemplate(s), "{<key>}")))
	}
	for _, in := range a.Strings {
		inputs = append(inputs, fmt.Sprintf("%q", in.Name))
	}
	for _, p := range a.Params {
		if p.Default != nil {
			params = append(params, fmt.Sprintf("{Name: %q, Default: \"%d\"}", p.Name, *p.Default))
		} else {
			params = append(params, fmt.Sprintf("{Name: %q}", p.Name))
		}
	}
	for _, v := range a.Views {
		var returns []string
		for _, f := range viewShow(v).Fields {
			returns = append(returns, fmt.Sprintf("%q", f.Name))
		}
		views = append(views, fmt.Sprintf("{Name: %q, Script: %s, Returns: []string{%s}}", v.Name, luaScript(o, luaScriptName(a, v), files), strings.Join(returns, ", ")))
	}
	w.line("{")
	w.line("ID: limitspec.Algorithm{Library: %q, Name: %q}, Library: %q,", sp.Library, a.Name, sp.Library)
	w.line("Decide: %s,", luaScript(o, a.Name, files))
	w.line("Reset: %s,", luaScript(o, luaResetName(a.Name), files))
	w.line("Views: []kit.View{%s},", strings.Join(views, ", "))
	w.line("Keys: []string{%s},", strings.Join(keys, ", "))
	w.line("Inputs: []string{%s},", strings.Join(inputs, ", "))
	w.line("Params: []kit.Param{%s},", strings.Join(params, ", "))
	w.line("Args: %s,", scriptArgs(a))
	w.line("},")
}
