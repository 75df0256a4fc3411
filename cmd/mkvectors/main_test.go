package main

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/limitspec/limitspec/conformance"
	"github.com/limitspec/limitspec/internal/oracle"
	"github.com/limitspec/limitspec/kit"
)

// TestGeneratedVectorsUpToDate regenerates in memory and compares with
// the files under vectors/.
func TestGeneratedVectorsUpToDate(t *testing.T) {
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		have, err := os.ReadFile(filepath.Join("..", "..", "vectors", name))
		if err != nil || !bytes.Equal(have, want) {
			t.Errorf("%s: stale vectors: run go run ./cmd/mkvectors", name)
		}
	}
	on, _ := filepath.Glob(filepath.Join("..", "..", "vectors", "*", "gen-*.json"))
	if len(on) != len(files) {
		t.Errorf("vectors/ holds %d generated files, mkvectors makes %d: run go run ./cmd/mkvectors", len(on), len(files))
	}
}

// TestOracleAgreesWithEveryVector replays every vector, hand-written ones
// included, on the reference model, which checks every expectation it
// states.
func TestOracleAgreesWithEveryVector(t *testing.T) {
	vectors, err := conformance.Load(filepath.Join("..", "..", "vectors"))
	if err != nil {
		t.Fatal(err)
	}
	steps, files := 0, ""
	for _, r := range conformance.Run(vectors, []conformance.Target{conformance.NewOracleTarget()}) {
		steps += r.Steps
		files += r.File + " "
		if !r.Passed() {
			t.Errorf("%s (%s): %s%s", r.Vector, r.File, r.Failed, r.Skipped)
		}
	}
	t.Logf("%d vectors, %d steps", len(vectors), steps)
	for _, name := range []string{"redis-cell-readme", "tiers-1s-10s-15s", "denied-not-recorded.json", "who-used-it"} {
		if !strings.Contains(files, name) {
			t.Errorf("the hand-written vector %s is missing", name)
		}
	}
}

// TestCodeNamesNoAlgorithmOrPolicy checks that the non-test Go files name
// no algorithm of the catalogue, no policy of scenarios.yaml, and no
// parameter: those live in scenarios.yaml. A parameter named like a word (limit, rate) is
// checked in string literals only, and not when it is also a reply field
// (the expectations name "limit").
func TestCodeNamesNoAlgorithmOrPolicy(t *testing.T) {
	var names []string
	params := map[string]bool{}
	for _, s := range kit.AllScripts() {
		names = append(names, s.ID.Name)
		for _, p := range s.Params {
			params[p.Name] = true
		}
	}
	d, err := loadData()
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range d.Policies {
		names = append(names, name)
		for q := range p.Params {
			params[q] = true
		}
	}
	for _, r := range kit.ReplyFields {
		delete(params, r)
	}
	for p := range params {
		if strings.ContainsAny(p, "_.") {
			names = append(names, p)
		}
	}
	files, _ := filepath.Glob("*.go")
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if bytes.Contains(src, []byte(n)) {
				t.Errorf("%s names %s: move it to scenarios.yaml", file, n)
			}
		}
		for _, lit := range stringLiterals(t, file, src) {
			if params[lit] {
				t.Errorf("%s names the parameter %q: move it to scenarios.yaml", file, lit)
			}
		}
	}
}

// stringLiterals returns the values of a Go file's string literals.
func stringLiterals(t *testing.T, file string, src []byte) []string {
	f, err := parser.ParseFile(token.NewFileSet(), file, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			out = append(out, v)
		}
		return true
	})
	return out
}

// TestDataCoversEveryAlgorithmAndPolicy checks that scenarios.yaml gives
// parameter sets to every algorithm of the catalogue and of the oracle,
// and data to every policy of spec/policies.yaml.
func TestDataCoversEveryAlgorithmAndPolicy(t *testing.T) {
	d, err := loadData()
	if err != nil {
		t.Fatal(err)
	}
	var scripts []string
	for _, s := range kit.AllScripts() {
		scripts = append(scripts, s.ID.Name)
	}
	if diff := cmp.Diff(scripts, sortedKeys(d.Algorithms)); diff != "" {
		t.Errorf("algorithms of package lua (-) and of scenarios.yaml (+):\n%s", diff)
	}
	if diff := cmp.Diff(oracle.Algorithms(), sortedKeys(d.Algorithms)); diff != "" {
		t.Errorf("algorithms of the oracle (-) and of scenarios.yaml (+):\n%s", diff)
	}
	specs, err := specPolicies()
	if err != nil {
		t.Fatal(err)
	}
	for name := range specs {
		if _, ok := d.Policies[name]; !ok {
			t.Errorf("policy %s: no data in scenarios.yaml", name)
		}
	}
}

// TestExpr checks the integer expressions of scenarios.yaml.
func TestExpr(t *testing.T) {
	sym := map[string]int64{"T0": t0, "B": 7, "L": 3}
	for e, want := range map[expr]int64{
		"": 0, "-5": -5, "100000000000 - 86400001": 99913599999, "B - 1 - T0 % B": 7 - 1 - t0%7,
		"(L + 1) * 2": 8, "L - 2 * 3": -3, "L / 2": 1,
	} {
		if got, err := e.eval(sym); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", e, got, err, want)
		}
	}
	for _, e := range []expr{"W / 2", "1.5", "1 / 0", "L % 0", "L << 2", `"x"`, "L +"} {
		if got, err := e.eval(sym); err == nil {
			t.Errorf("%q: %d, want an error", e, got)
		}
	}
}

// TestStringInputs: a request carries every string input its algorithm
// declares, by name, whatever their names: those a call gives, the
// others "<key>-<n>"; the vector writes the one named meta in the
// contract's field meta and the others in inputs (docs/vectors.md), and
// conformance reads them back as the same inputs.
func TestStringInputs(t *testing.T) {
	tests := []struct {
		declared []string
		given    map[string]string
		want     map[string]string
		json     string
	}{
		{nil, nil, nil, `{}`},
		{[]string{"meta"}, nil, map[string]string{"meta": "k-3"}, `{"meta":"k-3"}`},
		{[]string{"meta"}, map[string]string{"meta": "alice"}, map[string]string{"meta": "alice"}, `{"meta":"alice"}`},
		{[]string{"note"}, nil, map[string]string{"note": "k-3"}, `{"inputs":{"note":"k-3"}}`},
		{[]string{"meta", "note"}, map[string]string{"note": "x"},
			map[string]string{"meta": "k-3", "note": "x"}, `{"meta":"k-3","inputs":{"note":"x"}}`},
	}
	for _, tt := range tests {
		a := algorithm{scripts: &kit.Scripts{Inputs: tt.declared}}
		got := a.defaultInputs(call{key: "k", inputs: tt.given}, 3)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%v given %v: inputs (-want +got):\n%s", tt.declared, tt.given, diff)
		}
		var s conformance.Step
		setInputs(&s, got)
		b, err := json.Marshal(struct {
			Meta   *string           `json:"meta,omitempty"`
			Inputs map[string]string `json:"inputs,omitempty"`
		}{s.Meta, s.Inputs})
		if err != nil || string(b) != tt.json {
			t.Errorf("%v given %v: written %s, want %s", tt.declared, tt.given, b, tt.json)
		}
		var back conformance.Step
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, (&conformance.Vector{}).Request(back, nil).Inputs); diff != "" {
			t.Errorf("%v given %v: read back (-want +got):\n%s", tt.declared, tt.given, diff)
		}
	}
}
