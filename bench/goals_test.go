package main

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// goalTable is a table of fixed values for the goals' tests.
var goalTable = Table{
	Title:   "F",
	Columns: []Column{{"µs", Lower}, {"ops/s", Higher}},
	Rows: []Row{
		{Group: "g", Name: "ours", Ours: true, Values: []float64{5, 150}},
		{Group: "g", Name: "peer a", Values: []float64{10, 100}},
		{Group: "g", Name: "peer b", Values: []float64{4, math.NaN()}},
		{Group: "m", Name: "ours: `key`", Ours: true, Values: []float64{0, 1}},
	},
}

// TestGoalCheck checks each kind of goal's line on fixed values: a
// ratio to a named row or to the fastest peer, lower and higher is
// better, met and not (with its cause), a value of its own, and a row
// missing.
func TestGoalCheck(t *testing.T) {
	for _, c := range []struct {
		g    goal
		want []string
	}{
		{goal{"met", "F", 0, "ours", "peer a", 1, "slow"},
			[]string{"met", "F: µs", "≤ 1.00× peer a", "5 against 10", "0.50×", "yes", ""}},
		{goal{"not met", "F", 0, "ours", "peer a", 0.1, "slow"},
			[]string{"not met", "F: µs", "≤ 0.10× peer a", "5 against 10", "0.50×", "no", "slow"}},
		{goal{"higher", "F", 1, "ours", "peer a", 2, "few"},
			[]string{"higher", "F: ops/s", "≥ 2.00× peer a", "150 against 100", "1.50×", "no", "few"}},
		{goal{"fastest", "F", 0, "ours", fastestPeer, 1.5, "slow"},
			[]string{"fastest", "F: µs", "≤ 1.50× the fastest peer", "5 against 4 (peer b)", "1.25×", "yes", ""}},
		{goal{"value", "F", 0, "ours", "", 5, "slow"},
			[]string{"value", "F: µs", "≤ 5", "5", "—", "yes", ""}},
		{goal{"value, higher", "F", 1, "ours", "", 200, "few"},
			[]string{"value, higher", "F: ops/s", "≥ 200", "150", "—", "no", "few"}},
		{goal{"missing", "F", 0, "bound", fastestPeer, 1, "slow"},
			[]string{"missing", "F: µs", "≤ 1.00× the fastest peer", "—", "—", `skipped: no row "bound"`, ""}},
		{goal{"reference not measured", "F", 1, "ours", "peer b", 1, "slow"},
			[]string{"reference not measured", "F: ops/s", "≥ 1.00× peer b", "150", "—", `skipped: no row "peer b"`, ""}},
	} {
		if got := c.g.check(goalTable); !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.g.Name, got, c.want)
		}
	}
}

// TestGoalAbsolute checks a value goal that is not met, and a row whose
// name is followed by its key (the memory figure's).
func TestGoalAbsolute(t *testing.T) {
	g := goal{"allocs", "F", 0, "ours", "", 0, "allocates"}
	if got := g.check(Table{Title: "F", Columns: goalTable.Columns, Rows: []Row{{Name: "ours", Values: []float64{2, 0}}}}); got[5] != "no" || got[6] != "allocates" {
		t.Errorf("2 allocs against 0: %q", got)
	}
	if got := (goal{"key", "F", 0, "ours", "", 0, ""}).check(Table{Title: "F", Columns: goalTable.Columns, Rows: goalTable.Rows[3:]}); got[3] != "0" {
		t.Errorf("row named with its key: %q", got)
	}
}

// TestGoalsTable checks that a goal whose table was not measured is
// left out, and that no table at all gives no Goals table.
func TestGoalsTable(t *testing.T) {
	gs := []goal{{"here", "F", 0, "ours", "peer a", 1, ""}, {"elsewhere", "G", 0, "ours", "peer a", 1, ""}}
	got := goalsTable(gs, []Table{goalTable})
	if !strings.Contains(got, "| here |") || strings.Contains(got, "elsewhere") {
		t.Errorf("goalsTable:\n%s", got)
	}
	if got := goalsTable(gs, nil); got != "" {
		t.Errorf("goalsTable of no tables = %q", got)
	}
}

// TestGoalRatio: a ratio that two digits would round onto its target
// gets the digits that tell it apart; any other has two.
func TestGoalRatio(t *testing.T) {
	for _, tc := range []struct {
		v, ref, target float64
		want           string
	}{
		{71323, 71194, 1, "1.002×"},
		{70920, 71194, 1, "0.996×"},
		{1, 1, 1, "1.00×"},
		{2.98, 1, 2, "2.98×"},
		{1.65, 1, 2, "1.65×"},
	} {
		if got := goalRatio(tc.v, tc.ref, tc.target); got != tc.want {
			t.Errorf("goalRatio(%v, %v, %v) = %s; want %s", tc.v, tc.ref, tc.target, got, tc.want)
		}
	}
}
