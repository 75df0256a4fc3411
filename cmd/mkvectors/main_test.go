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
	"github.com/limitspec/limitspec/internal/conformance"
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
// included, through the oracle and checks every expectation it states.
func TestOracleAgreesWithEveryVector(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "vectors", "*", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no vectors found: %v", err)
	}
	steps := 0
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var head struct{ Policy json.RawMessage }
		if err := json.Unmarshal(b, &head); err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if head.Policy != nil {
			steps += checkPolicyVector(t, path, b)
		} else {
			steps += checkAlgorithmVector(t, path, b)
		}
	}
	t.Logf("%d vectors, %d steps", len(paths), steps)
	all := strings.Join(paths, " ")
	for _, name := range []string{"redis-cell-readme", "tiers-1s-10s-15s", "denied-not-recorded.json", "who-used-it"} {
		if !strings.Contains(all, name) {
			t.Errorf("the hand-written vector %s is missing", name)
		}
	}
}

// checkAlgorithmVector replays an algorithm's vector through the oracle
// and checks every expectation it states; it returns the steps checked.
func checkAlgorithmVector(t *testing.T, path string, b []byte) int {
	t.Helper()
	var v struct {
		Name      string
		Algorithm string
		Params    map[string]json.Number
		Steps     []struct {
			T         int64 `json:"t_ms"`
			Key       string
			Cost      *json.Number
			Meta      *string
			View      string
			Reset     bool
			Force     bool
			Params    map[string]json.Number // from this step on
			WrongType json.RawMessage        `json:"wrong_type"` // true, or the places of the keys
			Expect    map[string]any
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Errorf("%s: %v", path, err)
		return 0
	}
	store := oracle.NewStore()
	limit := func(raw map[string]json.Number) (oracle.Model, error) {
		params := map[string]int64{}
		for k, n := range raw {
			i, err := n.Int64()
			if err != nil {
				return nil, os.ErrInvalid
			}
			params[k] = i
		}
		return store.Limit(v.Algorithm, params)
	}
	m, mErr := limit(v.Params)
	for i, s := range v.Steps {
		where := func() string { return v.Name + " step " + strconv.Itoa(i) }
		if s.Params != nil {
			m, mErr = limit(s.Params)
		}
		wantErr := s.Expect["error"] == true
		if s.View != "" {
			checkView(t, where(), m, mErr, s.View, s.Key, s.T, s.Expect)
			continue
		}
		if s.Reset {
			err := mErr
			if err == nil {
				err = m.(oracle.Resetter).Reset(s.Key)
			}
			checkReset(t, where(), err, s.Expect)
			continue
		}
		cost, costErr := int64(1), error(nil)
		if s.Cost != nil {
			cost, costErr = s.Cost.Int64()
		}
		if len(s.WrongType) > 0 && string(s.WrongType) != "false" {
			if !wantErr {
				t.Errorf("%s: a wrong_type step must expect an error", where())
			}
			continue
		}
		if mErr != nil || costErr != nil {
			if !wantErr {
				t.Errorf("%s: refused input (%v %v), but the vector expects %v", where(), mErr, costErr, s.Expect)
			}
			continue
		}
		meta := ""
		if s.Meta != nil {
			meta = *s.Meta
		}
		decide := m.Decide
		if s.Force {
			decide = m.Force
		}
		r, err := decide(s.Key, s.T, cost, meta)
		if (err != nil) != wantErr {
			t.Errorf("%s: oracle error %v, vector expects %v", where(), err, s.Expect)
			continue
		}
		if err != nil {
			continue
		}
		got := map[string]any{
			"allowed": r.Allowed, "limit": r.Limit, "remaining": r.Remaining,
			"retry_after_ms": r.RetryAfterMs, "reset_after_ms": r.ResetAfterMs, "delay_ms": r.DelayMs,
			"tier": r.Tier,
		}
		for k, want := range s.Expect {
			g, ok := got[k]
			if !ok {
				t.Errorf("%s: unknown expectation %q", where(), k)
				continue
			}
			if w, isNum := want.(json.Number); isNum {
				if wi, _ := w.Int64(); g != wi {
					t.Errorf("%s: %s = %v by the oracle, %v in the vector", where(), k, g, want)
				}
			} else if g != want {
				t.Errorf("%s: %s = %v by the oracle, %v in the vector", where(), k, g, want)
			}
		}
	}
	return len(v.Steps)
}

// checkView checks a read-back step: {"entries": [[t_ms, cost, meta], ...]}
// or {"error": true}.
func checkView(t *testing.T, where string, m oracle.Model, mErr error, view, key string, now int64, expect map[string]any) {
	t.Helper()
	wantErr := expect["error"] == true
	if view != "entries" {
		t.Errorf("%s: unknown view %q", where, view)
		return
	}
	lister, ok := m.(oracle.EntryLister)
	if mErr != nil || !ok {
		if !wantErr {
			t.Errorf("%s: no entries to read (%v), but the vector expects %v", where, mErr, expect)
		}
		return
	}
	entries, err := lister.Entries(key, now)
	if (err != nil) != wantErr {
		t.Errorf("%s: oracle error %v, vector expects %v", where, err, expect)
		return
	}
	if err != nil {
		return
	}
	if len(expect) != 1 || expect["entries"] == nil {
		t.Errorf("%s: a read-back expects exactly entries, not %v", where, expect)
		return
	}
	got := [][]any{}
	for _, e := range entries {
		got = append(got, []any{e.TMs, e.Cost, e.Meta})
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(expect["entries"])
	if !bytes.Equal(g, w) {
		t.Errorf("%s: entries %s by the oracle, %s in the vector", where, g, w)
	}
}

// checkPolicyVector replays a policy's vector through the oracle's model
// of the policy it defines, and checks every expectation; it returns the
// steps checked.
func checkPolicyVector(t *testing.T, path string, b []byte) int {
	t.Helper()
	var v struct {
		Name   string
		Policy *conformance.Policy
		Steps  []struct {
			T         int64 `json:"t_ms"`
			IDs       map[string]string
			Cost      *json.Number
			Reset     bool
			Force     bool
			WrongType json.RawMessage `json:"wrong_type"`
			Expect    map[string]any
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Errorf("%s: %v", path, err)
		return 0
	}
	m, mErr := conformance.OraclePolicy(v.Policy)
	for i, s := range v.Steps {
		where := v.Name + " step " + strconv.Itoa(i)
		wantErr := s.Expect["error"] == true
		if s.Reset {
			err := mErr
			if err == nil {
				err = m.Reset(s.IDs)
			}
			checkReset(t, where, err, s.Expect)
			continue
		}
		cost, costErr := int64(1), error(nil)
		if s.Cost != nil {
			cost, costErr = s.Cost.Int64()
		}
		if len(s.WrongType) > 0 || mErr != nil || costErr != nil {
			if !wantErr {
				t.Errorf("%s: refused or wrong-type step, but the vector expects %v", where, s.Expect)
			}
			continue
		}
		decide := m.Decide
		if s.Force {
			decide = m.Force
		}
		r, err := decide(s.IDs, s.T, cost)
		if (err != nil) != wantErr {
			t.Errorf("%s: oracle error %v, vector expects %v", where, err, s.Expect)
			continue
		}
		if err != nil {
			continue
		}
		got, _ := json.Marshal(policyExpect(r))
		var g, w any
		json.Unmarshal(got, &g)
		want, _ := json.Marshal(s.Expect)
		json.Unmarshal(want, &w)
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("%s: the oracle differs from the vector (-vector +oracle):\n%s", where, diff)
		}
	}
	return len(v.Steps)
}

// checkReset checks a reset step: {"error": false} when the oracle
// deleted the state, {"error": true} when it refused.
func checkReset(t *testing.T, where string, err error, expect map[string]any) {
	t.Helper()
	if len(expect) != 1 || expect["error"] != (err != nil) {
		t.Errorf("%s: reset by the oracle: %v; the vector expects %v", where, err, expect)
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
