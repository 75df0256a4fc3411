package main

import (
	"fmt"
	"os"
	"strings"
)

// The markers around the generated part of docs/performance.md (the
// whole report, written by -doc) and around the README's headline (the
// Goals in short, written by -readme).
const (
	beginMarker         = "<!-- bench:begin -->"
	endMarker           = "<!-- bench:end -->"
	headlineBeginMarker = "<!-- bench:headline:begin -->"
	headlineEndMarker   = "<!-- bench:headline:end -->"
)

// replaceSection puts body between doc's bench markers, in place of what
// was there; doc must hold each marker once, the begin marker first.
func replaceSection(doc, body string) (string, error) {
	return replaceBetween(doc, beginMarker, endMarker, body)
}

// replaceBetween puts body between begin and end in doc, in place of what
// was there; doc must hold each marker once, begin first.
func replaceBetween(doc, begin, end, body string) (string, error) {
	if strings.Count(doc, begin) != 1 || strings.Count(doc, end) != 1 {
		return "", fmt.Errorf("want %s and %s once each", begin, end)
	}
	i := strings.Index(doc, begin) + len(begin)
	j := strings.Index(doc, end)
	if j < i {
		return "", fmt.Errorf("%s comes before %s", end, begin)
	}
	return doc[:i] + "\n" + strings.TrimRight(body, "\n") + "\n" + doc[j:], nil
}

// updateDoc replaces the section of the file at path between the bench
// markers with the report.
func updateDoc(path, report string) error {
	return updateFile(path, beginMarker, endMarker, report)
}

// updateHeadline replaces the section of the file at path between the
// headline markers with the report's headline.
func updateHeadline(path, report string) error {
	return updateFile(path, headlineBeginMarker, headlineEndMarker, headline(report))
}

// updateFile replaces the section of the file at path between begin and
// end with body.
func updateFile(path, begin, end, body string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc, err := replaceBetween(string(b), begin, end, body)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}

// headline is the report's Goals in short, for the README: the machine
// and versions of the run, how many goals were met, and a row per goal
// with its target, the ratio measured (or the value, for a goal of a
// value) and whether it was met. The why of a goal not met stays in the
// full report.
func headline(report string) string {
	var b strings.Builder
	env, _, _ := strings.Cut(report, "\n")
	env, _, _ = strings.Cut(env, ", with `")
	env = strings.TrimPrefix(env, "Measured ")
	rows := goalRows(report)
	if len(rows) == 0 {
		fmt.Fprintf(&b, "The run of %s measured no goal.\n", env)
		return b.String()
	}
	met := 0
	for _, r := range rows {
		if r["met"] == "yes" {
			met++
		}
	}
	fmt.Fprintf(&b, "Measured %s: %d of %d goals met.\n\n", env, met, len(rows))
	writeRow(&b, []string{"goal", "target", "measured", "met"})
	writeRow(&b, []string{"---", "---", "---", "---"})
	for _, r := range rows {
		measured := r["ratio"]
		if measured == "" || measured == "—" {
			measured = r["measured"]
		}
		writeRow(&b, []string{r["goal"], r["target"], measured, r["met"]})
	}
	b.WriteString("\nEach row compares what its goal names (batched or not, a cache of denials beside Redis round trips, the fastest peer of any algorithm); docs/performance.md gives every method and the peer behind each ratio.\n")
	return b.String()
}

// goalRows reads the rows of the report's Goals table (goalsTable), each
// cell by its column's name.
func goalRows(report string) []map[string]string {
	_, goals, ok := strings.Cut(report, "### Goals\n")
	if !ok {
		return nil
	}
	var head []string
	var rows []map[string]string
	started := false
	for line := range strings.SplitSeq(goals, "\n") {
		if !strings.HasPrefix(line, "| ") {
			if started {
				break
			}
			continue
		}
		started = true
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |"), " | ")
		switch {
		case head == nil:
			head = cells
		case strings.Trim(cells[0], "-") == "":
		default:
			r := map[string]string{}
			for i, c := range cells {
				if i < len(head) {
					r[head[i]] = strings.TrimSpace(c)
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}
