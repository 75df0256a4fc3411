package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestTableMarkdown checks the Markdown of a table with fixed values:
// ratios to the best peer of each group, lower and higher is better, a
// value not measured, a group without a peer.
func TestTableMarkdown(t *testing.T) {
	tab := Table{
		Title:   "A figure",
		Notes:   []string{"How it was measured."},
		Columns: []Column{{"µs", Lower}, {"ops/s", Higher}},
		Rows: []Row{
			{Group: "gcra", Name: "ours", Ours: true, Values: []float64{5, 3000}},
			{Group: "gcra", Name: "peer a", Values: []float64{10, 1500}},
			{Group: "gcra", Name: "peer b", Values: []float64{4, math.NaN()}},
			{Group: "solo", Name: "ours alone", Ours: true, Values: []float64{2.5, 123456.7}},
		},
	}
	want := `### A figure

How it was measured.

| compared | limiter | µs (lower is better) | ops/s (higher is better) |
| --- | --- | --- | --- |
| gcra | ours | 5 (1.25×) | 3,000 (2.00×) |
| gcra | peer a | 10 (2.50×) | 1,500 (1.00×) |
| gcra | peer b | 4 (1.00×) | — |
| solo | ours alone | 2.50 | 123,457 |

`
	if got := tab.Markdown(); got != want {
		t.Errorf("Markdown:\n%s\nwant:\n%s", got, want)
	}
}

// TestTableOneGroup checks that a table of one group has no group column.
func TestTableOneGroup(t *testing.T) {
	tab := Table{Title: "T", Columns: []Column{{"decisions/s", Higher}}, Rows: []Row{
		{Name: "ours", Ours: true, Values: []float64{38784.2}},
		{Name: "peer", Values: []float64{51895}},
	}}
	want := "### T\n\n| limiter | decisions/s (higher is better) |\n| --- | --- |\n| ours | 38,784 (0.75×) |\n| peer | 51,895 (1.00×) |\n\n"
	if got := tab.Markdown(); got != want {
		t.Errorf("Markdown:\n%q\nwant:\n%q", got, want)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "0"}, {5, "5"}, {8.294, "8.29"}, {25.24, "25.2"}, {99.96, "100"}, {9.996, "10.0"}, {100.4, "100"}, {1234567, "1,234,567"}, {-1234, "-1,234"}} {
		if got := formatValue(c.v); got != c.want {
			t.Errorf("formatValue(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		v, best float64
		want    string
	}{{8.29, 5.33, "1.56×"}, {0, 0, "1.00×"}, {5, 0, "—"}, {1, 4, "0.25×"}, {1, 10, "0.10×"}, {21, 5000, "0.0042×"}, {0, 7, "0.00×"}} {
		if got := formatRatio(c.v, c.best); got != c.want {
			t.Errorf("formatRatio(%v, %v) = %q, want %q", c.v, c.best, got, c.want)
		}
	}
}

func TestMedian(t *testing.T) {
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median of 3, 1, 2 = %v", got)
	}
	if got := median([]float64{4, 1, 2, 3}); got != 2.5 {
		t.Errorf("median of 4, 1, 2, 3 = %v", got)
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is not NaN")
	}
}

func TestReplaceSection(t *testing.T) {
	doc := "# R\n\n## Performance\n\n" + beginMarker + "\nold\nlines\n" + endMarker + "\n\n## Next\n"
	got, err := replaceSection(doc, "new\n\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# R\n\n## Performance\n\n" + beginMarker + "\nnew\n" + endMarker + "\n\n## Next\n"
	if got != want {
		t.Errorf("replaceSection:\n%q\nwant:\n%q", got, want)
	}
	for _, bad := range []string{"no markers", endMarker + beginMarker, beginMarker + beginMarker + endMarker} {
		if _, err := replaceSection(bad, "x"); err == nil {
			t.Errorf("replaceSection(%q) did not fail", bad)
		}
	}
}

func TestEnvironmentMarkdown(t *testing.T) {
	e := Environment{Date: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC), CPU: "AMD EPYC", Cores: 2,
		Platform: "linux/amd64", Go: "go1.26.8", Redis: "7.0.15",
		Peers:   []Module{{"golang.org/x/time", "v0.16.0"}, {"github.com/go-redis/redis_rate/v10", "v10.0.1"}},
		GoRedis: Module{"github.com/redis/go-redis/v9", "v9.23.0"}, Command: "cd bench && go run ."}
	got := e.Markdown()
	for _, want := range []string{"Measured 2026-11-26 on AMD EPYC (2 cores), linux/amd64, go1.26.8, redis-server 7.0.15, with `cd bench && go run .`.",
		"golang.org/x/time v0.16.0, github.com/go-redis/redis_rate/v10 v10.0.1", "github.com/redis/go-redis/v9 v9.23.0"} {
		if !strings.Contains(got, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, got)
		}
	}
}

func TestSelected(t *testing.T) {
	want, err := selected("redis-cpu, heap")
	if err != nil || !want["redis-cpu"] || !want["heap"] || len(want) != 2 {
		t.Errorf("selected = %v, %v", want, err)
	}
	if _, err := selected("redis,memory"); err == nil {
		t.Error("an unknown figure was accepted")
	}
}

// TestLimits checks that every limit is one the spec accepts and that
// the peers' limits say the same: a burst of Amount, Amount per Per.
func TestLimits(t *testing.T) {
	if err := checkLimits(); err != nil {
		t.Fatal(err)
	}
	if redisRateLimit.Burst != int(gcraLimit.Burst) || redisRateLimit.Rate != int(gcraLimit.Rate) || redisRateLimit.Period != gcraLimit.Period {
		t.Errorf("redis_rate's limit %+v is not %+v", redisRateLimit, gcraLimit)
	}
	if throttledQuota.MaxBurst+1 != int(gcraLimit.Burst) {
		t.Errorf("throttled admits %d at once, not %d", throttledQuota.MaxBurst+1, gcraLimit.Burst)
	}
}
