package gen

import (
	"fmt"
	"strings"
	"testing"
)

// aggSpec is a spec with one list of up to max_entries values in
// [0, v_max], and a view that aggregates them (a list is read by views
// only).
func aggSpec(entries, vMax, max, require, total string) string {
	return fmt.Sprintf(`constants:
  NOW_MAX: 35184372088832
  COST_MAX: 9007199254740991
  MAX_SKEW_MS: 60000
reply:
  - {name: allowed, type: bool, doc: "whether the request was admitted"}
  - {name: limit, doc: "the largest cost admitted at once"}
  - {name: remaining, doc: "the largest cost allowed now"}
  - {name: retry_after_ms, doc: "-1"}
  - {name: reset_after_ms, doc: "0"}
  - {name: delay_ms, doc: "0"}
  - {name: tier, default: 0, doc: "0"}
algorithms:
  - name: agg
    doc: Aggregates a list.
    params:
      - {name: n_max, min: 1, max: %s, doc: "entries kept"}
      - {name: v_max, min: 0, max: %s, doc: "the largest value"}
    require: [%s]
    state:
      - name: log
        key: "{key}:log"
        type: list
        doc: the values
        max_entries: %s
        entry:
          - {name: v, min: 0, max: v_max, doc: "a value"}
      - name: seen
        key: "{key}:seen"
        type: string
        doc: the last call (a decision that writes nothing would be in flight)
        fields:
          - {name: ts, min: 0, max: NOW_MAX, default: 0, doc: "the last call"}
    clock: seen.ts
    logic: |
      store seen { ts = now } ttl 1000
      reply { allowed = true, limit = 1, remaining = 1, retry_after_ms = -1, reset_after_ms = 0, delay_ms = 0 }
    views:
      - name: all
        doc: The values, when their aggregate is not negative.
        logic: |
          let t = %s
          show log if t >= 0
`, entries, vMax, require, max, total)
}

// TestAggregateBounds pins the bound analysis of aggregates: a sum of at
// most E values, each at most V, is at most E * V, which needs a runtime
// check on the parameters exactly when it may pass 2^53-1.
func TestAggregateBounds(t *testing.T) {
	const sum = "sum(e in log: e.v)"
	tests := []struct {
		name        string
		entries     string // the largest n_max
		vMax        string // the largest v_max
		max         string // max_entries
		require     string
		total       string
		checks      []string // Format of each check, in order
		err         string   // the load error, if any
		checkedExpr string   // what the check message names
	}{
		{name: "small product", entries: "1000", vMax: "1000000000", max: "n_max", total: sum},
		{name: "product may pass", entries: "1000000", vMax: "1000000000000", max: "n_max", total: sum,
			checks: []string{"n_max * v_max <= 9007199254740991"}, checkedExpr: sum},
		{name: "product capped by a requirement", entries: "1000000", vMax: "1000000000000", max: "n_max", total: sum,
			require: `{expr: "n_max * v_max <= 1000000000000000", doc: "too large"}`},
		{name: "product at the limit", entries: "2", vMax: "4503599627370495", max: "n_max", total: sum},
		{name: "product one past the limit", entries: "2", vMax: "4503599627370496", max: "n_max", total: sum,
			checks: []string{"n_max * v_max <= 9007199254740991"}, checkedExpr: sum},
		{name: "literal max_entries", entries: "1", vMax: "3002399751580330", max: "3", total: sum},
		{name: "literal max_entries past", entries: "1", vMax: "3002399751580331", max: "3", total: sum,
			checks: []string{"3 * v_max <= 9007199254740991"}, checkedExpr: sum},
		{name: "a filter changes nothing", entries: "1000000", vMax: "1000000000000", max: "n_max", total: "sum(e in log where e.v > 1: e.v)",
			checks: []string{"n_max * v_max <= 9007199254740991"}, checkedExpr: "sum(e in log where e.v > 1: e.v)"},
		{name: "a larger value", entries: "1000000", vMax: "1000000000", max: "n_max", total: "sum(e in log: e.v * 10000)",
			checks: []string{"n_max * (v_max * 10000) <= 9007199254740991"}, checkedExpr: "sum(e in log: e.v * 10000)"},
		{name: "a count", entries: "9007199254740991", vMax: "1", max: "n_max", total: "sum(e in log: 1)"},
		{name: "reach sums the same way", entries: "1000000", vMax: "1000000000000", max: "n_max", total: "reach(e in log: e.v >= 5 then 1 else 0)",
			checks: []string{"n_max * v_max <= 9007199254740991"}, checkedExpr: "reach(e in log: e.v >= 5 then 1 else 0)"},
		{name: "last does not sum", entries: "1000000", vMax: "1000000000000", max: "n_max", total: "last(e in log: e.v else 0)"},
		{name: "past for every parameter value", entries: "200000000", vMax: "200000000", max: "134217728", total: "sum(e in log: e.v + 134217728)",
			err: "sum(e in log: e.v + 134217728) exceeds 2^53-1 for every parameter value"},
		{name: "negative values", entries: "10", vMax: "10", max: "n_max", total: "sum(e in log: e.v - 1)",
			err: "the values e.v - 1 summed by sum may be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp, err := Load("agg.yaml", []byte(aggSpec(tt.entries, tt.vMax, tt.max, tt.require, tt.total)))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a := sp.Algorithms[0]
			var got []string
			for _, c := range a.Checks {
				got = append(got, Format(c.Cond))
			}
			if strings.Join(got, "\n") != strings.Join(tt.checks, "\n") {
				t.Fatalf("checks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.checks, "\n"))
			}
			for _, c := range a.Checks {
				if want := "parameters too large for exact arithmetic: " + tt.checkedExpr + " could pass 2^53-1"; c.Msg != want {
					t.Errorf("message %q, want %q", c.Msg, want)
				}
			}
			// Both targets refuse the parameters with the check.
			files, err := Generate(sp, CatalogueOutput())
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range a.Checks {
				for _, f := range []string{"lua/agg.lua", "limits_gen.go"} {
					if !strings.Contains(string(files[f]), c.Msg) {
						t.Errorf("%s does not refuse with %q", f, c.Msg)
					}
				}
			}
		})
	}
}
