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
			sp, err := LoadDir("../../spec")
			if err != nil {
				t.Fatal(err)
			}
			src := "policies:\n  - name: p\n    doc: d\n    limits:\n      - " + tt.limits + "\n"
			err = LoadPolicies(sp, "p.yaml", []byte(src))
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

// TestPolicyNameTaken: a policy may not take an algorithm's name, whose
// script file it would overwrite.
func TestPolicyNameTaken(t *testing.T) {
	sp, err := LoadDir("../../spec")
	if err != nil {
		t.Fatal(err)
	}
	src := "policies:\n  - name: gcra\n    doc: d\n    limits:\n      - {name: a, algorithm: gcra, identity: u, params: {burst: 1, rate: 1, period_ms: 1}}\n"
	if err := LoadPolicies(sp, "p.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "taken") {
		t.Fatalf("error %v, want the name refused", err)
	}
}

// TestClusterSafe: a policy is cluster safe when every limit counts one
// identity, never with a constant or a second identity.
func TestClusterSafe(t *testing.T) {
	sp, err := LoadDir("../../spec")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"ip_user": false, "burst_quota": true, "user_global": false}
	for _, p := range sp.Policies {
		if got, ok := want[p.Name]; ok && got != p.ClusterSafe() {
			t.Errorf("%s: ClusterSafe = %v, want %v", p.Name, p.ClusterSafe(), got)
		}
		delete(want, p.Name)
	}
	if len(want) > 0 {
		t.Errorf("the spec no longer has the policies %v this test checks", want)
	}
}

// TestPolicyNeedsTheContractsReply: a spec whose reply lacks the fields a
// policy combines (testdata/small.yaml) gets a clear error, not a script.
func TestPolicyNeedsTheContractsReply(t *testing.T) {
	sp, err := LoadFile("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := "policies:\n  - name: p\n    doc: d\n    limits:\n      - {name: a, algorithm: counter, identity: u, params: {limit: 5, gap_ms: 10}}\n"
	if err := LoadPolicies(sp, "p.yaml", []byte(src)); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(sp); err == nil || !strings.Contains(err.Error(), "reply fields") {
		t.Fatalf("Generate: %v, want the reply refused", err)
	}
}
