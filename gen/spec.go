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
	Name    string              `yaml:"name"`
	Doc     string              `yaml:"doc"`
	Params  []yamlParam         `yaml:"params"`
	Tiers   []map[string]string `yaml:"tiers"`
	Require []yamlRequire       `yaml:"require"`
	Inputs  []yamlInput         `yaml:"inputs"`
	State   []yamlState         `yaml:"state"`
	Logic   yaml.Node           `yaml:"logic"`
	Views   []yamlView          `yaml:"views"`
	Clock   string              `yaml:"clock"`
	Window  yaml.Node           `yaml:"window"`
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
	// For ("t in tiers") and Each: requirements stated once for every
	// tier, each of Each for tier 1, then for tier 2, ...
	For  string        `yaml:"for"`
	Each []yamlRequire `yaml:"each"`
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
			l.sp.Consts = append(l.sp.Consts, &Const{Name: k.Value, Value: val, Comments: yamlComments(k.LineComment + "\n" + v.LineComment)})
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
		case maxSkewName:
			l.sp.MaxSkew = c.Value
		case runModName:
			l.sp.RunMod = c.Value
		}
	}
}

// clock resolves an algorithm's clock, "state.field": a fixed field of a
// string, or an integer field of a collection's entries read from its
// newest entry (a list's last, or the top of a zset whose adds continue
// its newest entry), in [0, NOW_MAX], the time of the state's last
// write. Every algorithm whose logic writes needs one, so that a key
// written by a clock far ahead cannot hold it (docs/semantics.md, "State
// and time").
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
		if s.Name != sn {
			continue
		}
		for _, f := range append(slices.Clone(s.Fields), s.Entry...) {
			if f.Name != fn {
				continue
			}
			if f.Entry && (f.Type != Int || s.Kind == ZSet && !s.GrowsAtEnd()) {
				l.errf(pos, "%s: clock %q: an entry's clock is an integer field of a list or of a zset whose adds continue its newest entry (running or merge), read from the newest entry", a.Name, ya.Clock)
			}
			a.Clock = f
			return
		}
	}
	l.errf(pos, "%s: clock %q is not a field of a state (state.field)", a.Name, ya.Clock)
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

// algorithm reads one algorithm of the spec, item index of its list at
// pos, section by section; nil when its name is refused.
func (l *loader) algorithm(ya yamlAlgo, index int, pos Pos) *Algorithm {
	a := &Algorithm{Name: ya.Name, Library: l.sp.Library, Doc: strings.TrimSpace(ya.Doc), Pos: pos}
	if !nameRE.MatchString(a.Name) {
		l.errf(pos, "algorithm %q: names are lower_case", a.Name)
		return nil
	}
	if a.Doc == "" {
		l.errf(pos, "algorithm %s: doc is required", a.Name)
	}
	at := func(list string, j int) Pos { return l.itemPos(index, list, j, pos) }
	l.params(a, ya.Params, at)
	l.tiers(a, ya.Tiers, pos)
	l.strInputs(a, ya.Inputs, at)
	l.states(a, ya.State, at)
	l.requires(a, ya.Require)
	l.window(a, &ya.Window)
	if len(l.errs) > 0 {
		return a
	}
	if !l.logic(a, &ya.Logic, pos) {
		return a
	}
	l.clock(a, ya, pos)
	l.views(a, ya.Views, at)
	return a
}

// logic parses an algorithm's decision; false when it is missing or
// refused.
func (l *loader) logic(a *Algorithm, n *yaml.Node, pos Pos) bool {
	if n.Kind != yaml.ScalarNode || strings.TrimSpace(n.Value) == "" {
		l.errf(pos, "%s: logic is required", a.Name)
		return false
	}
	body, err := parseLogic(l.sp, a, nil, n.Value, l.textStart(n))
	if err != nil {
		l.errs = append(l.errs, err)
		return false
	}
	a.Body = body
	return true
}

// textStart is the position of the first line of a block of logic: the
// line after the | or > indicator of a block scalar.
func (l *loader) textStart(n *yaml.Node) Pos {
	first := n.Line
	if n.Style == yaml.LiteralStyle || n.Style == yaml.FoldedStyle {
		first++
	}
	return Pos{l.file, first}
}

// views reads an algorithm's views, each a read-only script over its
// state; at is the position of an item of its lists.
func (l *loader) views(a *Algorithm, yvs []yamlView, at func(string, int) Pos) {
	for j, yv := range yvs {
		pos := at("views", j)
		v := &View{Name: yv.Name, Doc: strings.TrimSpace(yv.Doc), Pos: l.pos(&yv.Logic)}
		if !nameRE.MatchString(v.Name) || v.Doc == "" {
			l.errf(pos, "%s: view %q: names are lower_case and a doc is required", a.Name, v.Name)
			continue
		}
		if yv.Logic.Kind != yaml.ScalarNode {
			l.errf(pos, "%s: view %s: logic is required", a.Name, v.Name)
			continue
		}
		body, err := parseLogic(l.sp, a, v, yv.Logic.Value, l.textStart(&yv.Logic))
		if err != nil {
			l.errs = append(l.errs, err)
			continue
		}
		v.Body = body
		a.Views = append(a.Views, v)
	}
}

// requires reads an algorithm's joint constraints on its parameters, each
// a comparison whose doc is the error message.
func (l *loader) requires(a *Algorithm, yrs []yamlRequire) {
	for _, yr := range yrs {
		if yr.For != "" || yr.Each != nil {
			l.tierRequires(a, yr)
			continue
		}
		if e := l.paramExpr(a, &yr.Expr, "require"); e != nil {
			l.require(a, e, yr.Doc, l.pos(&yr.Expr))
		}
	}
}

// require adds the requirement e, whose doc is its error message; one
// the parameters' domains settle (settle) is left out when it always
// holds, and refused when it never does.
func (l *loader) require(a *Algorithm, e Expr, doc string, pos Pos) {
	if e.Type() != Bool {
		l.errf(pos, "%s: require must be a comparison", a.Name)
		return
	}
	if b, ok := e.(*BoolLit); ok {
		if !b.V {
			l.errf(pos, "%s: require never holds", a.Name)
		}
		return
	}
	if strings.TrimSpace(doc) == "" {
		l.errf(pos, "%s: require needs a doc: it is the error message", a.Name)
	}
	a.Requires = append(a.Requires, &Require{Cond: e, Doc: strings.TrimSpace(doc), Pos: pos})
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
	a.Window, a.WindowPos, a.WindowComments = e, l.pos(n), yamlComments(n.LineComment)
}

// paramExpr parses an expression over parameters and constants.
func (l *loader) paramExpr(a *Algorithm, n *yaml.Node, what string) Expr {
	if n.Kind == 0 {
		l.errf(Pos{File: l.file}, "%s: %s is required", a.Name, what)
		return nil
	}
	e, err := parseExprText(l.sp, a, n.Value, l.pos(n), true, nil)
	if err != nil {
		l.errs = append(l.errs, fmt.Errorf("%v (in %s)", err, what))
		return nil
	}
	return e
}
