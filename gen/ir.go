package gen

import (
	"fmt"
	"slices"
	"strings"
)

// MaxSafe is the largest integer every target represents exactly: Lua
// numbers are IEEE doubles.
const MaxSafe = 1<<53 - 1

// MaxParams is the most parameters an algorithm takes: the room for them
// in a call of the generated Go (kit.MaxParams).
const MaxParams = 16

// Pos is a position in the spec file.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// Type is the type of a value in the logic language.
type Type int

// The types of the logic language. Str is only passed through: a string
// input stored in a string entry field.
const (
	Int Type = iota
	Bool
	Str
)

func (t Type) String() string { return [...]string{"int", "bool", "string"}[t] }

// Spec is the whole checked specification: the IR every emitter reads.
type Spec struct {
	// Library names the spec's library: limitspec for the catalogue, the
	// package name for a user's spec. Source names its files, for the
	// headers of generated files.
	Library string
	Source  string
	// Imported are the catalogue's algorithms, in scope of a user's spec
	// (its policies may use them) but compiled in the catalogue.
	Imported []*Algorithm
	Consts   []*Const
	Inputs   []*Input // now and cost, in ARGV order
	// MaxSkew is MAX_SKEW_MS: how far ahead of a request's now_ms a key's
	// clock may be and still be trusted.
	MaxSkew int64
	// RunMod is RUN_MOD, the modulus of the running sums of zset entries
	// (State.Running); 0 when the spec declares none.
	RunMod     int64
	Reply      []*ReplyField
	Algorithms []*Algorithm
	// Policies are the policies of spec/policies.yaml, or of a user's
	// spec, over the algorithms in scope (InScope).
	Policies []*Policy
}

// Const is a named integer constant usable in every algorithm.
type Const struct {
	Name  string
	Value int64
	// Comments are those of its line in the spec, as Commented's.
	Comments []string
}

// Input is a per-call integer argument (now_ms, cost) with its domain.
type Input struct {
	Name    string // the name in the logic language: now, cost
	Arg     string // the name in ARGV and messages: now_ms, cost
	Min     int64
	Max     int64
	MaxName string // the constant naming Max, if any
}

// ReplyField is one field of every decision's reply.
type ReplyField struct {
	Name string
	Doc  string
	Type Type
	// Default is the value of an int field an algorithm does not set;
	// nil when every algorithm must set it.
	Default *int64
}

// Algorithm is one rate-limiting algorithm.
type Algorithm struct {
	Name string
	// Library is the library of its spec (Spec.Library).
	Library  string
	Doc      string
	Pos      Pos
	Params   []*Param
	Requires []*Require
	// Strings are the algorithm's per-call string inputs, in ARGV order
	// after now_ms, cost and force.
	Strings []*StrInput
	States  []*State
	// Tiers are the limits the logic checks over one state, when it
	// loops over them (see Tier).
	Tiers []Tier
	Body  []Stmt
	// Views are the read-only scripts over the algorithm's state.
	Views []*View
	// Window is the algorithm's window in ms: the time over which its
	// limit (the reply's limit, the largest cost admitted at once) is
	// counted, the time a fully used limit takes to be whole again, as
	// an HTTP RateLimit-Policy's w announces it. An integer expression
	// over parameters and constants, which the analysis proves to lie in
	// [0, 2^53-1] for every accepted parameter value; nil when the
	// algorithm declares none (a typed limit's QuotaWindow is then 0).
	Window Expr
	// WindowPos is the position of the window in the spec, and
	// WindowComments the comments at the end of its line.
	WindowPos      Pos
	WindowComments []string
	// Clock is the state field holding the time of the last write: a
	// string's field, or an entry field read from a collection's newest
	// entry (Field.Entry). A state whose clock is more than Spec.MaxSkew
	// ahead of now_ms is not trusted: it reads as absent, and the first
	// write of that call deletes every key of the algorithm before it
	// writes.
	Clock *Field
	// Checks are the runtime checks on parameters the bound analysis could
	// not discharge statically; each must hold for the parameters to be
	// accepted. Filled in by the analysis.
	Checks []*Check
}

