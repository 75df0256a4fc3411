package gen

import (
	"os"
	"strings"
	"testing"
)

// TestRejects edits the small spec into invalid ones and expects the
// error, with its file and line.
func TestRejects(t *testing.T) {
	base, err := os.ReadFile("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		old  string
		new  string
		want string
	}{
		{"store without ttl", "ttl gap_ms + MARGIN", "", "small.yaml:36: store ctr needs a ttl"},
		{"ttl may be zero", "ttl gap_ms + MARGIN", "ttl gap_ms - 1", "small.yaml:36: counter: the ttl of store ctr may be below 1 ms"},
		{"ttl may be negative", "ttl gap_ms + MARGIN", "ttl now - ctr.ts", "the ttl of store ctr may be below 1 ms"},
		{"key outside the hash tag", `key: "{key}:ctr"`, `key: "ctr:{key}"`, "must be \"{key}\" followed by a constant suffix"},
		{"key with a second tag", `key: "{key}:ctr"`, `key: "{key}:{x}"`, "share the hash tag {key}"},
		{"product may pass 2^53", "let c = min(cost, limit + 1)", "let c = min(cost * cost, limit + 1)", "exceeds 2^53-1 for every parameter value"},
		{"product of a negative", "let c = min(cost, limit + 1)", "let c = min((now - ctr.ts) * 2, limit + 1)", "small.yaml:33: counter: the left operand of (now - ctr.ts) * 2 may be negative"},
		{"divisor may be zero", "let c = min(cost, limit + 1)", "let c = min(cost / (limit - 1), limit + 1)", "the divisor of cost / (limit - 1) may be below 1"},
		{"unknown name", "let c = min(cost, limit + 1)", "let c = min(cost, lmit + 1)", `small.yaml:33: unknown name "lmit"`},
		{"type error", "let c = min(cost, limit + 1)", "let c = min(cost, idle)", "small.yaml:33: expected an int expression, found bool"},
		{"unused let", "let c = min(cost, limit + 1)", "let c = min(cost, limit + 1)\n      let spare = 1", `small.yaml:34: "spare" is never used`},
		{"redefined name", "let c = min(cost, limit + 1)", "let c = min(cost, limit + 1)\n      let c = 2", `small.yaml:34: "c" is already defined`},
		{"missing reply field", "remaining = limit - (if ok then used + c else used) }", "}", `reply: field "remaining" is not set`},
		{"reply inside if", "      if ok {\n", "      if ok {\n        reply { allowed = ok, remaining = 0 }\n", "reply must be the last statement"},
		{"unknown field", "n = used + c }", "n = used + c, m = 1 }", `store ctr has no field "m"`},
		{"param domain past 2^53", "max: 1000000000, doc", "max: 9007199254740992, doc", "within ±(2^53-1)"},
		{"unknown yaml key", "    doc: |\n      Counts", "    docs: x\n    doc: |\n      Counts", "field docs not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(string(base), tt.old) {
				t.Fatalf("small.yaml does not contain %q", tt.old)
			}
			src := strings.Replace(string(base), tt.old, tt.new, 1)
			_, err := Load("small.yaml", []byte(src))
			if err == nil {
				t.Fatalf("accepted; want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\ndoes not contain %q", err, tt.want)
			}
		})
	}
}

// TestRuntimeChecks pins which bounds need a runtime check: those the
// declared domains and requirements cannot discharge statically.
func TestRuntimeChecks(t *testing.T) {
	sp, err := Load("spec.yaml", []byte(strings.Replace(mustRead(t, "testdata/small.yaml"),
		"let ok = used + c <= limit && c != -1", "let ok = used + c <= limit && c != -1 && min(now, gap_ms * gap_ms) * limit > 0", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range sp.Algorithms[0].Checks {
		got = append(got, Format(c.Cond))
	}
	want := []string{"gap_ms * gap_ms <= 9007199254740991", "min(NOW_MAX, gap_ms * gap_ms) * limit <= 9007199254740991"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("checks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
