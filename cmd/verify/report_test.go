package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/limitspec/limitspec/conformance"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// fixture is a run of four vectors on three targets: every target
// passes gcra/a; gopherlua fails gcra/b; goimpl fails fixed_window/x;
// the cluster skips the policy over two identities.
func fixture() report {
	vectors := []conformance.Vector{
		{Name: "gcra/a", File: "v/gcra/a.json", Algorithm: "gcra"},
		{Name: "gcra/b", File: "v/gcra/b.json", Algorithm: "gcra", Comment: "a full key waits 143 ms"},
		{Name: "fixed_window/x", File: "v/fixed_window/x.json", Algorithm: "fixed_window"},
		{Name: "ip_user/seed", File: "v/ip_user/seed.json", Policy: &conformance.Policy{Name: "ip_user"}},
	}
	diff := "step 3 (t_ms 1700000000000, key \"k\", cost 1): differs from the vector (-want +got):\n  map[string]any{\n-   \"retry_after_ms\": int64(143),\n+   \"retry_after_ms\": int64(142),\n  }"
	var results []conformance.VectorResult
	for _, v := range vectors {
		for _, target := range []string{"goimpl", "gopherlua", "cluster"} {
			r := conformance.VectorResult{Vector: v.Name, File: v.File, Target: target, Steps: 4}
			switch {
			case v.Name == "gcra/b" && target == "gopherlua":
				r.Failed = diff
			case v.Name == "fixed_window/x" && target == "goimpl":
				r.Steps, r.Failed = 1, "step 0 (t_ms 1000, key \"k\", cost 1): expected a BADINPUT error, got {Allowed:true}"
			case v.Policy != nil && target == "cluster":
				r.Steps, r.Skipped = 0, "not applicable on this target: policy ip_user counts several identities"
			}
			results = append(results, r)
		}
	}
	return newReport(vectors, results)
}

// TestRenderings compares each rendering of the fixture with its golden
// file (go test ./cmd/verify -update rewrites them).
func TestRenderings(t *testing.T) {
	rep := fixture()
	for _, tt := range []struct {
		golden string
		render func(*bytes.Buffer)
	}{
		{"table.txt", func(b *bytes.Buffer) { writeTable(b, rep) }},
		{"failures.txt", func(b *bytes.Buffer) { writeFailures(b, rep, 10) }},
		{"failures-capped.txt", func(b *bytes.Buffer) { writeFailures(b, rep, 1) }},
		{"lines.txt", func(b *bytes.Buffer) { writeLines(b, rep) }},
		{"summary.txt", func(b *bytes.Buffer) { writeSummary(b, rep.Summary) }},
		{"report.json", func(b *bytes.Buffer) { writeJSON(b, rep) }},
	} {
		var b bytes.Buffer
		tt.render(&b)
		path := filepath.Join("testdata", tt.golden)
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), b.String()); diff != "" {
			t.Errorf("%s (-golden +got):\n%s", tt.golden, diff)
		}
	}
}

// TestReportCounts checks the fixture's counts, worked out from its
// description: 12 pairs, 2 failed, 1 skipped.
func TestReportCounts(t *testing.T) {
	want := summary{Passed: 9, Failed: 2, Skipped: 1, Vectors: 4, Targets: 3}
	if got := fixture().Summary; got != want {
		t.Errorf("summary %+v, want %+v", got, want)
	}
	var back report
	var b bytes.Buffer
	writeJSON(&b, fixture())
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Summary != want || len(back.Vectors) != 4 || back.Vectors[3].Policy != "ip_user" {
		t.Errorf("JSON read back: %+v, %v", back, err)
	}
}

func TestCell(t *testing.T) {
	for c, want := range map[count]string{
		{passed: 52}:            "52/52",
		{passed: 51, failed: 1}: "51/52 FAIL",
		{skipped: 20}:           "20 skipped",
		{passed: 3, skipped: 2}: "3/3, 2 skipped",
		{failed: 1, skipped: 1}: "0/1 FAIL, 1 skipped",
		{}:                      "0/0",
	} {
		if got := c.String(); got != want {
			t.Errorf("%+v: %q, want %q", c, got, want)
		}
	}
}

// TestUsageNamesEveryField checks that -h and docs/vectors.md name every
// field of a vector, a policy, a step and an expectation.
func TestUsageNamesEveryField(t *testing.T) {
	doc, err := os.ReadFile("../../docs/vectors.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []any{conformance.Vector{}, conformance.Policy{}, conformance.PolicyLimit{}, conformance.Step{}, conformance.Expect{}} {
		typ := reflect.TypeOf(x)
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if !strings.Contains(usage, name) {
				t.Errorf("-h does not name %s's field %s", typ.Name(), name)
			}
			if !bytes.Contains(doc, []byte("`"+name+"`")) {
				t.Errorf("docs/vectors.md does not name %s's field `%s`", typ.Name(), name)
			}
		}
	}
	for _, c := range conformance.Classes {
		if !strings.Contains(usage, string(c)) || !bytes.Contains(doc, []byte(c)) {
			t.Errorf("-h or docs/vectors.md does not name the class %s", c)
		}
	}
}
