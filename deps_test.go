package limitspec_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies holds the architecture in place: the root package is
// the contract and imports nothing of the module, and the adapters
// (fallback, httplimit) build on the contract alone, with no Redis
// client, no Lua VM and no implementation package.
func TestDependencies(t *testing.T) {
	const module = "github.com/limitspec/limitspec"
	tests := []struct {
		pkgs      []string
		forbidden []string
	}{
		{[]string{"."}, []string{module + "/"}},
		{[]string{"./fallback", "./httplimit"}, []string{
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
				if strings.HasPrefix(d, f) {
					t.Errorf("%v depend on %s", tt.pkgs, d)
				}
			}
		}
	}
}
