package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/kit"
	_ "github.com/limitspec/limitspec/lua" // the catalogue's scripts
	"gopkg.in/yaml.v3"
)

// scenariosYAML is the data of every algorithm and policy; its head
// documents the format.
//
//go:embed scenarios.yaml
var scenariosYAML []byte

// data is scenarios.yaml.
type data struct {
	Algorithms map[string]algorithmData `yaml:"algorithms"`
	Policies   map[string]policyData    `yaml:"policies"`
}

type algorithmData struct {
	Params    []map[string]int64      `yaml:"params"`
	Symbols   map[string]string       `yaml:"symbols"` // symbol: parameter
	Tiers     bool                    `yaml:"tiers"`
	Scenarios map[string]scenarioData `yaml:"scenarios"`
	Domain    map[string]domainData   `yaml:"domain"`
}

// policyData is a policy of spec/policies.yaml with its per-call
// parameters (limit.param), or, with Limits, a policy of its own, as a
// policy file writes it; and its scenarios.
type policyData struct {
	Holds     bool                    `yaml:"holds"`
	Params    map[string]int64        `yaml:"params"`
	Limits    []limitData             `yaml:"limits"`
	Scenarios map[string]scenarioData `yaml:"scenarios"`
}

// limitData is one limit of a policy of scenarios.yaml's own.
type limitData struct {
	Name      string           `yaml:"name"`
	Algorithm string           `yaml:"algorithm"`
	Identity  string           `yaml:"identity"`
	Constant  string           `yaml:"constant"`
	Params    map[string]int64 `yaml:"params"`
	Unit      string           `yaml:"unit"`
}

// scenarioData gives either calls or the name of a builder.
type scenarioData struct {
	Comment string     `yaml:"comment"`
	Calls   []callData `yaml:"calls"`
	Builder string     `yaml:"builder"`
}

// domainData is a vector on an algorithm's first parameter set with
// Params replacing some of its values; no calls: requestThenPeek.
type domainData struct {
	Comment string           `yaml:"comment"`
	Params  map[string]int64 `yaml:"params"`
	Calls   []callData       `yaml:"calls"`
}

// callData is one call, or with Calls a group, repeated Repeat times.
type callData struct {
	DT         expr              `yaml:"dt"`
	Cost       expr              `yaml:"cost"`
	Costs      map[string]int64  `yaml:"costs"`
	Key        *string           `yaml:"key"`
	IDs        map[string]string `yaml:"ids"`
	Inputs     map[string]string `yaml:"inputs"`
	InputTimes int               `yaml:"input_times"`
	View       bool              `yaml:"view"`
	Reset      bool              `yaml:"reset"`
	Force      bool              `yaml:"force"`
	ID         string            `yaml:"id"`
	Op         string            `yaml:"op"`
	Hold       string            `yaml:"hold"`
	HoldMs     int64             `yaml:"hold_ms"`
	WrongKeys  []int             `yaml:"wrong_keys"`
	Repeat     expr              `yaml:"repeat"`
	Calls      []callData        `yaml:"calls"`
}

// loadData decodes scenarios.yaml, refusing unknown fields, algorithms
// without scripts and policies that are neither spec/policies.yaml's nor
// defined there.
func loadData() (data, error) {
	var d data
	dec := yaml.NewDecoder(bytes.NewReader(scenariosYAML))
	dec.KnownFields(true)
	if err := dec.Decode(&d); err != nil {
		return d, fmt.Errorf("scenarios.yaml: %v", err)
	}
	for name, a := range d.Algorithms {
		if _, ok := scriptsOf(name); !ok {
			return d, fmt.Errorf("scenarios.yaml: no script for algorithm %s", name)
		}
		if len(a.Params) == 0 {
			return d, fmt.Errorf("scenarios.yaml: algorithm %s has no parameter sets", name)
		}
	}
	specs, err := specPolicies()
	if err != nil {
		return d, err
	}
	for name, p := range d.Policies {
		if _, ok := specs[name]; !ok && len(p.Limits) == 0 {
			return d, fmt.Errorf("scenarios.yaml: policy %s is not in spec/policies.yaml and gives no limits", name)
		}
	}
	return d, nil
}

// scriptsOf returns the scripts of an algorithm of the catalogue.
func scriptsOf(name string) (*kit.Scripts, bool) {
	return kit.LookupScripts(limitspec.Algorithm{Library: limitspec.Catalogue, Name: name})
}

// sortedKeys returns a map's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// expr is an integer expression in Go syntax: integers, symbols, + - * /
// % and parentheses; "" is 0.
type expr string

func (e expr) eval(sym map[string]int64) (int64, error) {
	if e == "" {
		return 0, nil
	}
	x, err := parser.ParseExpr(string(e))
	if err != nil {
		return 0, fmt.Errorf("%q: %v", e, err)
	}
	v, err := evalNode(x, sym)
	if err != nil {
		return 0, fmt.Errorf("%q: %v", e, err)
	}
	return v, nil
}

