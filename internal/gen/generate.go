package gen

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/format"
	"sort"
	"strings"
)

// Generate returns every generated file, by path relative to the
// repository root. It does no I/O and its output depends only on sp.
func Generate(sp *Spec) (map[string][]byte, error) {
	files := map[string][]byte{}
	algs := append([]*Algorithm(nil), sp.Algorithms...)
	sort.Slice(algs, func(i, j int) bool { return algs[i].Name < algs[j].Name })
	for _, a := range algs {
		files["lua/"+a.Name+".lua"] = emitLua(sp, a, nil)
		files["lua/"+luaForceName(a.Name)+".lua"] = emitLuaScript(sp, a, nil, true)
		files["lua/"+luaResetName(a.Name)+".lua"] = emitLuaReset(a)
		for _, v := range a.Views {
			files["lua/"+luaScriptName(a, v)+".lua"] = emitLua(sp, a, v)
		}
		src, err := emitGo(sp, a)
		if err != nil {
			return nil, err
		}
		files["goimpl/"+a.Name+"_gen.go"] = src
	}
	if len(sp.Policies) > 0 && replyNames(sp) != policyReply {
		return nil, fmt.Errorf("policies combine the reply fields %s; the spec's are %s", policyReply, replyNames(sp))
	}
	for _, p := range sp.Policies {
		files["lua/"+p.Name+".lua"] = emitLuaPolicy(sp, p, false)
		files["lua/"+luaForceName(p.Name)+".lua"] = emitLuaPolicy(sp, p, true)
		files["lua/"+luaResetName(p.Name)+".lua"] = emitLuaPolicyReset(p)
	}
	res, err := emitGoResult(sp)
	if err != nil {
		return nil, err
	}
	files["goimpl/result_gen.go"] = res
	pol, err := emitGoPolicies(sp)
	if err != nil {
		return nil, err
	}
	files["goimpl/policies_gen.go"] = pol
	rimpl, err := emitRedisimpl(sp, algs)
	if err != nil {
		return nil, err
	}
	files["redisimpl/limiters_gen.go"] = rimpl
	files["lua/"+libraryFile] = emitLuaLibrary(sp, files)
	man, err := emitManifest(sp, algs, files)
	if err != nil {
		return nil, err
	}
	files["lua/manifest.json"] = man
	emb, err := emitLuaEmbed(sp, algs, files)
	if err != nil {
		return nil, err
	}
	files["lua/scripts_gen.go"] = emb
	return files, nil
}

// IsGenerated reports whether a file at path was written by Generate, so
// that cmd/gen can remove one an algorithm no longer produces.
func IsGenerated(path string, content []byte) bool {
	switch {
	case strings.HasPrefix(path, "lua/") && strings.HasSuffix(path, ".lua"),
		strings.HasPrefix(path, "goimpl/") && strings.HasSuffix(path, "_gen.go"),
		strings.HasPrefix(path, "redisimpl/") && strings.HasSuffix(path, "_gen.go"):
		return strings.Contains(string(content[:min(len(content), 200)]), "DO NOT EDIT")
	}
	return false
}

// policyReply is the reply a policy's script combines its limits' by
// (luaPolicyDecide, goimpl's Policy): the fields by place.
const policyReply = "allowed, limit, remaining, retry_after_ms, reset_after_ms, delay_ms, tier"

func sha1Hex(b []byte) string {
	h := sha1.Sum(b)
	return hex.EncodeToString(h[:])
}

// manifest is lua/manifest.json: the interface of every script, for
// clients in any language.
type manifest struct {
	Comment string `json:"comment"`
	// MaxSkewMs is how far a key's clock may be ahead of now_ms and still
	// be trusted (docs/semantics.md).
	MaxSkewMs int64             `json:"max_skew_ms"`
	Inputs    []manifestArg     `json:"inputs"`
	Reply     []manifestReply   `json:"reply"`
	Errors    map[string]string `json:"errors"`
	Scripts   []manifestScript  `json:"scripts"`
	Policies  []manifestPolicy  `json:"policies"`
	Library   manifestLibrary   `json:"library"`
}

// manifestLibrary describes the Redis Functions library of every script.
type manifestLibrary struct {
	Name string `json:"name"`
	File string `json:"file"`
	// Version is what the function <name>_version replies: a digest of
	// the scripts, to tell whether a loaded library is this one.
	Version string `json:"version"`
	// Functions are the functions, <name>_<script>, with the script's
	// KEYS, ARGV and reply.
	Functions []string `json:"functions"`
}

