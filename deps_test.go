package limitspec_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDependencies holds the architecture in place: the root package is
// the contract and imports nothing of the module, and the adapters
// (fallback, httplimit) build on the contract alone, with no Redis
// client, no Lua VM and no implementation package (internal/keyed, their
// per-key map, knows only the contract too); OpenTelemetry and
// Prometheus stay in otelmetrics and cmd/example (testMetricsDependencies),
// the plotting library in cmd/pictures (testPlotDependencies).
func TestDependencies(t *testing.T) {
	t.Run("metrics", testMetricsDependencies)
	t.Run("plot", testPlotDependencies)
	const module = "github.com/limitspec/limitspec"
	tests := []struct {
		pkgs      []string
		forbidden []string
	}{
		{[]string{"."}, []string{module + "/"}},
		{[]string{"./internal/keyed"}, []string{module + "/"}},
		{[]string{"./fallback", "./httplimit", "./lease", "./denials"}, []string{
			"github.com/redis/", "github.com/yuin/gopher-lua", "github.com/alicebob/",
			module + "/memory", module + "/redislimit", module + "/kit", module + "/lua", module + "/internal/",
		}},
	}
	for _, tt := range tests {
		out, err := exec.Command("go", append([]string{"list", "-deps"}, tt.pkgs...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %v: %v\n%s", tt.pkgs, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps %v listed %d packages: %q", tt.pkgs, len(deps), deps)
		}
		for _, d := range deps {
			for _, f := range tt.forbidden {
				if strings.HasPrefix(d, f) && d != module+"/internal/keyed" && d != module+"/internal/limiters" {
					t.Errorf("%v depend on %s", tt.pkgs, d)
				}
			}
		}
	}
}

// testMetricsDependencies: OpenTelemetry and Prometheus stay in package
// otelmetrics and in cmd/example, which serves its metrics: no other
// package of the module imports them, directly or not, nor do its tests
// directly.
func testMetricsDependencies(t *testing.T) {
	const module = "github.com/limitspec/limitspec"
	confined(t, []string{"go.opentelemetry.io/", "github.com/prometheus/"},
		module+"/otelmetrics", module+"/cmd/example")
}

// testPlotDependencies: the plotting library (gonum.org/v1/plot) stays in
// cmd/pictures, which draws the README's pictures: no library package
// depends on it, nor does any test directly.
func testPlotDependencies(t *testing.T) {
	confined(t, []string{"gonum.org/"}, "github.com/limitspec/limitspec/cmd/pictures")
}

// confined fails unless the packages whose import paths begin with one
// of forbidden are imported, directly or not, by the allowed packages
// of the module alone (and by no test of another directly), and each
// allowed package is seen to import one: the check finds what it looks
// for.
func confined(t *testing.T, forbidden []string, allowed ...string) {
	out, err := exec.Command("go", "list", "-f",
		"{{.ImportPath}}{{range .Deps}} {{.}}{{end}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}",
		"./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list ./...: %v\n%s", err, out)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		deps := strings.Fields(line)
		pkg := deps[0]
		for _, d := range deps[1:] {
			for _, f := range forbidden {
				if strings.HasPrefix(d, f) {
					seen[pkg] = true
					if !slices.Contains(allowed, pkg) {
						t.Errorf("%s depends on %s", pkg, d)
					}
				}
			}
		}
	}
	for _, pkg := range allowed {
		if !seen[pkg] {
			t.Errorf("%s depends on none of %v, by go list: %s", pkg, forbidden, out)
		}
	}
}