// Qualified is the algorithm's name as the policy script and
// policyfile.NewLimit take it: its name in the catalogue, library.name in
// a user's spec.
func (a *Algorithm) Qualified() string {
	if a.Library == CatalogueLibrary {
		return a.Name
	}
	return a.Library + "." + a.Name
}

// RequiredParams is the number of parameters a call must give: those up
// to the last without a default (optional ones may be left off the end).
func (a *Algorithm) RequiredParams() int {
	n := 0
	for _, p := range a.Params {
		if p.Default == nil {
			n = p.Index + 1
		}
	}
	return n
}

// CatalogueLibrary is the library of the catalogue, spec/algorithms.yaml.
const CatalogueLibrary = "limitspec"

// InScope are the algorithms a policy may use, the catalogue's and the
// spec's own, sorted by qualified name.
func (sp *Spec) InScope() []*Algorithm {
	out := append(slices.Clone(sp.Imported), sp.Algorithms...)
	slices.SortFunc(out, func(x, y *Algorithm) int { return strings.Compare(x.Qualified(), y.Qualified()) })
	return out
}

// Param is a limiter parameter with its declared integer domain.
type Param struct {
	Name  string
	Doc   string
	Index int // its place among the algorithm's parameters
	Min   int64
	Max   int64
	// Default is the value of an optional parameter left out; nil when
	// the parameter is required.
	Default *int64
}

// StrInput is a per-call string argument of one algorithm, such as the
// meta recorded with an admitted request.
type StrInput struct {
	Name   string
	Doc    string
	MaxLen int // in bytes
	Index  int // its place among the algorithm's string inputs
}

// View is a read-only script over an algorithm's state: it takes now_ms
// and the parameters and returns the entries of one collection.
type View struct {
	Name string
	Doc  string
	Body []Stmt // lets and ifs, ending with a Show
	Pos  Pos
}

// Require is a documented joint constraint on the parameters.
type Require struct {
	Cond Expr // bool, over parameters and constants only
	Doc  string
	Pos  Pos
}

// Check is a generated runtime check on the parameters.
type Check struct {
	Cond Expr // bool, over parameters and constants only
	Msg  string
}

// StateKind is the Redis type of a state key.
type StateKind int

// The state kinds. A string holds fixed integer fields, packed: each in
// decimal, joined by ":", written whole by one SET with its TTL and read
// by one GET. A zset holds
// entries ordered by their first field, the score, then by their second
// (written zero-padded, so that entries of one score sort as they
// arrived); the member is every field, joined by ":". A zset is read by
// index, never whole: every aggregate over it costs a few O(log n)
// commands. A list holds entries in arrival order, each its fields joined
// by ":", and is read whole, by views only.
const (
	Packed StateKind = iota
	ZSet
	List
)

// String is the kind's Redis type, as the spec names it.
func (k StateKind) String() string { return [...]string{"string", "zset", "list"}[k] }

