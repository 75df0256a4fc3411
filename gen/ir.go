package gen

import "fmt"

// MaxSafe is the largest integer every target represents exactly: Lua
// numbers are IEEE doubles.
const MaxSafe = 1<<53 - 1

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

// The types of the logic language.
const (
	Int Type = iota
	Bool
)

func (t Type) String() string {
	if t == Bool {
		return "bool"
	}
	return "int"
}

// Spec is the whole checked specification: the IR every emitter reads.
type Spec struct {
	Consts     []*Const
	Inputs     []*Input // now and cost, in ARGV order
	Reply      []*ReplyField
	Algorithms []*Algorithm
}

// Const is a named integer constant usable in every algorithm.
type Const struct {
	Name  string
	Value int64
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
}

// Algorithm is one rate-limiting algorithm.
type Algorithm struct {
	Name     string
	Doc      string
	Pos      Pos
	Params   []*Param
	Requires []*Require
	States   []*State
	Body     []Stmt
	// Checks are the runtime checks on parameters the bound analysis could
	// not discharge statically; each must hold for the parameters to be
	// accepted. Filled in by the analysis.
	Checks []*Check
}

// Param is a limiter parameter with its declared integer domain.
type Param struct {
	Name string
	Doc  string
	Min  int64
	Max  int64
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

// The state kinds.
const (
	Hash StateKind = iota
)

func (k StateKind) String() string { return [...]string{"hash"}[k] }

// State is one Redis key of an algorithm's state.
type State struct {
	Name   string
	Doc    string
	Suffix string // the key is "{" + key + "}" + Suffix
	Kind   StateKind
	Fields []*Field
	Pos    Pos
}

// Field is an integer field of a hash state.
type Field struct {
	State   *State
	Name    string
	Doc     string
	Index   int
	Min     Expr // over parameters and constants
	Max     Expr
	Default Expr
}

// Stmt is a statement of the logic language.
type Stmt interface{ stmtNode() }

// Let binds a name to a value for the rest of its block.
type Let struct {
	Name string
	X    Expr
	Pos  Pos
	uses int
}

// If runs Then or Else.
type If struct {
	Cond Expr
	Then []Stmt
	Else []Stmt
	Pos  Pos
}

// Store writes every field of a state key and sets its TTL.
type Store struct {
	State  *State
	Values []Expr // by field index
	TTL    Expr   // ms from now
	Pos    Pos
}

// Reply ends the decision with the reply fields, by index.
type Reply struct {
	Values []Expr
	Pos    Pos
}

func (*Let) stmtNode()   {}
func (*If) stmtNode()    {}
func (*Store) stmtNode() {}
func (*Reply) stmtNode() {}

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

// Unary is -x or !x.
type Unary struct {
	Op string
	X  Expr
}

// Binary is x op y; op is one of + - * / % < <= > >= == != && ||.
type Binary struct {
	Op   string
	X, Y Expr
}

// Call is min, max or ceildiv.
type Call struct {
	Fn   string
	Args []Expr
}

// Cond is `if C then A else B`.
type Cond struct{ C, A, B Expr }

func (*Lit) Type() Type      { return Int }
func (*BoolLit) Type() Type  { return Bool }
func (*ParamRef) Type() Type { return Int }
func (*InputRef) Type() Type { return Int }
func (*FieldRef) Type() Type { return Int }
func (v *VarRef) Type() Type { return v.L.X.Type() }
func (u *Unary) Type() Type  { return u.X.Type() }
func (c *Call) Type() Type   { return Int }
func (c *Cond) Type() Type   { return c.A.Type() }
func (b *Binary) Type() Type {
	switch b.Op {
	case "+", "-", "*", "/", "%":
		return Int
	}
	return Bool
}

// precedence of binary operators, shared by the spec, Lua and Go.
func precedence(op string) int {
	switch op {
	case "||":
		return 1
	case "&&":
		return 2
	case "<", "<=", ">", ">=", "==", "!=":
		return 3
	case "+", "-":
		return 4
	case "*", "/", "%":
		return 5
	}
	return 6
}
