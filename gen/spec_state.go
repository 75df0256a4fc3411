// The section of an algorithm of the spec that declares its state: its
// keys, their Redis types, their fixed fields and entries.

package gen

import (
	"fmt"
	"slices"
	"strings"
)

// states reads an algorithm's state keys; at is the position of an item
// of its lists.
func (l *loader) states(a *Algorithm, yss []yamlState, at func(string, int) Pos) {
	suffixes := map[string]bool{}
	for j, ys := range yss {
		pos := at("state", j)
		s := &State{Name: ys.Name, Doc: strings.TrimSpace(ys.Doc), Pos: pos}
		switch {
		case !nameRE.MatchString(s.Name):
			l.errf(pos, "%s: state %q: names are lower_case", a.Name, s.Name)
		case suffixes[ys.Key]:
			l.errf(pos, "%s: state %s: key %q is used twice", a.Name, s.Name, ys.Key)
		default:
			suffixes[ys.Key] = true
			l.keyParts(a, s, ys.Key, pos)
		}
		l.stateKind(a, s, ys, pos)
		if len(ys.Entry) > 0 {
			l.entries(a, s, ys, pos)
		} else if ys.MaxEntries.Kind != 0 || ys.Merge != "" {
			l.errf(pos, "%s: state %s: max_entries and merge need entries", a.Name, s.Name)
		}
		a.States = append(a.States, s)
		l.fields(a, s, ys.Fields, pos)
	}
}

// stateKind reads a state's Redis type and refuses fields or entries it
// cannot hold.
func (l *loader) stateKind(a *Algorithm, s *State, ys yamlState, pos Pos) {
	switch ys.Type {
	case "string":
		s.Kind = Packed
		if len(ys.Fields) == 0 {
			l.errf(pos, "%s: state %s: a string needs fields", a.Name, s.Name)
		}
		if len(ys.Entry) > 0 {
			// Reading or dropping a string's entries would read all
			// of them: entries live in a zset, read by index.
			l.errf(pos, "%s: state %s: a string has fields, not entries: keep entries in a zset", a.Name, s.Name)
		}
	case "hash":
		l.errf(pos, "%s: state %s: type hash is no longer supported: fixed fields are kept packed in a string (type: string), one GET and one SET per decision", a.Name, s.Name)
	case "zset", "list":
		s.Kind = map[string]StateKind{"zset": ZSet, "list": List}[ys.Type]
		if len(ys.Fields) > 0 {
			l.errf(pos, "%s: state %s: a %s has entries, not fields", a.Name, s.Name, ys.Type)
		}
		if len(ys.Entry) == 0 {
			l.errf(pos, "%s: state %s: a %s needs entry fields", a.Name, s.Name, ys.Type)
		}
	default:
		l.errf(pos, "%s: state %s: type %q is not supported (supported: string, zset, list)", a.Name, s.Name, ys.Type)
	}
}

// fields reads the fixed fields of a string, each a domain and a default
// over the parameters.
func (l *loader) fields(a *Algorithm, s *State, yfs []yamlField, pos Pos) {
	for i, yf := range yfs {
		f := &Field{State: s, Name: yf.Name, Doc: strings.TrimSpace(yf.Doc), Index: i}
		if !nameRE.MatchString(f.Name) {
			l.errf(pos, "%s: field %q: names are lower_case", a.Name, f.Name)
		}
		f.Min = l.paramExpr(a, &yf.Min, fmt.Sprintf("%s.%s min", s.Name, f.Name))
		f.Max = l.paramExpr(a, &yf.Max, fmt.Sprintf("%s.%s max", s.Name, f.Name))
		f.Default = l.paramExpr(a, &yf.Default, fmt.Sprintf("%s.%s default", s.Name, f.Name))
		s.Fields = append(s.Fields, f)
	}
}