// State is one Redis key of an algorithm's state.
type State struct {
	Name string
	Doc  string
	// KeyParts are the pieces of what follows the hash tag in the key's
	// template (":sl:{window_ms}:sum"; a user's spec puts ":<library>"
	// first).
	KeyParts []KeyPart
	Kind     StateKind
	Fields   []*Field // the fixed fields of a string
	// Entry are the fields of each entry of a collection (a zset or a
	// list); nil for a string, which holds fixed fields only.
	Entry []*Field
	// MaxEntries bounds the entries kept: an add to a zset removes its
	// oldest entries past MaxEntries, and a read of a list keeps its last
	// MaxEntries. An expression over parameters and constants.
	MaxEntries Expr
	// Running is a zset's entry field holding the running sum of RunOf
	// over the entries up to and including its own, modulo Spec.RunMod:
	// the sum of RunOf over any range of entries is then the difference
	// of two of them. The generator computes it; nil when none.
	Running, RunOf *Field
	// Merge is the entry field by which a zset's entries of equal score
	// merge: an add whose score is the newest entry's adds its Merge to
	// that entry instead of inserting one. nil when entries never merge.
	Merge *Field
	// Mod is RUN_MOD when the zset keeps a running sum.
	Mod int64
	// PadWidth is, for a zset whose entries do not merge, the digits its
	// second field is written with, zero-padded, so that entries of one
	// score sort by it: its largest value's. Filled in by the analysis.
	PadWidth int
	Pos      Pos
}

// KeyPart is a piece of a key's suffix: literal text, or the decimal
// value of a parameter (Param not nil). A key names the parameters its
// state is measured in, so that two limits that differ in one never
// share state (docs/semantics.md, "Keys").
type KeyPart struct {
	Text  string
	Param *Param
}

// KeyParams are the parameters the key names, in order.
func (s *State) KeyParams() []*Param {
	var out []*Param
	for _, p := range s.KeyParts {
		if p.Param != nil {
			out = append(out, p.Param)
		}
	}
	return out
}

// GrowsAtEnd reports whether adds to a zset continue its newest entry
// (its running sum, its merge): such a zset only grows at its end.
func (s *State) GrowsAtEnd() bool { return s.Running != nil || s.Merge != nil }

// Collection reports whether the state holds entries.
func (s *State) Collection() bool { return s.Entry != nil }

// Field is an integer field of a hash state, or a field of an entry
// (integer, or a string for the last field of a list entry).
type Field struct {
	State   *State
	Name    string
	Doc     string
	Index   int
	Type    Type // Int, or Str for a list entry's last field
	Entry   bool // a field of an entry, not of the hash
	Min     Expr // over parameters and constants; nil for a string
	Max     Expr
	Default Expr // nil for entry fields
}

// Stmt is a statement of the logic language.
type Stmt interface {
	stmtNode()
	commented() *Commented
}

// Commented holds the comments of the spec that explain a statement: the
// whole-line comments just above it, then the one at the end of its line
// (of its last line; of an if, the line of its opening brace), each the
// text after # without surrounding spaces. The emitters print them as
// comment lines just above the code the statement lowers to.
type Commented struct {
	Comments []string
}

func (c *Commented) commented() *Commented { return c }

// Let binds a name to a value for the rest of its block.
type Let struct {
	Commented
	Name string
	X    Expr
	Pos  Pos
	uses int
	// tier is the tier whose let it is, in a for over tiers (from 1;
	// 0 elsewhere), and tierBase the name the for binds.
	tier     int
	tierBase string
}

// If runs Then or Else.
type If struct {
	Commented
	Cond Expr
	Then []Stmt
	Else []Stmt
	Pos  Pos
}

// Store writes every field of a state key and sets its TTL.
type Store struct {
	Commented
	State  *State
	Values []Expr // by field index
	TTL    Expr   // ms from now
	Pos    Pos
}

// Reply ends the decision with the reply fields, by index.
type Reply struct {
	Commented
	Values []Expr
	Pos    Pos
}

// Add inserts an entry into a collection: ZADD for a zset, RPUSH for a
// list. A zset grows at its end: an entry scored below the newest is
// added with the newest's score; one scored as the newest merges into it
// when the zset merges (State.Merge); the oldest entries past MaxEntries
// are removed.
type Add struct {
	Commented
	State  *State
	Values []Expr // by entry field index; nil for the running sum
	TTL    Expr
	Pos    Pos
}

// Drop removes the entries whose first field is at most Upto.
type Drop struct {
	Commented
	State *State
	Upto  Expr
	Pos   Pos
}

