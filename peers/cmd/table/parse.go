package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// report is one peer's verify run: the adapter's line (what is
// compared), and each vector's outcome in the order run.
type report struct {
	name, adapter string
	vectors       []string          // in verify's order
	outcome       map[string]string // by vector: "agrees (N steps)", or the first divergence
	passed, total int
}

var (
	resultLine = regexp.MustCompile(`^(PASS|FAIL|SKIP) (\S+) \[[^\]]*\] ?(.*)$`)
	stepLine   = regexp.MustCompile(`^step (\d+) \(([^)]*)\)(, params map\[[^\]]*\])?(, forced)?: (.*)$`)
	// expectedError begins the failure of a step that expects a refusal
	// (of a class, "a BADINPUT error", or of any, "an error").
	expectedError = regexp.MustCompile(`^expected an? (\S+ )?error, got `)
	diffLine      = regexp.MustCompile(`^([-+])\s+"([a-z_]+)":\s+\w+\(([^)]*)\),?$`)
)

// parse reads verify -v's lines: the adapter's first, then PASS, SKIP or
// FAIL per vector, a FAIL followed by its indented failure.
func parse(out []byte) (report, error) {
	r := report{outcome: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	var failing string
	var failure []string
	flush := func() {
		if failing != "" {
			r.outcome[failing] = summarize(failure)
		}
		failing, failure = "", nil
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") && failing != "" {
			failure = append(failure, strings.TrimSpace(line))
			continue
		}
		flush()
		m := resultLine.FindStringSubmatch(line)
		switch {
		case strings.HasPrefix(line, "exec:"):
			// "exec:NAME (COMMAND): ..." less the command, a temporary path
			name, rest, _ := strings.Cut(line, " (")
			_, rest, _ = strings.Cut(rest, "): ")
			r.adapter = name + ": " + rest
		case m == nil || m[1] == "SKIP":
		case m[1] == "PASS":
			r.vectors = append(r.vectors, m[2])
			r.outcome[m[2]] = "agrees (" + m[3] + ")"
			r.passed++
		default:
			r.vectors = append(r.vectors, m[2])
			failing = m[2]
		}
	}
	flush()
	r.total = len(r.vectors)
	if r.total == 0 {
		return r, errors.New("no vector ran")
	}
	return r, nil
}

// summarize shortens a failure to its step and what differs: each field
// as want → got, a refusal expected, or the peer's error.
func summarize(failure []string) string {
	if len(failure) == 0 {
		return "fails"
	}
	m := stepLine.FindStringSubmatch(failure[0])
	if m == nil {
		return failure[0]
	}
	step, msg := "step "+m[1]+m[4], m[5]
	switch {
	case expectedError.MatchString(msg) && strings.Contains(msg, " error, got {"):
		return step + ": no refusal; the vector expects one"
	case expectedError.MatchString(msg):
		return step + ": " + msg
	case strings.HasPrefix(msg, "unexpected error"):
		return step + ": " + strings.TrimPrefix(msg, "unexpected ")
	}
	want, got := map[string]string{}, map[string]string{}
	var fields []string
	for _, l := range failure[1:] {
		d := diffLine.FindStringSubmatch(strings.ReplaceAll(l, "\u00a0", " "))
		if d == nil {
			continue
		}
		if d[1] == "-" {
			want[d[2]] = d[3]
			fields = append(fields, d[2])
		} else {
			got[d[2]] = d[3]
		}
	}
	var parts []string
	for _, f := range fields {
		parts = append(parts, fmt.Sprintf("%s %s → %s", f, want[f], got[f]))
	}
	if len(parts) == 0 {
		return step + ": " + msg
	}
	return step + ": " + strings.Join(parts, ", ")
}

// markdown is the table: a row per vector, a column per peer.
func markdown(reports []report) string {
	var b strings.Builder
	for _, r := range reports {
		fmt.Fprintf(&b, "- **%s** agrees with %d of %d gcra vectors. %s\n", r.name, r.passed, r.total, r.adapter)
	}
	b.WriteString("\n| vector |")
	for _, r := range reports {
		b.WriteString(" " + r.name + " |")
	}
	b.WriteString("\n| --- |" + strings.Repeat(" --- |", len(reports)) + "\n")
	for _, v := range reports[0].vectors {
		b.WriteString("| " + v + " |")
		for _, r := range reports {
			b.WriteString(" " + strings.ReplaceAll(r.outcome[v], "|", `\|`) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}
