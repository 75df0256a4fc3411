package main

import (
	"context"
	"flag"
	"math"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSmoke runs every figure at a small size on a throwaway
// redis-server (skipped without one) and checks that each table has a
// finite value in every cell.
func TestSmoke(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	o := options{
		serverBin: "redis-server", benchtime: "100x", heapKeys: 1000, rounds: 1, holdKeys: 2,
		cpu:  cpuOptions{Keys: 100, Decisions: 300, Clients: 4, Depth: 4, Rounds: 1},
		tput: throughputOptions{Keys: 100, Goroutines: 4, Warm: 10 * time.Millisecond, For: 50 * time.Millisecond, Rounds: 1},
	}
	if err := flag.Set("test.benchtime", o.benchtime); err != nil {
		t.Fatal(err)
	}
	all, err := selected(strings.Join(figures, ","))
	if err != nil {
		t.Fatal(err)
	}
	version, tables, err := redisFigures(context.Background(), o, all)
	if err != nil {
		t.Fatal(err)
	}
	if version == "" {
		t.Error("no redis-server version")
	}
	local, err := localFigures(o, all)
	if err != nil {
		t.Fatal(err)
	}
	tables = append(tables, local...)
	if want := len(figures) + 1; len(tables) != want { // holds measures two tables
		t.Fatalf("%d tables, want %d", len(tables), want)
	}
	for _, tab := range tables {
		checkCells(t, tab)
	}
	checkGoalRows(t, tables)
}

// checkCells checks that every cell of tab holds a finite value, at
// least 0.
func checkCells(t *testing.T, tab Table) {
	t.Helper()
	for _, r := range tab.Rows {
		for i, v := range r.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Errorf("%s: %s: %s = %v", tab.Title, r.Name, tab.Columns[i].Name, v)
			}
		}
	}
}

// checkGoalRows checks that every goal of the tables measured finds its
// rows in them; every goal's table must be one of the figures.
func checkGoalRows(t *testing.T, tables []Table) {
	t.Helper()
	titles := []string{titleRedisCPU, titleInstructions, titleInstructionParts, titleThroughput, titleDenied, titleRedisMemory, titleInProcess, titleHeap, titleHoldsRedis, titleHoldsInProcess}
	for _, g := range goals {
		tab, ok := tableTitled(tables, g.Table)
		if !ok {
			if !slices.Contains(titles, g.Table) {
				t.Errorf("goal %q: no figure %q", g.Name, g.Table)
			}
			continue
		}
		if line := g.check(tab); strings.HasPrefix(line[5], "skipped") {
			t.Errorf("goal %q: %s", g.Name, line[5])
		}
	}
}

// TestSmokeInstructionParts runs the parts figure at a small size on a
// redis-server under callgrind (skipped without valgrind), and checks
// that it has a row per script and a finite value in every cell but the
// peers' argument checks, which are not measured; a part may fall below
// 0 at this size, where a part is smaller than the counts' noise. It
// takes about 10 seconds (the instructions figure, which shares its
// counting, is left out: 41 scripts take twice as long).
func TestSmokeInstructionParts(t *testing.T) {
	for _, tool := range []string{"redis-server", "valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " not on PATH")
		}
	}
	if testing.Short() {
		t.Skip("-short")
	}
	o := options{serverBin: "redis-server", instr: instrOptions{Keys: 4, Decisions: 8, Depth: 4}}
	version, tables, err := callgrindFigures(context.Background(), o, map[string]bool{"redis-instruction-parts": true})
	if err != nil {
		t.Fatal(err)
	}
	if version == "" || len(tables) != 1 || len(tables[0].Rows) != 2*len(partsCases) {
		t.Fatalf("version %q, %d tables: %v", version, len(tables), tables)
	}
	for _, r := range tables[0].Rows {
		for i, v := range r.Values {
			peersChecks := !r.Ours && tables[0].Columns[i].Name == "argument checks"
			if math.IsInf(v, 0) || math.IsNaN(v) != peersChecks {
				t.Errorf("%s: %s = %v", r.Name, tables[0].Columns[i].Name, v)
			}
		}
	}
}