func evalNode(x ast.Expr, sym map[string]int64) (int64, error) {
	switch x := x.(type) {
	case *ast.BasicLit:
		if x.Kind == token.INT {
			return strconv.ParseInt(x.Value, 10, 64)
		}
	case *ast.Ident:
		if v, ok := sym[x.Name]; ok {
			return v, nil
		}
		return 0, fmt.Errorf("unknown symbol %s", x.Name)
	case *ast.ParenExpr:
		return evalNode(x.X, sym)
	case *ast.UnaryExpr:
		if x.Op == token.SUB {
			v, err := evalNode(x.X, sym)
			return -v, err
		}
	case *ast.BinaryExpr:
		a, err := evalNode(x.X, sym)
		if err != nil {
			return 0, err
		}
		b, err := evalNode(x.Y, sym)
		if err != nil {
			return 0, err
		}
		return arith(x.Op, a, b)
	}
	return 0, fmt.Errorf("not an integer expression")
}

func arith(op token.Token, a, b int64) (int64, error) {
	switch op {
	case token.ADD:
		return a + b, nil
	case token.SUB:
		return a - b, nil
	case token.MUL:
		return a * b, nil
	case token.QUO, token.REM:
		if b == 0 {
			return 0, fmt.Errorf("division by zero")
		}
		if op == token.QUO {
			return a / b, nil
		}
		return a % b, nil
	}
	return 0, fmt.Errorf("operator %s not allowed", op)
}

// expand resolves calls with the given symbols, repeats included, making
// each call with one (dt and cost resolved).
func expand[C any](calls []callData, sym map[string]int64, one func(c callData, dt, cost int64) C) ([]C, error) {
	var out []C
	for _, c := range calls {
		n := int64(1)
		if c.Repeat != "" {
			var err error
			if n, err = c.Repeat.eval(sym); err != nil {
				return nil, err
			}
			if n < 0 {
				return nil, fmt.Errorf("repeat %q is %d", c.Repeat, n)
			}
		}
		for range n {
			if c.Calls != nil {
				group, err := expand(c.Calls, sym, one)
				if err != nil {
					return nil, err
				}
				out = append(out, group...)
				continue
			}
			dt, err := c.DT.eval(sym)
			if err != nil {
				return nil, err
			}
			cost, err := c.Cost.eval(sym)
			if err != nil {
				return nil, err
			}
			out = append(out, one(c, dt, cost))
		}
	}
	return out, nil
}

// algorithmCall is a call of an algorithm's scenario; its key is k unless
// given.
func algorithmCall(c callData, dt, cost int64) call {
	out := call{dt: dt, key: "k", cost: cost, view: c.View, reset: c.Reset, force: c.Force, id: c.ID}
	if c.Key != nil {
		out.key = *c.Key
	}
	for name, v := range c.Inputs {
		if out.inputs == nil {
			out.inputs = map[string]string{}
		}
		out.inputs[name] = strings.Repeat(v, max(1, c.InputTimes))
	}
	return out
}

// policyCall is a call of a policy's scenario.
func policyCall(c callData, dt, cost int64) pcall {
	return pcall{dt: dt, ids: c.IDs, cost: cost, costs: c.Costs, reset: c.Reset, force: c.Force, id: c.ID,
		op: c.Op, hold: c.Hold, holdMs: c.HoldMs, wrongKeys: c.WrongKeys}
}

// builders make the scenarios too irregular for the notation of calls,
// from the symbols of a parameter set.
var builders = map[string]func(sym map[string]int64) ([]call, error){
	"hammer-every-ms-across-a-window": hammerAcrossWindow,
}

// hammerAcrossWindow spends the limit L at t0+100, then requests cost 1
// every ms until W+2 ms later; in a window W longer than 20 ms, only its
// first 5 and last 6 ms.
func hammerAcrossWindow(sym map[string]int64) ([]call, error) {
	W, ok := sym["W"]
	if !ok {
		return nil, fmt.Errorf("no symbol W (the window)")
	}
	calls := []call{{dt: 100, key: "k", cost: sym["L"]}}
	prev := int64(0)
	for d := int64(1); d <= W+2; d++ {
		if W > 20 && d > 5 && d < W-3 {
			continue // the long middle of a long window
		}
		calls = append(calls, call{dt: d - prev, key: "k", cost: 1})
		prev = d
	}
	return calls, nil
}

// algorithmScenarioCalls returns the calls of an algorithm's scenario from
// the data file.
func algorithmScenarioCalls(s scenarioData, sym map[string]int64) ([]call, error) {
	if s.Builder == "" {
		return expand(s.Calls, sym, algorithmCall)
	}
	if s.Calls != nil {
		return nil, fmt.Errorf("both calls and builder %s", s.Builder)
	}
	b, ok := builders[s.Builder]
	if !ok {
		return nil, fmt.Errorf("no builder %s", s.Builder)
	}
	return b(sym)
}
