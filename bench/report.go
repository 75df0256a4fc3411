package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The figures' titles, by which the goals find them.
const (
	titleRedisCPU         = "Redis CPU per admitted decision"
	titleInstructions     = "Redis instructions per admitted decision"
	titleInstructionParts = "Redis instructions per admitted decision, by part"
	titleThroughput       = "Decisions per second through one Redis"
	titleDenied           = "Denied decisions on a hot key"
	titleRedisMemory      = "Redis memory per key"
	titleInProcess        = "In-process decisions on an existing key"
	titleHeap             = "Heap per tracked key, in process"
	titleHoldsRedis       = "Redis CPU of holds beside a decision"
	titleHoldsInProcess   = "In-process holds beside a decision"
)

// Better says which way a column's values improve.
type Better int

const (
	// Lower: smaller values are better (time, memory, CPU).
	Lower Better = iota
	// Higher: larger values are better (throughput).
	Higher
)

func (b Better) String() string {
	if b == Higher {
		return "higher is better"
	}
	return "lower is better"
}

// Column is one measured quantity of a table.
type Column struct {
	Name   string
	Better Better
}

// Row is one limiter's values, a value per column; NaN is "not
// measured". Rows of one Group are compared with each other: each value
// is printed with its ratio to the best peer's (Ours false) value of the
// group in that column.
type Row struct {
	Group  string
	Name   string
	Ours   bool
	Values []float64
}

// Table is one figure: a title, the notes that say how it was measured,
// and its rows.
type Table struct {
	Title   string
	Notes   []string
	Columns []Column
	Rows    []Row
}

// Markdown writes t as a heading, its notes and a Markdown table. A
// table whose rows all share one group has no group column.
func (t Table) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", t.Title)
	for _, n := range t.Notes {
		b.WriteString(n + "\n\n")
	}
	grouped := t.grouped()
	var head []string
	if grouped {
		head = append(head, "compared")
	}
	head = append(head, "limiter")
	for _, c := range t.Columns {
		head = append(head, fmt.Sprintf("%s (%s)", c.Name, c.Better))
	}
	writeRow(&b, head)
	rule := make([]string, len(head))
	for i := range rule {
		rule[i] = "---"
	}
	writeRow(&b, rule)
	for _, r := range t.Rows {
		var cells []string
		if grouped {
			cells = append(cells, r.Group)
		}
		cells = append(cells, r.Name)
		for i := range t.Columns {
			cells = append(cells, t.cell(r, i))
		}
		writeRow(&b, cells)
	}
	b.WriteString("\n")
	return b.String()
}

// grouped says whether the rows belong to more than one group.
func (t Table) grouped() bool {
	for _, r := range t.Rows {
		if r.Group != t.Rows[0].Group {
			return true
		}
	}
	return false
}

// cell is row r's value in column i with its ratio to the best peer of
// its group: "5.80 (0.71×)"; "—" where not measured, the value alone
// where the group has no peer measured.
func (t Table) cell(r Row, i int) string {
	v := r.Values[i]
	if math.IsNaN(v) {
		return "—"
	}
	best, ok := t.bestPeer(r.Group, i)
	if !ok {
		return formatValue(v)
	}
	return formatValue(v) + " (" + formatRatio(v, best) + ")"
}

// bestPeer is the best value of a peer of group in column i.
func (t Table) bestPeer(group string, i int) (float64, bool) {
	best, found := 0.0, false
	for _, r := range t.Rows {
		v := r.Values[i]
		if r.Ours || r.Group != group || math.IsNaN(v) {
			continue
		}
		if !found || (t.Columns[i].Better == Lower && v < best) || (t.Columns[i].Better == Higher && v > best) {
			best, found = v, true
		}
	}
	return best, found
}

// writeRow writes one Markdown table row.
func writeRow(b *strings.Builder, cells []string) {
	b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

// formatValue prints a figure with the precision it deserves: whole
// numbers and values of 100 or more as integers with thousands
// separators, others with three significant digits at most.
func formatValue(v float64) string {
	switch a := math.Abs(v); {
	case v == math.Trunc(v) || a >= 99.95:
		return groupThousands(int64(math.Round(v)))
	case a >= 9.995:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// formatRatio is v / best as "0.71×", with two significant digits
// below 0.1 ("0.0042×"); "—" when best is 0 (no ratio).
func formatRatio(v, best float64) string {
	if best == 0 {
		if v == 0 {
			return "1.00×"
		}
		return "—"
	}
	r := v / best
	if r != 0 && math.Abs(r) < 0.0995 {
		return strconv.FormatFloat(r, 'g', 2, 64) + "×"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "×"
}

// groupThousands writes n with a comma every three digits.
func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// median is the middle value of xs (the mean of the two middle ones
// when their number is even); NaN when xs is empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
