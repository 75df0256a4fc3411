package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// count is how one target fared on the vectors of one row.
type count struct{ passed, failed, skipped int }

// String is a table cell: the vectors passed of those run ("52/52"),
// FAIL when any failed, and those skipped.
func (c count) String() string {
	ran := c.passed + c.failed
	s := fmt.Sprintf("%d/%d", c.passed, ran)
	if c.failed > 0 {
		s += " FAIL"
	}
	switch {
	case c.skipped > 0 && ran == 0:
		s = fmt.Sprintf("%d skipped", c.skipped)
	case c.skipped > 0:
		s += fmt.Sprintf(", %d skipped", c.skipped)
	}
	return s
}

// section is a group of the table's rows: the vectors of algorithms, or
// those of policies, each row named by row.
type section struct {
	title string
	row   func(vectorReport) string
}

var sections = []section{
	{"algorithms", func(v vectorReport) string { return v.Algorithm }},
	{"policies", func(v vectorReport) string { return v.Policy }},
}

// writeTable writes a row per algorithm and per policy (the vectors that
// decide by it), sorted by name under their section's title, and a
// column per target.
func writeTable(w io.Writer, rep report) {
	rows := [][]string{append([]string{""}, rep.Targets...)}
	for _, s := range sections {
		counts := map[string]map[string]*count{} // by row, then target
		for _, v := range rep.Vectors {
			name := s.row(v)
			if name == "" {
				continue
			}
			if counts[name] == nil {
				counts[name] = map[string]*count{}
				for _, t := range rep.Targets {
					counts[name][t] = &count{}
				}
			}
			for _, r := range v.Results {
				c := counts[name][r.Target]
				switch r.Status {
				case statusPass:
					c.passed++
				case statusFail:
					c.failed++
				default:
					c.skipped++
				}
			}
		}
		if len(counts) == 0 {
			continue
		}
		rows = append(rows, []string{s.title})
		for _, name := range slices.Sorted(maps.Keys(counts)) {
			row := []string{"  " + name}
			for _, t := range rep.Targets {
				row = append(row, counts[name][t].String())
			}
			rows = append(rows, row)
		}
	}
	writeColumns(w, rows)
}

// writeColumns writes rows as left-aligned columns two spaces apart; a
// row of one cell (a section's title) takes no part in the widths.
func writeColumns(w io.Writer, rows [][]string) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if len(r) == 1 {
				break
			}
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i < len(r)-1 {
				c += strings.Repeat(" ", widths[i]-len(c)+2)
			}
			b.WriteString(c)
		}
		fmt.Fprintln(w, b.String())
	}
}
