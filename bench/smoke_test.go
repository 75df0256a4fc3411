package main

import (
	"context"
	"flag"
	"math"
	"os/exec"
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
		serverBin: "redis-server", benchtime: "100x", heapKeys: 1000, rounds: 1,
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
	if len(tables) != len(figures) {
		t.Fatalf("%d tables, want %d", len(tables), len(figures))
	}
	for _, tab := range tables {
		for _, r := range tab.Rows {
			for i, v := range r.Values {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Errorf("%s: %s: %s = %v", tab.Title, r.Name, tab.Columns[i].Name, v)
				}
			}
		}
	}
	checkGoalRows(t, tables)
}

// checkGoalRows checks that every goal finds its rows in the tables of a
// full run, but the rows not written yet (the bound handle's) and the
// tables a default run does not measure (the instructions').
func checkGoalRows(t *testing.T, tables []Table) {
	t.Helper()
	for _, g := range goals {
		tab, ok := tableTitled(tables, g.Table)
		if !ok {
			if g.Table != titleInstructions {
				t.Errorf("goal %q: no table %q", g.Name, g.Table)
			}
			continue
		}
		if line := g.check(tab); strings.HasPrefix(line[5], "skipped") && g.Ours != boundRow {
			t.Errorf("goal %q: %s", g.Name, line[5])
		}
	}
}
