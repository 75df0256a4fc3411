package gen

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The YAML shape of spec/algorithms.yaml.
type yamlSpec struct {
	Constants  yaml.Node   `yaml:"constants"`
	Reply      []yamlReply `yaml:"reply"`
	Algorithms []yamlAlgo  `yaml:"algorithms"`
}

type yamlReply struct {
	Name    string `yaml:"name"`
	Type    string `yaml:"type"`
	Default *int64 `yaml:"default"`
	Doc     string `yaml:"doc"`
}

type yamlAlgo struct {
	Name    string        `yaml:"name"`
	Doc     string        `yaml:"doc"`
	Params  []yamlParam   `yaml:"params"`
	Require []yamlRequire `yaml:"require"`
	Inputs  []yamlInput   `yaml:"inputs"`
	State   []yamlState   `yaml:"state"`
	Logic   yaml.Node     `yaml:"logic"`
	Views   []yamlView    `yaml:"views"`
	Clock   string        `yaml:"clock"`
	Window  yaml.Node     `yaml:"window"`
}

type yamlParam struct {
	Name    string `yaml:"name"`
	Min     int64  `yaml:"min"`
	Max     int64  `yaml:"max"`
	Default *int64 `yaml:"default"`
	Doc     string `yaml:"doc"`
}

type yamlInput struct {
	Name   string `yaml:"name"`
	Type   string `yaml:"type"`
	MaxLen int    `yaml:"max_len"`
	Doc    string `yaml:"doc"`
}

type yamlView struct {
	Name  string    `yaml:"name"`
	Doc   string    `yaml:"doc"`
	Logic yaml.Node `yaml:"logic"`
}

type yamlRequire struct {
	Expr yaml.Node `yaml:"expr"`
	Doc  string    `yaml:"doc"`
}

type yamlState struct {
	Name       string      `yaml:"name"`
	Key        string      `yaml:"key"`
	Type       string      `yaml:"type"`
	Doc        string      `yaml:"doc"`
	Fields     []yamlField `yaml:"fields"`
	MaxEntries yaml.Node   `yaml:"max_entries"`
	Entry      []yamlField `yaml:"entry"`
	Merge      string      `yaml:"merge"`
}

type yamlField struct {
	Name    string    `yaml:"name"`
	Type    string    `yaml:"type"`
	Min     yaml.Node `yaml:"min"`
	Max     yaml.Node `yaml:"max"`
	Default yaml.Node `yaml:"default"`
	Running string    `yaml:"running"`
	Doc     string    `yaml:"doc"`
}