// manifestPolicy describes a policy's script (docs/semantics.md,
// "Policies").
type manifestPolicy struct {
	Name string `json:"name"`
	File string `json:"file"`
	SHA1 string `json:"sha1"`
	Doc  string `json:"doc"`
	// ClusterSafe is false when the keys of one call may lie in several
	// Redis Cluster slots: the limits count several identities.
	ClusterSafe bool `json:"cluster_safe"`
	// Identities are the names whose values a call passes, in the order
	// their keys first appear in KEYS.
	Identities []string        `json:"identities"`
	Limits     []manifestLimit `json:"limits"`
	Keys       []string        `json:"keys"`
	Argv       []manifestArg   `json:"argv"`
	// Reply names the integers of the reply: the policy's result, the
	// binding limit's index, then each limit's result.
	Reply []string `json:"reply"`
	// Reset deletes every limit's keys for the identities of a call.
	Reset *manifestFile `json:"reset"`
	// Force is the forced call: the same KEYS and ARGV; every limit
	// consumes the cost even when the policy denies.
	Force *manifestFile `json:"force"`
}

type manifestLimit struct {
	Name      string           `json:"name"`
	Algorithm string           `json:"algorithm"`
	Identity  string           `json:"identity,omitempty"`
	Constant  string           `json:"constant,omitempty"`
	Params    map[string]int64 `json:"params"`   // the fixed ones
	PerCall   []string         `json:"per_call"` // ARGV names of the others
	Keys      []string         `json:"keys"`
}

type manifestArg struct {
	Name    string `json:"name"`
	Type    string `json:"type,omitempty"` // "string"; integers otherwise
	Min     int64  `json:"min"`
	Max     int64  `json:"max"` // for a string: its most bytes
	Default *int64 `json:"default,omitempty"`
	Doc     string `json:"doc,omitempty"`
}

type manifestReply struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Doc  string `json:"doc"`
}

type manifestKey struct {
	Template   string          `json:"template"`
	Type       string          `json:"type"`
	Doc        string          `json:"doc"`
	Fields     []manifestField `json:"fields,omitempty"`
	Entries    string          `json:"entries,omitempty"` // how entries are stored
	MaxEntries string          `json:"max_entries,omitempty"`
	Entry      []manifestField `json:"entry,omitempty"`
}

type manifestField struct {
	Name string `json:"name"`
	Type string `json:"type,omitempty"` // "string"; integers otherwise
	Min  string `json:"min,omitempty"`
	Max  string `json:"max,omitempty"`
	Doc  string `json:"doc"`
}

type manifestScript struct {
	Name      string        `json:"name"`
	Algorithm string        `json:"algorithm"`
	View      string        `json:"view,omitempty"` // a read-only view; "" for the decision
	File      string        `json:"file"`
	SHA1      string        `json:"sha1"`
	Doc       string        `json:"doc"`
	Keys      []manifestKey `json:"keys"`
	Argv      []manifestArg `json:"argv"`
	Requires  []string      `json:"requires"`
	// Window is the decision's window in ms, an expression over the
	// parameters (Algorithm.Window); "" for a view or when none.
	Window string `json:"window,omitempty"`
	// Returns names the fields of each entry a view returns.
	Returns []string `json:"returns,omitempty"`
	// Reset is the decision's reset script: the same KEYS, no ARGV.
	Reset *manifestFile `json:"reset,omitempty"`
	// Force is the decision's forced call: the same KEYS and ARGV; it
	// consumes the cost even when it denies.
	Force *manifestFile `json:"force,omitempty"`
}

// manifestFile names a script that goes with a decision (its reset, its
// forced call) and its SHA1.
type manifestFile struct {
	File string `json:"file"`
	SHA1 string `json:"sha1"`
}

func fileOf(name string, files map[string][]byte) *manifestFile {
	file := name + ".lua"
	return &manifestFile{File: file, SHA1: sha1Hex(files["lua/"+file])}
}

