package gen

import (
	"strings"
	"testing"
)

// TestPolicyRejects: each policy the loader must refuse, with the words
// its error must contain.
func TestPolicyRejects(t *testing.T) {
	tests := []struct {
		name, limits, want string
	}{
		{"unknown algorithm", `{name: a, algorithm: nope, identity: user, params: {}}`, `unknown algorithm "nope"`},
		{"no identity", `{name: a, algorithm: fixed_window, params: {limit: 1, window_ms: 1}}`, "either identity"},
		{"both identities", `{name: a, algorithm: fixed_window, identity: u, constant: g, params: {limit: 1, window_ms: 1}}`, "either identity"},
		{"brace in constant", `{name: a, algorithm: fixed_window, constant: "}g", params: {limit: 1, window_ms: 1}}`, "must not contain"},
		{"missing parameter", `{name: a, algorithm: fixed_window, identity: u, params: {limit: 1}}`, "parameter window_ms is missing"},
		{"unknown parameter", `{name: a, algorithm: fixed_window, identity: u, params: {limit: 1, window_ms: 1, x: 2}}`, `no parameter "x"`},
		{"out of domain", `{name: a, algorithm: fixed_window, identity: u, params: {limit: 0, window_ms: 1}}`, "parameter limit must be"},
		{"not an integer", `{name: a, algorithm: fixed_window, identity: u, params: {limit: ten, window_ms: 1}}`, "parameter limit must be"},
		{"limit twice", `{name: a, algorithm: fixed_window, identity: u, params: {limit: 1, window_ms: 1}}
      - {name: a, algorithm: gcra, identity: u, params: {burst: 1, rate: 1, period_ms: 1}}`, "limit a declared twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := catalogue(t)
			src := "policies:\n  - name: p\n    doc: d\n    limits:\n      - " + tt.limits + "\n"
			err := LoadPolicies(sp, "p.yaml", []byte(src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			line := "p.yaml:5:" // the limit's line
			if strings.Contains(tt.name, "twice") {
				line = "p.yaml:6:" // the second limit's
			}
			if !strings.Contains(err.Error(), line) {
				t.Errorf("error %v does not name %s", err, line)
			}
		})
	}
}

// TestReplyIsTheCatalogues: a spec whose reply is not the one the policy
// script and package kit combine results by (testdata/small.yaml's) gets
// a clear error, not a script.
func TestReplyIsTheCatalogues(t *testing.T) {
	sp, err := Load("small.yaml", []byte(mustRead(t, "testdata/small.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(sp, CatalogueOutput()); err == nil || !strings.Contains(err.Error(), "reply fields") {
		t.Fatalf("Generate: %v, want the reply refused", err)
	}
}
