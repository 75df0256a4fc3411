package gen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/limitspec/limitspec/kit"
)

// TestUserSpecRejects: what a user's spec may not do, over the catalogue.
func TestUserSpecRejects(t *testing.T) {
	src := mustRead(t, "testdata/user.yaml")
	tests := []struct {
		name, library, old, new, want string
	}{
		{"a catalogue constant again", "small", "constants:\n", "constants:\n  NOW_MAX: 5\n", "constant NOW_MAX is defined already"},
		{"a catalogue algorithm's name", "small", "  - name: counter\n", "  - name: gcra\n", "algorithm gcra: the catalogue has one of that name"},
		{"a reply of its own", "small", "constants:\n", "reply:\n  - {name: x, doc: x}\nconstants:\n", "field reply not found"},
		{"the catalogue's library name", "limitspec", "", "", "must be lower_case and not limitspec"},
		{"a library name that is no Go name", "Small", "", "", "must be lower_case"},
		{"a let named as a constant in Go", "small", "      let idle = now - ctr.ts >= gap_ms",
			"      let margin = MARGIN\n      let idle = now - ctr.ts >= gap_ms + margin", `"margin": in Go it would hide the constant MARGIN`},
		{"a policy of an unknown algorithm", "small", "algorithm: counter, identity: key", "algorithm: nope, identity: key", `unknown algorithm "nope"`},
		// Names that make another file's name: Generate refuses them.
		{"an algorithm named as the policy script", "small", "  - name: trail\n", "  - name: policy\n", "algorithm policy: its file lua/policy.lua is also the policy script's"},
		{"an algorithm named as the typed limits", "small", "  - name: trail\n", "  - name: limits\n", "algorithm limits: its file limits_gen.go is also the typed limits'"},
		{"an algorithm named as another's reset", "small", "  - name: trail\n", "  - name: counter_reset\n", "algorithm counter_reset: its file lua/counter_reset.lua is also"},
		{"a view named as the reset", "small", "      - name: recent\n", "      - name: reset\n", "its view reset's script trail_reset is another of its scripts'"},
		{"more parameters than a call holds", "small", "      - {name: gap_ms, min: 1, max: 1000000000, doc: \"idle time that resets\"}\n",
			"      - {name: gap_ms, min: 1, max: 1000000000, doc: \"idle time that resets\"}\n" + manyParams(15), "counter: 17 parameters; an algorithm takes at most 16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			edited := strings.Replace(src, tt.old, tt.new, 1)
			if tt.old != "" && edited == src {
				t.Fatalf("user.yaml does not contain %q", tt.old)
			}
			sp, err := LoadUser(catalogue(t), tt.library, "user.yaml", []byte(edited))
			if err == nil {
				_, err = Generate(sp, PackageOutput(tt.library))
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// manyParams is n optional parameters, p1 to pn, as spec lines.
func manyParams(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "      - {name: p%d, min: 0, max: 1, default: 0, doc: \"unused\"}\n", i)
	}
	return b.String()
}

// TestUserSpec: a user's spec keeps its algorithms apart from the
// catalogue's and any other library's (its keys name its library), and
// its policy script holds the catalogue's algorithms beside its own.
func TestUserSpec(t *testing.T) {
	sp, err := LoadUser(catalogue(t), "small", "user.yaml", []byte(mustRead(t, "testdata/user.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	if got := keyTemplate(sp.Algorithms[0].States[0]); got != "{<key>}:small:ctr:<gap_ms>" {
		t.Errorf("counter's key is %s, want it to name its library", got)
	}
	var inScope []string
	for _, a := range sp.InScope() {
		inScope = append(inScope, a.Qualified())
	}
	if got := strings.Join(inScope, " "); !strings.Contains(got, "gcra") || !strings.Contains(got, "small.counter") || !strings.Contains(got, "small.trail") {
		t.Errorf("in scope: %s", got)
	}
	files, err := Generate(sp, PackageOutput("small"))
	if err != nil {
		t.Fatal(err)
	}
	policy := string(files["lua/policy.lua"])
	for _, want := range []string{"['gcra'] = {check_gcra, make_gcra", "['small.counter'] = {check_small__counter, make_small__counter"} {
		if !strings.Contains(policy, want) {
			t.Errorf("the policy script lacks %q", want)
		}
	}
	if _, ok := files["lua/gcra.lua"]; ok {
		t.Error("the catalogue's gcra.lua was written again into the user's package")
	}
	if lib := string(files["lua/library.lua"]); !strings.HasPrefix(lib, "#!lua name=small\n") || !strings.Contains(lib, "'small_counter'") {
		t.Errorf("the library is not named after the package: %.80s", lib)
	}
}

// TestMaxParamsIsKits: the generator refuses the algorithms whose
// parameters would not fit in a kit.Call.
func TestMaxParamsIsKits(t *testing.T) {
	if MaxParams != kit.MaxParams {
		t.Errorf("gen.MaxParams %d, kit.MaxParams %d", MaxParams, kit.MaxParams)
	}
}