// keyParts parses a state's key: "{key}" (the hash tag, shared by every
// key of a call so that all land in one Redis Cluster slot), then
// colon-separated pieces, each literal text or a parameter in braces,
// the first literal (it names the algorithm). Every key of an algorithm
// names the same parameters. The keys of a user's spec carry its
// library's name after the hash tag.
func (l *loader) keyParts(a *Algorithm, s *State, key string, pos Pos) {
	suffix, ok := strings.CutPrefix(key, "{key}:")
	pieces := strings.Split(suffix, ":")
	if !ok || !keyLiteralRE.MatchString(pieces[0]) {
		l.errf(pos, "%s: state %s: key %q must be \"{key}:\" and a name, then more :pieces, each text or a {parameter}, so that all keys of one call share the hash tag {key} and one cluster slot", a.Name, s.Name, key)
		return
	}
	if lib := l.sp.Library; lib != CatalogueLibrary {
		// A user's library names itself in its keys, so that no two
		// libraries' algorithms share a key.
		s.KeyParts = appendKeyText(s.KeyParts, ":"+lib)
	}
	named := map[*Param]bool{}
	for _, piece := range pieces {
		m := keyParamRE.FindStringSubmatch(piece)
		if m == nil {
			if !keyLiteralRE.MatchString(piece) {
				l.errf(pos, "%s: state %s: key piece %q is neither text ([A-Za-z0-9_.-]) nor a {parameter}", a.Name, s.Name, piece)
			}
			s.KeyParts = appendKeyText(s.KeyParts, ":"+piece)
			continue
		}
		p := paramNamed(a, m[1])
		switch {
		case p == nil:
			l.errf(pos, "%s: state %s: key names %q, which is not a parameter", a.Name, s.Name, m[1])
		case named[p]:
			l.errf(pos, "%s: state %s: key names %s twice", a.Name, s.Name, p.Name)
		default:
			named[p] = true
			s.KeyParts = appendKeyText(s.KeyParts, ":")
			s.KeyParts = append(s.KeyParts, KeyPart{Param: p})
		}
	}
	if len(a.States) > 0 && !sameParams(a.States[0].KeyParams(), s.KeyParams()) {
		l.errf(pos, "%s: state %s: every key of an algorithm names the same parameters (%s names %s)", a.Name, s.Name, a.States[0].Name, paramNames(a.States[0].KeyParams()))
	}
}

// appendKeyText appends literal text to a key's parts, joining it to a
// literal before it.
func appendKeyText(parts []KeyPart, text string) []KeyPart {
	if n := len(parts); n > 0 && parts[n-1].Param == nil {
		parts[n-1].Text += text
		return parts
	}
	return append(parts, KeyPart{Text: text})
}

func paramNamed(a *Algorithm, name string) *Param {
	for _, p := range a.Params {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func sameParams(x, y []*Param) bool {
	if len(x) != len(y) {
		return false
	}
	for _, p := range x {
		if !slices.Contains(y, p) {
			return false
		}
	}
	return true
}

func paramNames(ps []*Param) string {
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// entries reads the entry fields of a collection, its running sum and the
// field its entries merge by.
func (l *loader) entries(a *Algorithm, s *State, ys yamlState, pos Pos) {
	s.MaxEntries = l.paramExpr(a, &ys.MaxEntries, s.Name+" max_entries")
	running := map[*Field]string{}
	for i, yf := range ys.Entry {
		f := &Field{State: s, Name: yf.Name, Doc: strings.TrimSpace(yf.Doc), Index: i, Entry: true}
		if !nameRE.MatchString(f.Name) {
			l.errf(pos, "%s: entry field %q: names are lower_case", a.Name, f.Name)
		}
		switch {
		case yf.Type == "string":
			f.Type = Str
			if s.Kind != List || i != len(ys.Entry)-1 || i == 0 {
				l.errf(pos, "%s: entry field %s.%s: only the last field of a list entry may be a string", a.Name, s.Name, f.Name)
			}
		case yf.Running != "":
			running[f] = yf.Running
			if yf.Min.Kind != 0 || yf.Max.Kind != 0 {
				l.errf(pos, "%s: entry field %s.%s: a running sum's domain is [0, RUN_MOD - 1]", a.Name, s.Name, f.Name)
			}
			f.Min, f.Max = &Lit{}, &Lit{V: l.sp.RunMod - 1}
		default:
			f.Min = l.paramExpr(a, &yf.Min, fmt.Sprintf("%s.%s min", s.Name, f.Name))
			f.Max = l.paramExpr(a, &yf.Max, fmt.Sprintf("%s.%s max", s.Name, f.Name))
		}
		s.Entry = append(s.Entry, f)
	}
	entryField := func(name, what string) *Field {
		for _, g := range s.Entry[1:] {
			if g.Name == name && g.Type == Int && running[g] == "" {
				return g
			}
		}
		l.errf(pos, "%s: state %s: %s %q is not an integer entry field of %s other than its score", a.Name, s.Name, what, name, s.Name)
		return nil
	}
	for f, of := range running {
		switch {
		case s.Kind != ZSet:
			l.errf(pos, "%s: entry field %s.%s: only a zset keeps running sums", a.Name, s.Name, f.Name)
		case s.Running != nil:
			l.errf(pos, "%s: state %s: one running sum per zset", a.Name, s.Name)
		case l.sp.RunMod < 2 || l.sp.RunMod > 1<<52:
			l.errf(pos, "%s: entry field %s.%s: a running sum needs the constant RUN_MOD, in [2, 2^52]", a.Name, s.Name, f.Name)
		default:
			s.Running, s.RunOf, s.Mod = f, entryField(of, "running sum of"), l.sp.RunMod
		}
	}
	if ys.Merge != "" {
		s.Merge = entryField(ys.Merge, "merge")
		if s.Kind != ZSet || (s.Running != nil && s.Merge != nil && s.Merge != s.RunOf) {
			l.errf(pos, "%s: state %s: merge is for a zset, by the field its running sum adds up", a.Name, s.Name)
		}
	}
}