func emitManifest(sp *Spec, algs []*Algorithm, files map[string][]byte) ([]byte, error) {
	m := manifest{
		Comment:   "Code generated by cmd/gen from spec/algorithms.yaml. DO NOT EDIT.",
		MaxSkewMs: sp.MaxSkew,
		Errors: map[string]string{
			"BADINPUT":  "the number of arguments, a parameter, the key, now_ms, cost or a string input was refused; nothing was written",
			"BADSTATE":  "a stored field is not an integer the script could have written; nothing was written",
			"WRONGTYPE": "a key holds another Redis type; nothing was written",
		},
	}
	for _, in := range sp.Inputs {
		m.Inputs = append(m.Inputs, manifestArg{Name: in.Arg, Min: in.Min, Max: in.Max, Doc: inputDoc(in)})
	}
	for _, f := range sp.Reply {
		m.Reply = append(m.Reply, manifestReply{Name: f.Name, Type: f.Type.String(), Doc: f.Doc})
	}
	for _, a := range algs {
		m.Scripts = append(m.Scripts, manifestOf(sp, a, nil, files))
		for _, v := range a.Views {
			m.Scripts = append(m.Scripts, manifestOf(sp, a, v, files))
		}
	}
	m.Policies = []manifestPolicy{}
	for _, p := range sp.Policies {
		m.Policies = append(m.Policies, manifestPolicyOf(sp, p, files))
	}
	m.Library = manifestLibrary{Name: LibraryName, File: libraryFile, Version: libraryVersion(files)}
	for _, n := range libraryScripts(files) {
		m.Library.Functions = append(m.Library.Functions, libraryFunction(n))
	}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// manifestOf describes the script of an algorithm, or of one view.
func manifestOf(sp *Spec, a *Algorithm, v *View, files map[string][]byte) manifestScript {
	name := luaScriptName(a, v)
	file := name + ".lua"
	s := manifestScript{Name: name, Algorithm: a.Name, File: file, SHA1: sha1Hex(files["lua/"+file]), Doc: a.Doc, Requires: []string{}}
	if v == nil {
		s.Reset = fileOf(luaResetName(a.Name), files)
		s.Force = fileOf(luaForceName(a.Name), files)
		if a.Window != nil {
			s.Window = Format(a.Window)
		}
	}
	if v != nil {
		s.View, s.Doc = v.Name, v.Doc
		for _, f := range showState(v).Entry {
			s.Returns = append(s.Returns, f.Name)
		}
	}
	field := func(f *Field) manifestField {
		if f.Type == Str {
			return manifestField{Name: f.Name, Type: "string", Doc: f.Doc}
		}
		return manifestField{Name: f.Name, Min: Format(f.Min), Max: Format(f.Max), Doc: f.Doc}
	}
	for _, st := range a.States {
		k := manifestKey{Template: keyTemplate(st), Type: st.Kind.String(), Doc: st.Doc}
		for _, f := range st.Fields {
			k.Fields = append(k.Fields, field(f))
		}
		if st.Collection() {
			k.Entries = strings.TrimSuffix(entryLayout(st), ":")
			k.MaxEntries = Format(st.MaxEntries)
			for _, f := range st.Entry {
				k.Entry = append(k.Entry, field(f))
			}
		}
		s.Keys = append(s.Keys, k)
	}
	ints, strs, _ := luaArgs(sp, a, v)
	for _, in := range ints {
		s.Argv = append(s.Argv, manifestArg{Name: in.Arg, Min: in.Min, Max: in.Max, Doc: inputDoc(in)})
	}
	for _, in := range strs {
		s.Argv = append(s.Argv, manifestArg{Name: in.Name, Type: "string", Max: int64(in.MaxLen), Doc: in.Doc})
	}
	for _, p := range a.Params {
		s.Argv = append(s.Argv, manifestArg{Name: p.Name, Min: p.Min, Max: p.Max, Default: p.Default, Doc: p.Doc})
	}
	for _, r := range a.Requires {
		s.Requires = append(s.Requires, Format(r.Cond))
	}
	return s
}

// manifestPolicyOf describes the script of a policy.
func manifestPolicyOf(sp *Spec, p *Policy, files map[string][]byte) manifestPolicy {
	file := p.Name + ".lua"
	m := manifestPolicy{Name: p.Name, File: file, SHA1: sha1Hex(files["lua/"+file]), Doc: p.Doc,
		ClusterSafe: p.ClusterSafe(), Identities: append([]string{}, p.Identities...)}
	for _, in := range sp.Inputs {
		m.Argv = append(m.Argv, manifestArg{Name: in.Arg, Min: in.Min, Max: in.Max, Doc: inputDoc(in)})
	}
	for _, l := range p.Limits {
		ml := manifestLimit{Name: l.Name, Algorithm: l.Alg.Name, Identity: l.Identity, Constant: l.Constant, Params: l.Fixed, PerCall: []string{}}
		for _, prm := range l.PerCall() {
			ml.PerCall = append(ml.PerCall, ArgName(l, prm))
			m.Argv = append(m.Argv, manifestArg{Name: ArgName(l, prm), Min: prm.Min, Max: prm.Max, Doc: prm.Doc})
		}
		for _, s := range l.Alg.States {
			ml.Keys = append(ml.Keys, policyKeyTemplate(p, l, s))
		}
		m.Keys = append(m.Keys, ml.Keys...)
		m.Limits = append(m.Limits, ml)
	}
	m.Reply = policyReplyNames(sp, p)
	m.Reset = fileOf(luaResetName(p.Name), files)
	m.Force = fileOf(luaForceName(p.Name), files)
	return m
}

// policyReplyNames names the integers of a policy's reply.
func policyReplyNames(sp *Spec, p *Policy) []string {
	var out []string
	for _, f := range sp.Reply {
		out = append(out, f.Name)
	}
	out = append(out, "index")
	for _, l := range p.Limits {
		for _, f := range sp.Reply {
			out = append(out, l.Name+"."+f.Name)
		}
	}
	return out
}

// inputDoc describes a per-call integer input for the manifest and the
// scripts' headers.
func inputDoc(in *Input) string {
	if in.Name == "now" {
		return "ms since the epoch; an empty string decides at the Redis server's TIME"
	}
	return "integer; 0 is a peek"
}

func emitLuaEmbed(sp *Spec, algs []*Algorithm, files map[string][]byte) ([]byte, error) {
	var w writer
	w.line("// Code generated by cmd/gen from spec/algorithms.yaml. DO NOT EDIT.")
	w.line("")
	w.line("package lua")
	w.line("")
	w.line("import _ \"embed\"")
	w.line("")
	type script struct {
		a *Algorithm
		v *View
	}
	var scripts []script
	for _, a := range algs {
		scripts = append(scripts, script{a, nil})
		embedSource(&w, a.Name, luaResetName(a.Name), luaForceName(a.Name))
		for _, v := range a.Views {
			scripts = append(scripts, script{a, v})
			embedSource(&w, luaScriptName(a, v))
		}
	}
	w.line("// Scripts lists every generated script, sorted by name.")
	w.line("var Scripts = []Script{")
	for _, sc := range scripts {
		w.line("%s,", scriptLiteral(sp, sc.a, sc.v, files))
	}
	w.line("}")
	emitLuaEmbedPolicies(&w, sp, files)
	emitLuaEmbedLibrary(&w, files)
	return format.Source(w.bytes())
}

// embedSource embeds the named scripts, each as <name>Source.
func embedSource(w *writer, names ...string) {
	for _, n := range names {
		w.line("//go:embed %s.lua", n)
		w.line("var %sSource string", goName(n))
		w.line("")
	}
}

// scriptLiteral is the lua.Script of an algorithm's decision (v nil) or
// of one of its views.
func scriptLiteral(sp *Spec, a *Algorithm, v *View, files map[string][]byte) string {
	name := luaScriptName(a, v)
	var keys, params, strs, defaults, returns []string
	for _, s := range a.States {
		keys = append(keys, fmt.Sprintf("%q", strings.TrimPrefix(keyTemplate(s), "{<key>}")))
	}
	for _, p := range a.Params {
		params = append(params, fmt.Sprintf("%q", p.Name))
		if p.Default != nil {
			defaults = append(defaults, fmt.Sprintf("%q: \"%d\"", p.Name, *p.Default))
		}
	}
	_, ss, _ := luaArgs(sp, a, v)
	for _, in := range ss {
		strs = append(strs, fmt.Sprintf("%q", in.Name))
	}
	view, companions := "", ""
	if v == nil {
		for _, f := range sp.Reply {
			returns = append(returns, fmt.Sprintf("%q", f.Name))
		}
		rn, fn := luaResetName(name), luaForceName(name)
		companions = fmt.Sprintf(" ResetSource: %sSource, ResetSHA1: %q, ForceSource: %sSource, ForceSHA1: %q,",
			goName(rn), sha1Hex(files["lua/"+rn+".lua"]), goName(fn), sha1Hex(files["lua/"+fn+".lua"]))
	} else {
		view = v.Name
		for _, f := range showState(v).Entry {
			returns = append(returns, fmt.Sprintf("%q", f.Name))
		}
	}
	return fmt.Sprintf("{Name: %q, Algorithm: %q, View: %q, Source: %sSource, SHA1: %q,%s Keys: []string{%s}, Strings: []string{%s}, Params: []string{%s}, Defaults: map[string]string{%s}, Reply: []string{%s}}",
		name, a.Name, view, goName(name), sha1Hex(files["lua/"+name+".lua"]), companions, strings.Join(keys, ", "), strings.Join(strs, ", "), strings.Join(params, ", "), strings.Join(defaults, ", "), strings.Join(returns, ", "))
}

// emitLuaEmbedLibrary embeds the Functions library and names its parts.
func emitLuaEmbedLibrary(w *writer, files map[string][]byte) {
	w.line("")
	w.line("// LibrarySource is the Redis Functions library of every script")
	w.line("// (FUNCTION LOAD); see FunctionName.")
	w.line("//")
	w.line("//go:embed %s", libraryFile)
	w.line("var LibrarySource string")
	w.line("")
	w.line("// LibraryVersion is what the library's VersionFunction replies.")
	w.line("const LibraryVersion = %q", libraryVersion(files))
	w.line("")
	w.line("// LibraryName is the name of the Redis Functions library, LibrarySource;")
	w.line("// VersionFunction replies with its version.")
	w.line("const (")
	w.line("LibraryName = %q", LibraryName)
	w.line("VersionFunction = %q", libraryFunction("version"))
	w.line("functionPrefix = %q", libraryFunction(""))
	w.line(")")
	w.line("")
	w.line("// The suffixes of the scripts that go with a decision: lua/<name><suffix>.lua.")
	w.line("const (")
	w.line("forceSuffix = %q", forceSuffix)
	w.line("resetSuffix = %q", resetSuffix)
	w.line(")")
}

// emitLuaEmbedPolicies lists the policies' scripts in package lua.
func emitLuaEmbedPolicies(w *writer, sp *Spec, files map[string][]byte) {
	w.line("")
	for _, p := range sp.Policies {
		embedSource(w, p.Name, luaResetName(p.Name), luaForceName(p.Name))
	}
	w.line("// Policies lists every generated policy script, in the spec's order.")
	w.line("var Policies = []Policy{")
	for _, p := range sp.Policies {
		var ids, params, limits []string
		for _, id := range p.Identities {
			ids = append(ids, fmt.Sprintf("%q", id))
		}
		for _, l := range p.Limits {
			var keys []string
			for _, s := range l.Alg.States {
				keys = append(keys, fmt.Sprintf("%q", p.KeyInfix(l)+policyKeySuffix(l, s)))
			}
			var fixed, perCall []string
			for _, prm := range l.Alg.Params {
				if v, ok := l.Fixed[prm.Name]; ok {
					fixed = append(fixed, fmt.Sprintf("%q: %d", prm.Name, v))
				} else {
					perCall = append(perCall, fmt.Sprintf("%q", prm.Name))
					params = append(params, fmt.Sprintf("%q", ArgName(l, prm)))
				}
			}
			limits = append(limits, fmt.Sprintf("{Name: %q, Algorithm: %q, Identity: %q, Constant: %q, Params: map[string]int64{%s}, PerCall: []string{%s}, Keys: []string{%s}}",
				l.Name, l.Alg.Name, l.Identity, l.Constant, strings.Join(fixed, ", "), strings.Join(perCall, ", "), strings.Join(keys, ", ")))
		}
		rn, fn := luaResetName(p.Name), luaForceName(p.Name)
		w.line("{Name: %q, Source: %sSource, SHA1: %q, ResetSource: %sSource, ResetSHA1: %q, ForceSource: %sSource, ForceSHA1: %q, ClusterSafe: %v, Identities: []string{%s}, Params: []string{%s}, Limits: []PolicyLimit{%s}},",
			p.Name, goName(p.Name), sha1Hex(files["lua/"+p.Name+".lua"]), goName(rn), sha1Hex(files["lua/"+rn+".lua"]), goName(fn), sha1Hex(files["lua/"+fn+".lua"]), p.ClusterSafe(), strings.Join(ids, ", "), strings.Join(params, ", "), strings.Join(limits, ", "))
	}
	w.line("}")
}