// LoadCatalogue reads, parses and checks the catalogue: algorithms.yaml
// of fsys (its constants, reply and algorithms) and the policies of
// policies.yaml beside it, when there is one.
func LoadCatalogue(fsys fs.FS) (*Spec, error) {
	src, err := fs.ReadFile(fsys, "algorithms.yaml")
	if err != nil {
		return nil, err
	}
	sp, err := Load("spec/algorithms.yaml", src)
	if err != nil {
		return nil, err
	}
	psrc, err := fs.ReadFile(fsys, "policies.yaml")
	if errors.Is(err, fs.ErrNotExist) {
		return sp, nil
	}
	if err != nil {
		return nil, err
	}
	sp.Source = "spec/algorithms.yaml and spec/policies.yaml"
	return sp, LoadPolicies(sp, "spec/policies.yaml", psrc)
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
var constRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

var (
	// keyLiteralRE is a literal piece of a key's suffix.
	keyLiteralRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	// keyParamRE is a parameter's piece: its name in braces.
	keyParamRE = regexp.MustCompile(`^\{([a-z][a-z0-9_]*)\}$`)
)

// Load parses and checks the catalogue's algorithms (its constants, reply
// and algorithms); file names the source in errors.
func Load(file string, src []byte) (*Spec, error) {
	var y yamlSpec
	root, err := decodeStrict(file, src, &y)
	if err != nil {
		return nil, err
	}
	l := &loader{file: file, sp: &Spec{Library: CatalogueLibrary, Source: file}, root: root}
	l.consts(&y.Constants)
	l.inputs()
	l.namedConsts()
	l.reply(y.Reply)
	l.algorithms(y.Algorithms)
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	if err := Analyze(l.sp); err != nil {
		return nil, err
	}
	return l.sp, nil
}

// maxDurationMs is the most ms a time.Duration holds.
const maxDurationMs = (1<<63 - 1) / 1000000

// isDurationName reports whether a parameter is a duration in ms: its
// name ends in _ms, or in _ms_ and digits (window_ms_2).
func isDurationName(n string) bool {
	_, ok := durationBase(n)
	return ok
}

// yamlUserSpec is the shape of a user's spec file: constants of its own
// (beside the catalogue's), algorithms and policies; the reply is the
// catalogue's.
type yamlUserSpec struct {
	Constants  yaml.Node    `yaml:"constants"`
	Algorithms []yamlAlgo   `yaml:"algorithms"`
	Policies   []yamlPolicy `yaml:"policies"`
}

// LoadUser parses and checks a user's spec file over the catalogue cat,
// compiled into the library library (the package's name): its own
// constants (none of the catalogue's again), algorithms and policies,
// with the catalogue's constants, reply and algorithms in scope.
func LoadUser(cat *Spec, library, file string, src []byte) (*Spec, error) {
	var y yamlUserSpec
	root, err := decodeStrict(file, src, &y)
	if err != nil {
		return nil, err
	}
	if !nameRE.MatchString(library) || library == CatalogueLibrary {
		return nil, fmt.Errorf("%s: the library (the package name) %q must be lower_case and not %s", file, library, CatalogueLibrary)
	}
	sp := &Spec{Library: library, Source: file, Consts: slices.Clone(cat.Consts), Inputs: cat.Inputs,
		MaxSkew: cat.MaxSkew, RunMod: cat.RunMod, Reply: cat.Reply, Imported: cat.Algorithms}
	l := &loader{file: file, sp: sp, root: root}
	if y.Constants.Kind != 0 {
		l.consts(&y.Constants)
	}
	l.algorithms(y.Algorithms)
	for _, a := range sp.Algorithms {
		if slices.ContainsFunc(cat.Algorithms, func(c *Algorithm) bool { return c.Name == a.Name }) {
			l.errf(a.Pos, "algorithm %s: the catalogue has one of that name", a.Name)
		}
	}
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	if err := Analyze(sp); err != nil {
		return nil, err
	}
	return sp, l.policies(y.Policies)
}

// decodeStrict decodes src into v, refusing unknown fields, and returns
// its node tree for positions.
func decodeStrict(file string, src []byte, v any) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return &root, nil
}

// algorithms reads the algorithms of the spec.
func (l *loader) algorithms(ys []yamlAlgo) {
	algLines := sequenceLines(l.root, "algorithms")
	seen := map[string]bool{}
	for i, ya := range ys {
		line := 0
		if i < len(algLines) {
			line = algLines[i]
		}
		a := l.algorithm(ya, i, Pos{l.file, line})
		if a == nil {
			continue
		}
		if seen[a.Name] {
			l.errf(a.Pos, "algorithm %q defined twice", a.Name)
		}
		seen[a.Name] = true
		l.sp.Algorithms = append(l.sp.Algorithms, a)
	}
}

// sequenceLines returns the line of each item of the top-level sequence key.
func sequenceLines(root *yaml.Node, key string) []int {
	if len(root.Content) == 0 {
		return nil
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			var lines []int
			for _, it := range m.Content[i+1].Content {
				lines = append(lines, it.Line)
			}
			return lines
		}
	}
	return nil
}

type loader struct {
	file string
	sp   *Spec
	root *yaml.Node
	errs []error
}

// itemPos is the position of item j of an algorithm's list (its params,
// state, ...), or def when the spec has no such item.
func (l *loader) itemPos(alg int, list string, j int, def Pos) Pos {
	return l.nodePos(def, "algorithms", alg, list, j)
}

// nodePos is the position of the node the path of keys (strings) and
// sequence items (ints) leads to from the document's root, or def when
// there is none.
func (l *loader) nodePos(def Pos, path ...any) Pos {
	n := l.root
	if len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, key := range path {
		n = yamlStep(n, key)
	}
	if n == nil {
		return def
	}
	return Pos{l.file, n.Line}
}

