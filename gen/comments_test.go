package gen

import (
	"slices"
	"strings"
	"testing"
)

// TestComments: the parser attaches each comment of the logic to the
// statement it explains, whole-line comments above it and the one at the
// end of its (last) line, and both emitters print them just above the
// statement's code.
func TestComments(t *testing.T) {
	sp := catalogue(t)
	var fw *Algorithm
	for _, a := range sp.Algorithms {
		if a.Name == "fixed_window" {
			fw = a
		}
	}
	const src = `# about lag
# and more
let lag = max(0, win.ts - now)   # ahead
let ok = lag < limit
if ok {   # the if's
  store win {
    ts = now,
    n = 1 } ttl window_ms   # at the end of the store
}
reply { allowed = ok, limit = limit, remaining = 0, retry_after_ms = 0,   # in the reply
  reset_after_ms = lag, delay_ms = 0 }
`
	body, err := parseLogic(sp, fw, nil, src, Pos{"test", 1})
	if err != nil {
		t.Fatal(err)
	}
	store := body[2].(*If).Then[0]
	for _, tt := range []struct {
		name string
		s    Stmt
		want []string
	}{
		{"a let", body[0], []string{"about lag", "and more", "ahead"}},
		{"a let without", body[1], nil},
		{"an if", body[2], []string{"the if's"}},
		{"a store over lines", store, []string{"at the end of the store"}},
		{"a reply over lines", body[3], []string{"in the reply"}},
	} {
		if got := tt.s.commented().Comments; !slices.Equal(got, tt.want) {
			t.Errorf("%s: comments %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestCommentsCarriedOver: every comment of the catalogue's logic and
// windows appears in the generated Lua and Go, on a line of its own.
func TestCommentsCarriedOver(t *testing.T) {
	sp := catalogue(t)
	files, err := Generate(sp, CatalogueOutput())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range sp.Algorithms {
		var comments []string
		walkStmtsOnly(a.Body, func(s Stmt) { comments = append(comments, s.commented().Comments...) })
		for _, c := range comments {
			n++
			for _, f := range []struct{ file, line string }{
				{"lua/" + a.Name + ".lua", "-- " + c}, {"goimpl/" + a.Name + "_gen.go", "// " + c},
			} {
				if !hasLine(string(files[f.file]), f.line) {
					t.Errorf("%s: no line %q", f.file, f.line)
				}
			}
		}
		for _, c := range a.WindowComments {
			n++
			if !hasLine(string(files["limits_gen.go"]), "// "+c) {
				t.Errorf("limits_gen.go: no line // %s", c)
			}
		}
	}
	if n < 40 {
		t.Errorf("%d comments in the catalogue's logic and windows; the test expects at least 40", n)
	}
}

// hasLine reports whether text has a line that is line after its
// indentation.
func hasLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimLeft(l, " \t") == line {
			return true
		}
	}
	return false
}
