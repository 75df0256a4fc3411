package gen

import (
	"path"
	"strings"
	"testing"
)

// TestLibraryStatesHelpersOnce: the Functions library defines each shared
// helper once, and each of its functions holds its script's own code,
// math's locals first, and not the script's header; every standalone
// script still defines the helpers itself (EVALSHA runs it alone).
func TestLibraryStatesHelpersOnce(t *testing.T) {
	files := userFiles(t)
	lib := string(files["lua/library.lua"])
	for _, def := range []string{"local function int(", "local function field(", "local function clip(", "local function num(", "local function split(", "local function keep_last("} {
		if n := strings.Count(lib, def); n != 1 {
			t.Errorf("the library defines %q %d times, want once", def, n)
		}
	}
	scripts := 0
	for p, b := range files {
		if path.Dir(p) != "lua" || !strings.HasSuffix(p, ".lua") || p == "lua/library.lua" {
			continue
		}
		scripts++
		src := string(b)
		if !strings.Contains(src, "local function int(") {
			t.Errorf("%s does not define the helpers itself", p)
		}
		want := "-- " + p + "\nredis.register_function{"
		at := strings.Index(lib, want)
		if at < 0 {
			t.Errorf("the library has no function commented %q", "-- "+p)
			continue
		}
		body := lib[at:]
		body = body[strings.Index(body, "callback = function(KEYS, ARGV)\n")+len("callback = function(KEYS, ARGV)\n"):]
		body = body[:strings.Index(body, "\nend}")]
		if !strings.HasPrefix(body, luaMathLocals) || !strings.HasSuffix(src, strings.TrimPrefix(body, luaMathLocals)) {
			t.Errorf("the library's function of %s is not the script's own code", p)
		}
		if header, _, _ := strings.Cut(src, luaMathLocals); strings.Contains(body, header) {
			t.Errorf("the library's function of %s repeats the script's header", p)
		}
	}
	if scripts == 0 {
		t.Fatal("no scripts")
	}
}