// yamlStep is the value of a mapping's key (a string) or a sequence's
// item (an int), nil when there is none.
func yamlStep(n *yaml.Node, key any) *yaml.Node {
	switch k := key.(type) {
	case string:
		for i := 0; n != nil && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				return n.Content[i+1]
			}
		}
	case int:
		if n != nil && n.Kind == yaml.SequenceNode && k < len(n.Content) {
			return n.Content[k]
		}
	}
	return nil
}

func (l *loader) errf(pos Pos, format string, args ...any) {
	l.errs = append(l.errs, fmt.Errorf("%s: %s", pos, fmt.Sprintf(format, args...)))
}

func (l *loader) pos(n *yaml.Node) Pos { return Pos{l.file, n.Line} }

func (l *loader) consts(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		l.errf(l.pos(n), "constants must be a mapping of NAME: integer")
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		val, err := strconv.ParseInt(v.Value, 10, 64)
		switch {
		case !constRE.MatchString(k.Value):
			l.errf(l.pos(k), "constant %q: names are UPPER_CASE", k.Value)
		case err != nil || val < -MaxSafe || val > MaxSafe:
			l.errf(l.pos(v), "constant %s: %q is not an integer within ±(2^53-1)", k.Value, v.Value)
		case slices.ContainsFunc(l.sp.Consts, func(c *Const) bool { return c.Name == k.Value }):
			l.errf(l.pos(k), "constant %s is defined already (the catalogue's constants are in scope)", k.Value)
		default:
			l.sp.Consts = append(l.sp.Consts, &Const{Name: k.Value, Value: val})
		}
	}
}

// inputs declares now and cost, whose domains are the constants NOW_MAX and
// COST_MAX.
func (l *loader) inputs() {
	for _, in := range []*Input{{Name: "now", Arg: "now_ms", MaxName: "NOW_MAX"}, {Name: "cost", Arg: "cost", MaxName: "COST_MAX"}} {
		found := false
		for _, c := range l.sp.Consts {
			if c.Name == in.MaxName {
				in.Max, found = c.Value, true
			}
		}
		if !found || in.Max < 1 {
			l.errf(Pos{File: l.file}, "constant %s (the largest %s) must be defined and positive", in.MaxName, in.Arg)
		}
		l.sp.Inputs = append(l.sp.Inputs, in)
	}
}

// namedConsts reads the constants the generator itself uses: MAX_SKEW_MS,
// the most a key's clock may be ahead of a request and still be trusted
// (a spec with a clock needs it), and RUN_MOD, the modulus of running
// sums (a spec with one needs it).
func (l *loader) namedConsts() {
	for _, c := range l.sp.Consts {
		switch c.Name {
		case "MAX_SKEW_MS":
			l.sp.MaxSkew = c.Value
		case "RUN_MOD":
			l.sp.RunMod = c.Value
		}
	}
}

// clock resolves an algorithm's clock, "state.field": a fixed field of a
// string, in [0, NOW_MAX], the time of the state's last write. Every
// algorithm whose logic writes needs one, so that a key written by a
// clock far ahead cannot hold it (docs/semantics.md, "State and time").
func (l *loader) clock(a *Algorithm, ya yamlAlgo, pos Pos) {
	if ya.Clock == "" {
		if writesIn(a.Body) {
			l.errf(pos, "%s: clock is required: the state field (state.field) holding the time of the last write", a.Name)
		}
		return
	}
	if l.sp.MaxSkew < 1 {
		l.errf(pos, "%s: a clock needs the constant MAX_SKEW_MS (how far a key's clock may be ahead of a request), defined and positive", a.Name)
	}
	sn, fn, _ := strings.Cut(ya.Clock, ".")
	for _, s := range a.States {
		for _, f := range s.Fields {
			if s.Name == sn && f.Name == fn {
				a.Clock = f
				return
			}
		}
	}
	l.errf(pos, "%s: clock %q is not a field of a string state (state.field)", a.Name, ya.Clock)
}

