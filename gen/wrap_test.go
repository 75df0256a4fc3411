package gen

import (
	"go/format"
	"slices"
	"strings"
	"testing"
)

// TestLineWidth: no line of a generated file, the catalogue's or a user
// package's, is longer than lineWidth.
func TestLineWidth(t *testing.T) {
	files, err := Generate(catalogue(t), CatalogueOutput())
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range userFiles(t) {
		files["user/"+name] = src
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	}) {
		for i, l := range strings.Split(string(files[name]), "\n") {
			if len(l) > lineWidth {
				t.Errorf("%s:%d: %d characters, more than %d: %.60s...", name, i+1, len(l), lineWidth, strings.TrimSpace(l))
			}
		}
	}
}

// TestWrap: a long line breaks after an operator or a comma at its
// outermost level, a long string splits in two, a comment between words,
// and a line with nowhere to break stays whole.
func TestWrap(t *testing.T) {
	long := strings.Repeat("x", 60)
	tests := []struct {
		name  string
		style wrapStyle
		line  string
		want  []string
	}{
		{"a short line", luaWrap, "  local a = b", []string{"  local a = b"}},
		{"a condition at and", luaWrap, "  if not (" + long + " > 1 and (" + long + " or y)) then",
			[]string{"  if not (" + long + " > 1 and", "      (" + long + " or y)) then"}},
		{"a table at its commas", luaWrap, "return {" + long + ", f(" + long + ", b), " + long + "}",
			[]string{"return {" + long + ",", "    f(" + long + ", b),", "    " + long + "}"}},
		{"a string in two", luaWrap, "return bad('" + long + " " + long + " " + long + "')",
			[]string{"return bad('" + long + " ' ..", "    '" + long + " " + long + "')"}},
		{"a Go string in two", goWrap, "\treturn errors.New(\"" + long + " " + long + " " + long + "\")",
			[]string{"\treturn errors.New(\"" + long + " \" +", "\t\t\"" + long + " " + long + "\")"}},
		{"a comment between words", goWrap, "\t// " + long + " " + long + " " + long,
			[]string{"\t// " + long, "\t// " + long, "\t// " + long}},
		{"nowhere to break", luaWrap, strings.Repeat("y", 200), []string{strings.Repeat("y", 200)}},
		{"not in a trailing comment", luaWrap, "f(a) -- " + long + ", " + long + ", " + long,
			[]string{"f(a) -- " + long + ", " + long + ", " + long}},
	}
	for _, tt := range tests {
		got := tt.style.wrapLine(tt.line)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
		for _, l := range got {
			if len(l) > lineWidth && len(got) > 1 {
				t.Errorf("%s: a piece of %d characters", tt.name, len(l))
			}
		}
	}
}

// TestFormatGoWraps: formatGo breaks a long Go line where gofmt keeps the
// break, and the result is gofmt's.
func TestFormatGoWraps(t *testing.T) {
	var w writer
	w.line("package p")
	w.line("func f(a, b int) bool {")
	w.line("return %s", strings.Repeat("a+b > 1 && ", 20)+"true")
	w.line("}")
	src, err := formatGo(w, "a test")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := format.Source(src); err != nil || string(again) != string(src) {
		t.Fatalf("not gofmt's: %v\n%s", err, src)
	}
	lines := strings.Split(string(src), "\n")
	if len(lines) < 6 {
		t.Errorf("the long line was not broken:\n%s", src)
	}
	for _, l := range lines {
		if len(l) > lineWidth {
			t.Errorf("a line of %d characters:\n%s", len(l), src)
		}
	}
}
