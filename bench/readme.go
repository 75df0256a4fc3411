package main

import (
	"fmt"
	"os"
	"strings"
)

// The markers around the generated part of README.md's "Performance"
// section.
const (
	beginMarker = "<!-- bench:begin -->"
	endMarker   = "<!-- bench:end -->"
)

// replaceSection puts body between doc's markers, in place of what was
// there; doc must hold each marker once, the begin marker first.
func replaceSection(doc, body string) (string, error) {
	if strings.Count(doc, beginMarker) != 1 || strings.Count(doc, endMarker) != 1 {
		return "", fmt.Errorf("want %s and %s once each", beginMarker, endMarker)
	}
	i := strings.Index(doc, beginMarker) + len(beginMarker)
	j := strings.Index(doc, endMarker)
	if j < i {
		return "", fmt.Errorf("%s comes before %s", endMarker, beginMarker)
	}
	return doc[:i] + "\n" + strings.TrimRight(body, "\n") + "\n" + doc[j:], nil
}

// updateReadme replaces the section of the file at path between the
// markers with body.
func updateReadme(path, body string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc, err := replaceSection(string(b), body)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}
