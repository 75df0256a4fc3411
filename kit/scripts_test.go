package kit

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/limitspec/limitspec"
)

// TestKeyNames: a call's keys are the hash tag, the infix and each
// suffix with the parameters it names, in decimal; a parameter left out
// at the end is its default. KeyTails are the same names after "{" and
// the tag.
func TestKeyNames(t *testing.T) {
	sl := &Scripts{Keys: []string{":sl:<window_ms>", ":sl:<window_ms>:sum"}, Params: []Param{{Name: "limit"}, {Name: "window_ms"}}}
	bw := &Scripts{
		Keys: []string{":bw:<bucket_ms>:<window_ms>:<window_ms_2>:<window_ms_3>"},
		Params: []Param{{Name: "limit"}, {Name: "window_ms"}, {Name: "bucket_ms"},
			{Name: "limit_2", Default: "0"}, {Name: "window_ms_2", Default: "0"}, {Name: "limit_3", Default: "0"}, {Name: "window_ms_3", Default: "0"}},
	}
	tests := []struct {
		name   string
		s      *Scripts
		tag    string
		infix  string
		params []string
		want   []string
	}{
		{"two keys", sl, "alice", "", Decimal([]int64{5, 1000}), []string{"{alice}:sl:1000", "{alice}:sl:1000:sum"}},
		{"a policy's infix", sl, "alice", ":daily", Decimal([]int64{5, 86400000}), []string{"{alice}:daily:sl:86400000", "{alice}:daily:sl:86400000:sum"}},
		{"every parameter", bw, "k", "", Decimal([]int64{10, 1000, 100, 20, 2000, 30, 3000}), []string{"{k}:bw:100:1000:2000:3000"}},
		{"defaults", bw, "k", "", Decimal([]int64{10, 1000, 100}), []string{"{k}:bw:100:1000:0:0"}},
	}
	for _, tt := range tests {
		if got := tt.s.KeyNames(tt.tag, tt.infix, tt.params); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
		tails := tt.s.KeyTails(tt.infix, tt.params)
		for i, want := range tt.want {
			if i >= len(tails) || "{"+tt.tag+tails[i] != want {
				t.Errorf("%s: tails %v: the key %q is not \"{%s\" and a tail", tt.name, tails, want, tt.tag)
			}
		}
	}
	if got, want := Decimal([]int64{0, -5, 1e15}), []string{"0", "-5", "1000000000000000"}; !slices.Equal(got, want) {
		t.Errorf("Decimal = %v, want %v", got, want)
	}
}

// mustPanic fails the test unless f panics.
func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

// registryRun numbers the runs of TestRegistries, whose registrations
// stay in the process's registries: each run registers its own names.
var registryRun atomic.Int64

// TestRegistries: what is registered is found by its algorithm or name,
// listed in order, and a second registration panics. (Nothing generated
// is linked into this test: the registries hold what it registers.)
func TestRegistries(t *testing.T) {
	lib := "kittest" + strconv.FormatInt(registryRun.Add(1), 10)
	a := limitspec.Algorithm{Library: lib, Name: "b"}
	b := limitspec.Algorithm{Library: lib, Name: "a"}
	if _, ok := LookupTable(a); ok {
		t.Fatal("an algorithm never registered has a table")
	}
	RegisterTable(TableAlgorithm{ID: a, Inputs: []string{"v"}})
	if got, ok := LookupTable(a); !ok || got.ID != a || !slices.Equal(got.Inputs, []string{"v"}) {
		t.Errorf("LookupTable = %+v, %v", got, ok)
	}
	mustPanic(t, "a second RegisterTable", func() { RegisterTable(TableAlgorithm{ID: a}) })

	RegisterScripts(&Scripts{ID: a})
	RegisterScripts(&Scripts{ID: b})
	if s, ok := LookupScripts(b); !ok || s.ID != b {
		t.Errorf("LookupScripts = %v, %v", s, ok)
	}
	var ids []limitspec.Algorithm
	for _, s := range AllScripts() {
		if s.ID.Library == lib {
			ids = append(ids, s.ID)
		}
	}
	if want := []limitspec.Algorithm{b, a}; !slices.Equal(ids, want) { // lib.a, lib.b
		t.Errorf("AllScripts = %v, want %v", ids, want)
	}
	mustPanic(t, "a second RegisterScripts", func() { RegisterScripts(&Scripts{ID: a}) })

	checkLibraries(t, lib)
}

// checkLibraries registers the libraries lib+"z" and lib+"a" (and the
// catalogue's, once) and checks they are listed the catalogue's first,
// then by name, and found by name.
func checkLibraries(t *testing.T, lib string) {
	t.Helper()
	if _, ok := LookupLibrary(limitspec.Catalogue); !ok {
		RegisterLibrary(&Library{Name: limitspec.Catalogue})
	}
	RegisterLibrary(&Library{Name: lib + "z"})
	RegisterLibrary(&Library{Name: lib + "a"})
	var names []string
	for _, l := range Libraries() {
		if l.Name == limitspec.Catalogue || strings.HasPrefix(l.Name, lib) {
			names = append(names, l.Name)
		}
	}
	if want := []string{limitspec.Catalogue, lib + "a", lib + "z"}; !slices.Equal(names, want) {
		t.Errorf("Libraries = %v, want the catalogue's first, then by name: %v", names, want)
	}
	if l, ok := LookupLibrary(lib + "a"); !ok || l.Name != lib+"a" {
		t.Errorf("LookupLibrary = %v, %v", l, ok)
	}
	mustPanic(t, "a second RegisterLibrary", func() { RegisterLibrary(&Library{Name: lib + "a"}) })
}
