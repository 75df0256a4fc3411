package gen

import (
	"path"
	"strings"
	"testing"
)

// TestLibraryStatesHelpersOnce: the Functions library defines each shared
// helper once at its top level, and each of its functions holds its
// script's own code (a decision's from its exact checks on: before them
// it looks its parameters up among those found valid), math's locals it
// calls first, and not the script's header; every standalone script
// defines the helpers it calls itself (EVALSHA runs it alone), at its top
// or in the block that calls them.
func TestLibraryStatesHelpersOnce(t *testing.T) {
	files := userFiles(t)
	lib := string(files["lua/library.lua"])
	for _, h := range luaHelperList {
		def := "\nlocal function " + h.name + "("
		if n := strings.Count(lib, def); n != 1 {
			t.Errorf("the library defines %q at its top level %d times, want once", strings.TrimSpace(def), n)
		}
	}
	scripts := 0
	for p, b := range files {
		if path.Dir(p) != "lua" || !strings.HasSuffix(p, ".lua") || p == "lua/library.lua" {
			continue
		}
		scripts++
		src := string(b)
		for _, h := range luaHelperList {
			if luaCalls(src, h.name) && !strings.Contains(src, "local function "+h.name+"(") {
				t.Errorf("%s calls the helper %s but does not define it", p, h.name)
			}
		}
		want := "\n-- " + p + "\n"
		at := strings.Index(lib, want)
		if at < 0 {
			t.Errorf("the library has no function commented %q", "-- "+p)
			continue
		}
		body := lib[at:]
		body = body[strings.Index(body, "callback = function(KEYS, ARGV)\n")+len("callback = function(KEYS, ARGV)\n"):]
		body = body[:strings.Index(body, "\nend}")]
		declared, code := "", body
		if first, rest, ok := strings.Cut(body, "\n"); ok && strings.Contains(first, " = math.") {
			declared, code = first+"\n", rest
		}
		if want := luaMathLocals(code); declared != want {
			t.Errorf("the library's function of %s declares %q; want the math functions it calls, %q", p, declared, want)
		}
		if strings.Contains(code, "__valid[") { // a decision: its parameters remembered, then the script's code
			var found bool
			if _, code, found = strings.Cut(code, "if not checked then"); !found {
				t.Errorf("the library's function of %s remembers parameters but has no exact checks", p)
				continue
			}
		}
		if !strings.HasSuffix(src, code) {
			t.Errorf("the library's function of %s is not the script's own code", p)
		}
		if header, _, _ := strings.Cut(src, "\n"+code); strings.Contains(body, header) {
			t.Errorf("the library's function of %s repeats the script's header", p)
		}
	}
	if scripts == 0 {
		t.Fatal("no scripts")
	}
}
