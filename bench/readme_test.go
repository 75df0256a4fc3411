package main

import (
	"strings"
	"testing"
)

func TestReplaceBetweenHeadline(t *testing.T) {
	doc := "# R\n\n" + headlineBeginMarker + "\nold\n" + headlineEndMarker + "\n\n" + beginMarker + "\nkept\n" + endMarker + "\n"
	got, err := replaceBetween(doc, headlineBeginMarker, headlineEndMarker, "new\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# R\n\n" + headlineBeginMarker + "\nnew\n" + headlineEndMarker + "\n\n" + beginMarker + "\nkept\n" + endMarker + "\n"
	if got != want {
		t.Errorf("replaceBetween:\n%q\nwant:\n%q", got, want)
	}
	if _, err := replaceSection("# R\n"+headlineBeginMarker+headlineEndMarker, "x"); err == nil {
		t.Error("replaceSection took the headline markers for the bench markers")
	}
}

func TestHeadline(t *testing.T) {
	tables := []Table{{
		Title:   "Speed",
		Columns: []Column{{Name: "ns/op", Better: Lower}, {Name: "allocs/op", Better: Lower}},
		Rows: []Row{
			{Group: "g", Name: "ours", Ours: true, Values: []float64{150, 0}},
			{Group: "g", Name: "peer", Values: []float64{100, 0}},
		},
	}}
	gs := []goal{
		{Name: "fast", Table: "Speed", Column: 0, Ours: "ours", Than: fastestPeer, Target: 1, Cause: "slow"},
		{Name: "no allocations", Table: "Speed", Column: 1, Ours: "ours", Target: 0},
	}
	report := "Measured 2026-11-27 on a CPU (2 cores), linux/amd64, go1.26.8, redis-server 7.0.15, with `cd bench && go run .`.\n\n" +
		tables[0].Markdown() + goalsTable(gs, tables)
	got := headline(report)
	want := "Measured 2026-11-27 on a CPU (2 cores), linux/amd64, go1.26.8, redis-server 7.0.15: 1 of 2 goals met.\n\n" +
		"| goal | target | measured | met |\n" +
		"| --- | --- | --- | --- |\n" +
		"| fast | ≤ 1.00× the fastest peer | 1.50× | no |\n" +
		"| no allocations | ≤ 0 | 0 | yes |\n" +
		"\nEach row compares what its goal names (batched or not, a cache of denials beside Redis round trips, the fastest peer of any algorithm); docs/performance.md gives every method and the peer behind each ratio.\n"
	if got != want {
		t.Errorf("headline:\n%s\nwant:\n%s", got, want)
	}
	if got := headline("Measured today on a CPU, with `x`.\n\nno goals\n"); !strings.Contains(got, "measured no goal") {
		t.Errorf("headline of a report without goals: %q", got)
	}
}