func (l *loader) reply(ys []yamlReply) {
	if len(ys) == 0 {
		l.errf(Pos{File: l.file}, "reply: at least one field is needed")
	}
	for _, r := range ys {
		f := &ReplyField{Name: r.Name, Doc: strings.TrimSpace(r.Doc), Default: r.Default}
		switch r.Type {
		case "", "int":
		case "bool":
			f.Type = Bool
			if r.Default != nil {
				l.errf(Pos{File: l.file}, "reply field %s: only an int field may have a default", r.Name)
			}
		default:
			l.errf(Pos{File: l.file}, "reply field %s: type must be int or bool, not %q", r.Name, r.Type)
		}
		if !nameRE.MatchString(r.Name) {
			l.errf(Pos{File: l.file}, "reply field %q: names are lower_case", r.Name)
		}
		l.sp.Reply = append(l.sp.Reply, f)
	}
}

func (l *loader) algorithm(ya yamlAlgo, index int, pos Pos) *Algorithm {
	a := &Algorithm{Name: ya.Name, Library: l.sp.Library, Doc: strings.TrimSpace(ya.Doc), Pos: pos}
	if !nameRE.MatchString(a.Name) {
		l.errf(pos, "algorithm %q: names are lower_case", a.Name)
		return nil
	}
	if a.Doc == "" {
		l.errf(pos, "algorithm %s: doc is required", a.Name)
	}
	if len(ya.Params) > MaxParams {
		l.errf(pos, "%s: %d parameters; an algorithm takes at most %d", a.Name, len(ya.Params), MaxParams)
	}
	for j, yp := range ya.Params {
		pos := l.itemPos(index, "params", j, pos)
		p := &Param{Name: yp.Name, Min: yp.Min, Max: yp.Max, Default: yp.Default, Doc: strings.TrimSpace(yp.Doc), Index: j}
		switch {
		case !nameRE.MatchString(p.Name) || keywords[p.Name]:
			l.errf(pos, "%s: parameter %q: names are lower_case and not a keyword", a.Name, p.Name)
		case p.Min > p.Max || p.Min < -MaxSafe || p.Max > MaxSafe:
			l.errf(pos, "%s: parameter %s: domain [%d, %d] must be non-empty and within ±(2^53-1)", a.Name, p.Name, p.Min, p.Max)
		case p.Default != nil && (*p.Default < p.Min || *p.Default > p.Max):
			l.errf(pos, "%s: parameter %s: default %d is outside [%d, %d]", a.Name, p.Name, *p.Default, p.Min, p.Max)
		case p.Default != nil && *p.Default != 0 && p.Min <= 0:
			// A typed limit's zero field leaves an optional parameter out:
			// 0 must not also be one of its values.
			l.errf(pos, "%s: parameter %s: an optional parameter whose domain holds 0 has the default 0, not %d (a Go limit's zero field leaves it out)", a.Name, p.Name, *p.Default)
		case isDurationName(p.Name) && (p.Min < 0 || p.Max > maxDurationMs):
			l.errf(pos, "%s: parameter %s: a duration (a name ending in _ms) has a domain within [0, %d] ms, what a time.Duration holds", a.Name, p.Name, maxDurationMs)
		}
		for _, q := range a.Params {
			if q.Name == p.Name {
				l.errf(pos, "%s: parameter %s declared twice", a.Name, p.Name)
			}
		}
		a.Params = append(a.Params, p)
	}
	for j, yi := range ya.Inputs {
		pos := l.itemPos(index, "inputs", j, pos)
		in := &StrInput{Name: yi.Name, Doc: strings.TrimSpace(yi.Doc), MaxLen: yi.MaxLen, Index: j}
		switch {
		case !nameRE.MatchString(in.Name) || keywords[in.Name]:
			l.errf(pos, "%s: input %q: names are lower_case and not a keyword", a.Name, in.Name)
		case yi.Type != "string":
			l.errf(pos, "%s: input %s: type must be string (now_ms and cost are the integer inputs)", a.Name, in.Name)
		case in.MaxLen < 1 || in.MaxLen > 65536:
			l.errf(pos, "%s: input %s: max_len must be in [1, 65536]", a.Name, in.Name)
		}
		a.Strings = append(a.Strings, in)
	}
	suffixes := map[string]bool{}
	for j, ys := range ya.State {
		pos := l.itemPos(index, "state", j, pos)
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
		if len(ys.Entry) > 0 {
			l.entries(a, s, ys, pos)
		} else if ys.MaxEntries.Kind != 0 || ys.Merge != "" {
			l.errf(pos, "%s: state %s: max_entries and merge need entries", a.Name, s.Name)
		}
		a.States = append(a.States, s)
		for i, yf := range ys.Fields {
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
	for _, yr := range ya.Require {
		e := l.paramExpr(a, &yr.Expr, "require")
		if e == nil {
			continue
		}
		if e.Type() != Bool {
			l.errf(l.pos(&yr.Expr), "%s: require must be a comparison", a.Name)
			continue
		}
		if strings.TrimSpace(yr.Doc) == "" {
			l.errf(l.pos(&yr.Expr), "%s: require needs a doc: it is the error message", a.Name)
		}
		a.Requires = append(a.Requires, &Require{Cond: e, Doc: strings.TrimSpace(yr.Doc), Pos: l.pos(&yr.Expr)})
	}
	l.window(a, &ya.Window)
	if len(l.errs) > 0 {
		return a
	}
	if ya.Logic.Kind != yaml.ScalarNode || strings.TrimSpace(ya.Logic.Value) == "" {
		l.errf(pos, "%s: logic is required", a.Name)
		return a
	}
	first := ya.Logic.Line
	if ya.Logic.Style == yaml.LiteralStyle || ya.Logic.Style == yaml.FoldedStyle {
		first++ // the text starts on the line after the | indicator
	}
	body, err := parseLogic(l.sp, a, nil, ya.Logic.Value, Pos{l.file, first})
	if err != nil {
		l.errs = append(l.errs, err)
		return a
	}
	a.Body = body
	l.clock(a, ya, pos)
	for j, yv := range ya.Views {
		pos := l.itemPos(index, "views", j, pos)
		v := &View{Name: yv.Name, Doc: strings.TrimSpace(yv.Doc), Pos: l.pos(&yv.Logic)}
		if !nameRE.MatchString(v.Name) || v.Doc == "" {
			l.errf(pos, "%s: view %q: names are lower_case and a doc is required", a.Name, v.Name)
			continue
		}
		if yv.Logic.Kind != yaml.ScalarNode {
			l.errf(pos, "%s: view %s: logic is required", a.Name, v.Name)
			continue
		}
		first := yv.Logic.Line
		if yv.Logic.Style == yaml.LiteralStyle || yv.Logic.Style == yaml.FoldedStyle {
			first++
		}
		body, err := parseLogic(l.sp, a, v, yv.Logic.Value, Pos{l.file, first})
		if err != nil {
			l.errs = append(l.errs, err)
			continue
		}
		v.Body = body
		a.Views = append(a.Views, v)
	}
	return a
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

// window reads an algorithm's optional window, an integer expression in
// ms over its parameters and constants (see Algorithm.Window); the
// analysis bounds it.
func (l *loader) window(a *Algorithm, n *yaml.Node) {
	if n.Kind == 0 {
		return
	}
	if n.Kind != yaml.ScalarNode {
		l.errf(l.pos(n), "%s: window must be an expression, such as window_ms", a.Name)
		return
	}
	e := l.paramExpr(a, n, "window")
	if e == nil {
		return
	}
	if e.Type() != Int {
		l.errf(l.pos(n), "%s: window must be an integer expression (ms) over the parameters, not a %s", a.Name, e.Type())
		return
	}
	a.Window, a.WindowPos = e, l.pos(n)
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

// paramExpr parses an expression over parameters and constants.
func (l *loader) paramExpr(a *Algorithm, n *yaml.Node, what string) Expr {
	if n.Kind == 0 {
		l.errf(Pos{File: l.file}, "%s: %s is required", a.Name, what)
		return nil
	}
	e, err := parseExprText(l.sp, a, n.Value, l.pos(n), true)
	if err != nil {
		l.errs = append(l.errs, fmt.Errorf("%v (in %s)", err, what))
		return nil
	}
	return e
}
