package limitspec_test

import (
	"go/version"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/limitspec/limitspec/internal/modtest"
)

const module = "github.com/limitspec/limitspec"

// TestDependencies holds the architecture in place: the root package is
// the contract and imports the standard library alone; internal/keyed,
// internal/limiters, internal/refusal (every constructor's refusal) and
// internal/sfv (the header fields' values), which the adapters share,
// know only the contract; and the adapters
// (fallback, httplimit, lease, denials) build on the contract and them,
// with no Redis client, no Lua VM and no implementation package.
func TestDependencies(t *testing.T) {
	t.Run("contract", func(t *testing.T) {
		out := goList(t, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
		if out = slices.DeleteFunc(out, func(p string) bool { return p == module }); len(out) > 0 {
			t.Errorf("the root package depends on %q, outside the standard library", out)
		}
	})
	adapters := []string{"./fallback", "./httplimit", "./lease", "./denials"}
	tests := []struct {
		pkgs      []string
		forbidden []string
		allowed   []string
	}{
		{[]string{"./internal/keyed", "./internal/limiters", "./internal/refusal", "./internal/sfv"}, []string{module + "/"}, nil},
		{adapters, []string{
			"github.com/redis/", "github.com/yuin/gopher-lua", "github.com/alicebob/",
			module + "/goimpl", module + "/redislimit", module + "/kit", module + "/lua", module + "/internal/",
		}, []string{module + "/internal/keyed", module + "/internal/limiters", module + "/internal/refusal", module + "/internal/sfv"}},
	}
	for _, tt := range tests {
		deps := goList(t, append([]string{"-deps"}, tt.pkgs...)...)
		if len(deps) < 10 {
			t.Fatalf("go list -deps %v listed %d packages: %q", tt.pkgs, len(deps), deps)
		}
		for _, d := range deps {
			for _, f := range tt.forbidden {
				if strings.HasPrefix(d, f) && !slices.Contains(tt.allowed, d) && !slices.Contains(tt.pkgs, "./"+strings.TrimPrefix(d, module+"/")) {
					t.Errorf("%v depend on %s", tt.pkgs, d)
				}
			}
		}
	}
}

// goList runs go list with args in the module and returns the words it
// prints.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, out)
	}
	return strings.Fields(string(out))
}

// lightRoots are the modules a program importing the limiters may
// require, with what they require in turn: go-redis, and the packages
// the project was specified with.
var lightRoots = []string{
	"github.com/redis/go-redis/v9",
	"github.com/yuin/gopher-lua", "github.com/google/go-cmp", "github.com/alicebob/miniredis/v2", "gopkg.in/yaml.v3",
}

// TestLightImport builds a user's module importing redislimit, goimpl,
// fallback and httplimit, tidies it as a user would, and fails on any
// module of its go list -m all that is neither limitspec nor one of
// lightRoots or what they require (go mod graph): OpenTelemetry, the
// plotting library and the JSON Schema validator live in modules of
// their own. Every module it needs is in the module cache: it runs
// offline (GOPROXY=off).
func TestLightImport(t *testing.T) {
	m := modtest.New(t, "example.com/light", ".")
	m.Env = []string{"GOPROXY=off"}
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n")
	for _, p := range []string{"redislimit", "goimpl", "fallback", "httplimit"} {
		src.WriteString("\t_ \"" + module + "/" + p + "\"\n")
	}
	src.WriteString(")\n\nfunc main() {}\n")
	m.Write("main.go", []byte(src.String()))
	m.Go("mod", "tidy", "-e")
	allowed := map[string]bool{"example.com/light": true, module: true}
	edges := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(m.Go("mod", "graph")), "\n") {
		from, to, _ := strings.Cut(line, " ")
		from, _, _ = strings.Cut(from, "@")
		to, _, _ = strings.Cut(to, "@")
		edges[from] = append(edges[from], to)
	}
	for todo := slices.Clone(lightRoots); len(todo) > 0; todo = todo[1:] {
		if !allowed[todo[0]] {
			allowed[todo[0]] = true
			todo = append(todo, edges[todo[0]]...)
		}
	}
	all := strings.Fields(m.Go("list", "-m", "-e", "-f", "{{.Path}}", "all"))
	if !slices.Contains(all, "github.com/redis/go-redis/v9") {
		t.Fatalf("go list -m all does not list go-redis: %q", all)
	}
	for _, mod := range all {
		if !allowed[mod] {
			t.Errorf("a module importing the limiters requires %s, neither go-redis's nor one the project was specified with", mod)
		}
	}
	t.Logf("go list -m all: %q", all)
}

// TestGoDirective: go.mod asks for no newer Go than its dependencies
// require: its go line is the highest of theirs (go mod graph), which
// the go command would raise it to anyway.
func TestGoDirective(t *testing.T) {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	ours := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(b)
	if ours == nil {
		t.Fatal("go.mod has no go line")
	}
	out, err := exec.Command("go", "mod", "graph").CombinedOutput()
	if err != nil {
		t.Fatalf("go mod graph: %v\n%s", err, out)
	}
	highest, by := "0", ""
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		from, to, _ := strings.Cut(line, " ")
		if v, ok := strings.CutPrefix(to, "go@"); ok && from != module && from != "go@"+string(ours[1]) && version.Compare("go"+v, "go"+highest) > 0 {
			highest, by = v, from
		}
	}
	if version.Compare("go"+string(ours[1]), "go"+highest) != 0 {
		t.Errorf("go.mod's go line is %s; the highest of its dependencies' is %s (%s)", ours[1], highest, by)
	}
}

// TestModulesUseNoInternals: the modules of their own (otelmetrics, the
// tools, the docs' tests) build on the main module's public packages
// alone, so that any version of one builds with any version of the
// other; their tests may use its test helpers. linearize is left out on
// purpose: it checks histories against the oracle (internal/oracle), and
// is built with this tree alone.
func TestModulesUseNoInternals(t *testing.T) {
	for _, dir := range []string{"otelmetrics", "cmd/example", "cmd/pictures", "docs/vectorschema"} {
		cmd := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", "./...")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: go list: %v\n%s", dir, err, out)
		}
		for _, p := range strings.Fields(string(out)) {
			if strings.HasPrefix(p, module+"/internal/") {
				t.Errorf("%s imports %s: a module of its own uses the main module's public packages", dir, p)
			}
		}
	}
}
