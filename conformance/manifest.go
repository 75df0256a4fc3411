package conformance

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/kit"
)

// RegisterScripts registers the Lua of a compiled spec, for the targets
// that run the scripts (gopher-lua, miniredis, Redis, a Cluster): fsys
// holds the lua/ directory cmd/gen writes (manifest.json and the scripts
// it names), on disk or as gen.Generate returns it. It lets cmd/verify
// -spec run a user's algorithms without compiling Go; their typed limits
// exist only in the package cmd/gen compiles, so the targets of Go
// limiters skip such vectors (ErrNotApplicable). Registering the same
// library again does nothing; another library of the same name (linked
// in, or another spec) is refused.
func RegisterScripts(fsys fs.FS) error {
	raw, err := fs.ReadFile(fsys, "manifest.json")
	if err != nil {
		return err
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("manifest.json: %v", err)
	}
	if lib, ok := kit.LookupLibrary(m.Library.Name); ok {
		if lib.Version == m.Library.Version {
			return nil
		}
		return fmt.Errorf("another library named %s is registered (version %s, this one %s): give the spec another package name",
			m.Library.Name, lib.Version, m.Library.Version)
	}
	lib, scripts, err := m.registrations(fsys)
	if err != nil {
		return err
	}
	kit.RegisterLibrary(lib)
	for _, s := range scripts {
		kit.RegisterScripts(s)
	}
	return nil
}

// manifest is what RegisterScripts reads of manifest.json (docs/protocol.md).
type manifest struct {
	Scripts []manifestScript `json:"scripts"`
	Policy  struct {
		File, SHA1 string
		Algorithms []string
		Reset      manifestFile
		Holds      manifestFile
	} `json:"policy"`
	Library struct {
		Name, File, Version string
	} `json:"library"`
}

type manifestFile struct{ File, SHA1 string }

type manifestScript struct {
	Name, Algorithm, View, File, SHA1 string
	Keys                              []struct{ Template string }
	Argv                              []struct {
		Name, Type string
		Default    *json.Number
	}
	Returns []string
	Reset   manifestFile
}

// registrations are the library and the algorithms' scripts m names,
// their sources read from fsys.
func (m *manifest) registrations(fsys fs.FS) (*kit.Library, []*kit.Scripts, error) {
	read := func(name string, f manifestFile) (kit.Script, error) {
		src, err := fs.ReadFile(fsys, f.File)
		return kit.Script{Name: name, Source: string(src), SHA1: f.SHA1}, err
	}
	lib := &kit.Library{Name: m.Library.Name, Version: m.Library.Version}
	src, err := fs.ReadFile(fsys, m.Library.File)
	if err != nil {
		return nil, nil, err
	}
	lib.Source = string(src)
	if lib.Policy, err = read("policy", manifestFile{m.Policy.File, m.Policy.SHA1}); err != nil {
		return nil, nil, err
	}
	if lib.PolicyReset, err = read("policy_reset", m.Policy.Reset); err != nil {
		return nil, nil, err
	}
	if lib.Holds, err = read("holds", m.Policy.Holds); err != nil {
		return nil, nil, err
	}
	for _, a := range m.Policy.Algorithms {
		lib.Algorithms = append(lib.Algorithms, limitspec.ParseAlgorithm(a))
	}
	byAlg := map[string]*kit.Scripts{}
	var out []*kit.Scripts
	for _, s := range m.Scripts {
		if s.View != "" {
			continue
		}
		sc, err := s.scripts(lib.Name, read)
		if err != nil {
			return nil, nil, err
		}
		if sc.ID.Library == lib.Name {
			byAlg[s.Algorithm], out = sc, append(out, sc)
		}
	}
	for _, s := range m.Scripts {
		if sc := byAlg[s.Algorithm]; s.View != "" && sc != nil {
			script, err := read(s.Name, manifestFile{s.File, s.SHA1})
			if err != nil {
				return nil, nil, err
			}
			sc.Views = append(sc.Views, kit.View{Name: s.View, Script: script, Returns: s.Returns})
		}
	}
	return lib, out, nil
}

// scripts are the decision's and the reset's scripts of s and their
// calling convention: the keys' suffixes after "{<key>}", the string
// inputs and the parameters after now_ms, cost and force.
func (s *manifestScript) scripts(library string, read func(string, manifestFile) (kit.Script, error)) (*kit.Scripts, error) {
	sc := &kit.Scripts{ID: limitspec.ParseAlgorithm(s.Algorithm), Library: library, Views: []kit.View{}, Inputs: []string{}}
	var err error
	if sc.Decide, err = read(s.Name, manifestFile{s.File, s.SHA1}); err != nil {
		return nil, err
	}
	if sc.Reset, err = read(strings.TrimSuffix(path.Base(s.Reset.File), ".lua"), s.Reset); err != nil {
		return nil, err
	}
	for _, k := range s.Keys {
		suffix, ok := strings.CutPrefix(k.Template, "{<key>}")
		if !ok {
			return nil, fmt.Errorf("%s: key %q does not begin with {<key>}", s.Name, k.Template)
		}
		sc.Keys = append(sc.Keys, suffix)
	}
	if len(s.Argv) < 3 {
		return nil, fmt.Errorf("%s: %d arguments; a decision takes now_ms, cost and force first", s.Name, len(s.Argv))
	}
	for _, a := range s.Argv[3:] {
		switch {
		case a.Type == "string":
			sc.Inputs = append(sc.Inputs, a.Name)
		case a.Default != nil:
			sc.Params = append(sc.Params, kit.Param{Name: a.Name, Default: a.Default.String()})
		default:
			sc.Params = append(sc.Params, kit.Param{Name: a.Name})
		}
	}
	return sc, nil
}