// Clear deletes a collection's key.
type Clear struct {
	Commented
	State *State
	Pos   Pos
}

// Show ends a view: the collection's entries, in order, if Cond holds;
// none otherwise. Each entry is returned as its Fields (by default all
// of them, in the order of the entry).
type Show struct {
	Commented
	State  *State
	Fields []*Field
	Cond   Expr
	Pos    Pos
}

func (*Let) stmtNode()   {}
func (*If) stmtNode()    {}
func (*Store) stmtNode() {}
func (*Reply) stmtNode() {}
func (*Add) stmtNode()   {}
func (*Drop) stmtNode()  {}
func (*Clear) stmtNode() {}
func (*Show) stmtNode()  {}

// Expr is an expression of the logic language.
type Expr interface{ Type() Type }

// Lit is an integer literal; Name is the constant it came from, if any.
type Lit struct {
	V    int64
	Name string
}

// BoolLit is true or false.
type BoolLit struct{ V bool }

// ParamRef reads a parameter.
type ParamRef struct{ P *Param }

// InputRef reads a per-call input.
type InputRef struct{ In *Input }

// FieldRef reads a state field as it was when the call began.
type FieldRef struct{ F *Field }

// VarRef reads a let-bound name.
type VarRef struct{ L *Let }

// ForceRef is true in a forced call (docs/semantics.md, "Force"): the
// logic consumes the cost even when it denies, up to its declared bound.
type ForceRef struct{}

// StrRef reads a per-call string input.
type StrRef struct{ In *StrInput }

// Iter is the variable of an aggregate, bound to each entry in turn.
type Iter struct {
	Name  string
	State *State
}

// EntryRef reads a field of the entry an aggregate is visiting.
type EntryRef struct {
	It *Iter
	F  *Field
}

// Agg is an aggregate over the entries of a collection, in order, as the
// collection was when the call began, keeping those for which Where holds
// (all when Where is nil):
//
//	sum(e in C where P: V)                  the sum of V (V >= 0)
//	last(e in C where P: V else D)          V of the last such entry, or D
//	reach(e in C where P: V >= N then R else D)
//	                                        R of the first entry at which the
//	                                        running sum of V reaches N, or D
type Agg struct {
	Fn    AggFn
	It    *Iter
	Where Expr
	V     Expr
	N     Expr // reach only
	R     Expr // reach only
	D     Expr // last and reach
	// Cap is, for a sum or reach over a zset, the largest value its sum
	// may take for any parameters: the generated code clamps to it.
	Cap int64
}

// Unary is -x (OpNeg) or !x (OpNot).
type Unary struct {
	Op Op
	X  Expr
}

// Binary is x op y; op is one of + - * / % < <= > >= == != && ||.
type Binary struct {
	Op   Op
	X, Y Expr
}

// Call is min, max or ceildiv (OpMin, OpMax, OpCeilDiv).
type Call struct {
	Fn   Op
	Args []Expr
}

// Cond is `if C then A else B`.
type Cond struct{ C, A, B Expr }

func (*Lit) Type() Type        { return Int }
func (*StrRef) Type() Type     { return Str }
func (e *EntryRef) Type() Type { return e.F.Type }
func (a *Agg) Type() Type {
	if a.Fn == Sum {
		return Int
	}
	return a.D.Type()
}
func (*BoolLit) Type() Type  { return Bool }
func (*ForceRef) Type() Type { return Bool }
func (*ParamRef) Type() Type { return Int }
func (*InputRef) Type() Type { return Int }
func (*FieldRef) Type() Type { return Int }
func (v *VarRef) Type() Type { return v.L.X.Type() }
func (u *Unary) Type() Type  { return u.X.Type() }
func (c *Call) Type() Type   { return Int }
func (c *Cond) Type() Type   { return c.A.Type() }
func (b *Binary) Type() Type {
	if b.Op.Bool() {
		return Bool
	}
	return Int
}
