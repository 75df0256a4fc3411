package gen

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writtenRequire and writtenOut are the require and the logic of
// testdata/tiers.yaml written out tier by tier, by hand: tier 1's limit
// is at least 1, so its checks of on (and of limit == 0) go.
const writtenRequire = `    require:
      - {expr: "limit * 2 <= gap_ms", doc: "limit must be 0 or at most half of gap_ms (tier 1)"}
      - {expr: "limit_2 == 0 || limit_2 * 2 <= gap_ms", doc: "limit_2 must be 0 or at most half of gap_ms (tier 2)"}
`

const writtenOut = `      let used = if now - ctr.ts >= gap_ms then 0 else ctr.n
      let c = min(cost, max(limit, limit_2) + 1)
      let fits1 = used + c <= limit
      let left1 = max(0, limit - used)
      let on2 = limit_2 > 0
      let fits2 = !on2 || used + c <= limit_2
      let left2 = if on2 then max(0, limit_2 - used) else limit
      let ok = fits1 && fits2
      let room = min(left1, left2)
      let tier = if left1 == room then 1 else 2
      if ok {
        store ctr { ts = max(now, ctr.ts), n = used + c } ttl gap_ms + 1000
      }
      reply {
        allowed = ok,
        limit = min(limit, if on2 then limit_2 else limit),
        remaining = room,
        retry_after_ms = if ok then -1 else gap_ms,
        reset_after_ms = gap_ms,
        delay_ms = 0,
        tier = tier
      }
`

// tiersSpec reads testdata/tiers.yaml; written replaces its require and
// its logic with writtenRequire and writtenOut.
func tiersSpec(t *testing.T, written bool) string {
	t.Helper()
	src, err := os.ReadFile("testdata/tiers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	if written {
		i := strings.Index(s, "    logic: |\n") + len("    logic: |\n")
		s = s[:i] + writtenOut
		from, to := strings.Index(s, "    require:\n"), strings.Index(s, "    window:")
		s = s[:from] + writtenRequire + s[to:]
	}
	return s
}

func generateTiers(t *testing.T, src string) map[string][]byte {
	t.Helper()
	sp, err := LoadUser(catalogue(t), "tiered", "tiers.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(sp, PackageOutput("tiered"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestTiersUnroll expects a for over tiers and the folds to generate the
// same Go and Lua as the same logic written out by hand.
func TestTiersUnroll(t *testing.T) {
	looped := generateTiers(t, tiersSpec(t, false))
	written := generateTiers(t, tiersSpec(t, true))
	if diff := cmp.Diff(written, looped); diff != "" {
		t.Errorf("the for over tiers generates other code than its logic written out (-written +looped):\n%s", diff)
	}
}

// TestTiersRejects edits testdata/tiers.yaml into invalid specs, each
// with its error.
func TestTiersRejects(t *testing.T) {
	for _, tt := range []struct{ name, old, new, want string }{
		{"one tier", "      - {limit: limit_2}\n", "", "tiers: one tier is no tiers"},
		{"role naming no parameter", "{limit: limit_2}", "{limit: limit_9}", `tiers: limit names no parameter ("limit_9")`},
		{"roles that differ", "{limit: limit_2}", "{lim: limit_2}", "tier 2's roles differ from tier 1's"},
		{"role named index", "{limit: limit_2}", "{index: limit_2}", "roles are lower_case names, and index is each tier's number"},
		{"no tiers", "    tiers:\n      - {limit: limit}\n      - {limit: limit_2}\n    require:\n      - for: t in tiers\n        each:\n" +
			"          - {expr: \"t.limit == 0 || t.limit * 2 <= gap_ms\", doc: \"{t.limit} must be 0 or at most half of gap_ms (tier {t.index})\"}\n",
			"", "tiered declares no tiers to loop over"},
		{"a require over tiers without tiers", "    tiers:\n      - {limit: limit}\n      - {limit: limit_2}\n", "", "with tiers declared"},
		{"for inside an if", "      if ok {\n", "      if ok {\n        for t in tiers {\n          let z = 1\n        }\n", "a for over tiers stands at the top"},
		{"store in a for", "        let on = t.limit > 0\n", "        let on = t.limit > 0\n        store ctr { ts = now, n = 0 } ttl 1\n", "only let may stand in a for over tiers"},
		{"a tier's let read by its name", "let room = min(t in tiers: t.left)", "let room = min(left1, left2)", `"left1" is tier 1's left: read it as v.left in a fold over tiers`},
		{"a tier's let outside", "let room = min(t in tiers: t.left)", "let room = left", `unknown name "left"`},
		{"a name bound twice", "let used = if", "let fits = 0\n      let used = if", `"fits" is already defined`},
		{"a role the tier lacks", "t.limit - used", "t.window_ms - used", `a tier has no "window_ms"`},
		{"a fold of the wrong type", "all(t in tiers: t.fits)", "all(t in tiers: t.left)", "all needs bool values, found int"},
		{"a min of bools", "let room = min(t in tiers: t.left)", "let room = min(t in tiers: t.fits)", "min needs int values, found bool"},
		{"a fold in a for", "let left = if on", "let left = if all(u in tiers: u.on)", "a fold over tiers inside a for or a fold over tiers"},
		{"a require over no tiers", "for: t in tiers", "for: t in tier", "a require over tiers is {for: t in tiers, each: [requires]}"},
		{"a require's doc naming no role", "{t.limit} must be 0", "{t.lim} must be 0", "require: {t.lim} names no role of a tier"},
		{"a require that never holds", "t.limit == 0 || t.limit * 2 <= gap_ms", "t.limit < 0", "tiered: require never holds"},
		{"a let read before it is bound", "let fits = !on ||", "let early = left\n        let fits = !on ||", `unknown name "left"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := tiersSpec(t, false)
			if !strings.Contains(src, tt.old) {
				t.Fatalf("tiers.yaml does not contain %q", tt.old)
			}
			_, err := LoadUser(catalogue(t), "tiered", "tiers.yaml", []byte(strings.Replace(src, tt.old, tt.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v\nwant one containing %q", err, tt.want)
			}
		})
	}
}
