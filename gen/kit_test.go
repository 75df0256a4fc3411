package gen

import (
	"go/ast"
	goparser "go/parser"
	gotoken "go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/limitspec/limitspec/kit"
)

// TestKitConsts checks that the constants the generated Go reads from
// package kit (goKitConsts) hold the catalogue's values.
func TestKitConsts(t *testing.T) {
	sp, err := LoadCatalogue(os.DirFS("../spec"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"NOW_MAX": kit.NowMax, "COST_MAX": kit.CostMax}
	for name := range goKitConsts {
		found := false
		for _, c := range sp.Consts {
			if c.Name == name {
				found = true
				if c.Value != want[name] {
					t.Errorf("%s is %d in the spec, %d in package kit", name, c.Value, want[name])
				}
			}
		}
		if !found {
			t.Errorf("the catalogue has no constant %s", name)
		}
	}
}

// TestGoConstants: the generated Go declares the spec's constants (and
// MAX_SAFE) by their Go names with the spec's values, in the typed limits'
// package (all of them) and in package goimpl (all but those of package
// kit), for the catalogue and for a user's package, and reads them by name.
func TestGoConstants(t *testing.T) {
	sp := catalogue(t)
	files, err := Generate(sp, CatalogueOutput())
	if err != nil {
		t.Fatal(err)
	}
	user := userFiles(t)
	for _, tt := range []struct {
		name   string
		src    []byte
		consts []string // the spec's constants it must declare
	}{
		{"limits_gen.go", files["limits_gen.go"], []string{"NOW_MAX", "COST_MAX", "TTL_MARGIN_MS", "MAX_SKEW_MS", "RUN_MOD", "MAX_SAFE"}},
		{"goimpl/constants_gen.go", files["goimpl/constants_gen.go"], []string{"TTL_MARGIN_MS", "MAX_SKEW_MS", "BUCKETS_MAX", "RUN_MOD", "MAX_SAFE"}},
		{"a user's limits_gen.go", user["limits_gen.go"], []string{"NOW_MAX", "MAX_SKEW_MS", "MARGIN", "MAX_SAFE"}},
	} {
		got := goConstDecls(t, tt.src)
		for _, name := range tt.consts {
			want := int64(MaxSafe)
			for _, c := range sp.Consts {
				if c.Name == name {
					want = c.Value
				}
			}
			if name == "MARGIN" {
				want = 1000 // testdata/user.yaml's
			}
			if v, ok := got[goConstName(name)]; !ok || v != want {
				t.Errorf("%s: %s is %d (declared: %v), want %d", tt.name, goConstName(name), v, ok, want)
			}
		}
	}
	for _, f := range []string{"goimpl/fixed_window_gen.go", "goimpl/sliding_log_gen.go"} {
		if src := string(files[f]); !strings.Contains(src, "nowMs+maxSkewMs") || strings.Contains(src, "+60000") {
			t.Errorf("%s does not read MAX_SKEW_MS as maxSkewMs", f)
		}
	}
}

// goConstDecls are the integer constants a Go file declares, by name.
func goConstDecls(t *testing.T, src []byte) map[string]int64 {
	t.Helper()
	f, err := goparser.ParseFile(gotoken.NewFileSet(), "", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != gotoken.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
					v, err := strconv.ParseInt(lit.Value, 10, 64)
					if err == nil {
						out[n.Name] = v
					}
				}
			}
		}
	}
	return out
}
