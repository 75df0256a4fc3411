package gen

import (
	"reflect"
	"testing"
)

// TestUnusedImports: an import is unused unless a selector of the code
// names it; a comment that names it ("the entries, in sort.") does not.
func TestUnusedImports(t *testing.T) {
	sortPkg := goPackage{name: "sort", path: "sort"}
	const head = "package p\n\nimport (\n\"sort\"\n\"github.com/limitspec/limitspec/exact\"\n)\n"
	tests := []struct {
		name, body string
		want       []goPackage
	}{
		{"both used", "func f(x []int) int { return exact.Add(int64(sort.SearchInts(x, 1)), 1) }", nil},
		{"sort named in a comment only", "// the entries, in sort.\nfunc f() int64 { return exact.Add(1, 1) }", []goPackage{sortPkg}},
		{"neither used", "func f() {}", []goPackage{exactPackage, sortPkg}},
	}
	for _, tt := range tests {
		got := unusedImports(head+tt.body, exactPackage, sortPkg)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: unused %v, want %v", tt.name, got, tt.want)
		}
	}
}
