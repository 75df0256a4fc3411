package gen

import (
	"os"
	"strings"
	"testing"
)

// rejects are edits of the small spec into invalid ones, each with the
// error it must give: the first old in testdata/small.yaml becomes new.
var rejects = []struct {
	name string
	old  string
	new  string
	want string
}{
	{"store without ttl", "ttl gap_ms + MARGIN", "", "small.yaml:43: store ctr needs a ttl"},
	{"ttl may be zero", "ttl gap_ms + MARGIN", "ttl gap_ms - 1", "small.yaml:43: counter: the ttl of store ctr may be below 1 ms"},
	{"ttl may be negative", "ttl gap_ms + MARGIN", "ttl now - ctr.ts", "the ttl of store ctr may be below 1 ms"},
	{"key outside the hash tag", `key: "{key}:ctr:{gap_ms}"`, `key: "ctr:{key}"`, `must be "{key}:" and a name`},
	{"key without a name", `key: "{key}:ctr:{gap_ms}"`, `key: "{key}:{gap_ms}"`, `must be "{key}:" and a name`},
	{"key naming no parameter", `key: "{key}:ctr:{gap_ms}"`, `key: "{key}:ctr:{x}"`, `key names "x", which is not a parameter`},
	{"key naming a parameter twice", `key: "{key}:ctr:{gap_ms}"`, `key: "{key}:ctr:{gap_ms}:{gap_ms}"`, "key names gap_ms twice"},
	{"key with a bad piece", `key: "{key}:ctr:{gap_ms}"`, `key: "{key}:ctr:a{gap_ms}"`, "is neither text"},
	{"keys naming other parameters", `key: "{key}:log:{window_ms}:{bucket_ms}:notes"`, `key: "{key}:log:{window_ms}:notes"`, "every key of an algorithm names the same parameters"},
	{"product may pass 2^53", "let c = min(cost, limit + 1)", "let c = min(cost * cost, limit + 1)", "exceeds 2^53-1 for every parameter value"},
	{"product of a negative", "let c = min(cost, limit + 1)", "let c = min((now - ctr.ts) * 2, limit + 1)", "small.yaml:40: counter: the left operand of (now - ctr.ts) * 2 may be negative"},
	{"divisor may be zero", "let c = min(cost, limit + 1)", "let c = min(cost / (limit - 1), limit + 1)", "the divisor of cost / (limit - 1) may be below 1"},
	{"unknown name", "let c = min(cost, limit + 1)", "let c = min(cost, lmit + 1)", `small.yaml:40: unknown name "lmit"`},
	{"type error", "let c = min(cost, limit + 1)", "let c = min(cost, idle)", "small.yaml:40: expected an int expression, found bool"},
	{"unused let", "let c = min(cost, limit + 1)", "let c = min(cost, limit + 1)\n      let spare = 1", `small.yaml:41: "spare" is never used`},
	{"redefined name", "let c = min(cost, limit + 1)", "let c = min(cost, limit + 1)\n      let c = 2", `small.yaml:41: "c" is already defined`},
	{"missing reply field", "remaining = limit - (if ok then used + c else used) }", "}", `reply: field "remaining" is not set`},
	{"reply inside if", "      if ok {\n", "      if ok {\n        reply { allowed = ok, remaining = 0 }\n", "reply must be the last statement"},
	{"unknown field", "n = used + c }", "n = used + c, m = 1 }", `store ctr has no field "m"`},
	{"require that never holds", `{expr: "limit * gap_ms <= 100000000000"`, `{expr: "limit < 1"`, "small.yaml:26: counter: require never holds"},
	{"param domain past 2^53", "max: 1000000000, doc", "max: 9007199254740992, doc", "within ±(2^53-1)"},
	{"unknown yaml key", "    doc: |\n      Counts", "    docs: x\n    doc: |\n      Counts", "field docs not found"},
	// Collections, inputs, optional parameters and views (trail).
	{"add without ttl", "add log { ts = max(now, newest), cost = c } ttl window_ms + MARGIN", "add log { ts = max(now, newest), cost = c }", "small.yaml:108: add log needs a ttl"},
	{"add ttl may be zero", "cost = c } ttl window_ms + MARGIN", "cost = c } ttl window_ms - 1", "small.yaml:108: trail: the ttl of add log may be below 1 ms"},
	{"aggregate after a write", "drop hits upto from\n", "drop hits upto from - sum(e in log: e.cost)\n", "small.yaml:109: an aggregate of log after a statement that writes"},
	{"aggregate after a write inside an if", "      reply {\n        allowed = ok,", "      let late = last(e in log: e.ts else 0)\n      reply {\n        allowed = ok && late >= 0,", "small.yaml:117: an aggregate of log after a statement that writes"},
	{"aggregate after a write of another key", "drop hits upto from\n", "drop hits upto from\n        let late = sum(e in log: e.cost)\n        drop hits upto late\n", "small.yaml:110: an aggregate of log after a statement that writes"},
	{"nested aggregate", "sum(e in log where e.ts > from: e.cost)", "sum(e in log where e.ts > from: last(f in log: f.cost else 0))", "small.yaml:99: an aggregate may not hold another"},
	{"drop on a list", "          clear notes", "          drop notes upto from", "small.yaml:113: a list keeps arrival order: clear it instead of dropping entries"},
	{"drop after add", "        drop hits upto from\n        store seen { ts = now } ttl window_ms + MARGIN\n        add hits { start = bucket, n = c } ttl window_ms + MARGIN", "        store seen { ts = now } ttl window_ms + MARGIN\n        add hits { start = bucket, n = c } ttl window_ms + MARGIN\n        drop hits upto from", "drop hits after add hits: drop first"},
	{"writes without a clock", "    clock: ctr.ts\n", "", "counter: clock is required"},
	{"clock not a field", "    clock: ctr.ts\n", "    clock: ctr.tz\n", `counter: clock "ctr.tz" is not a field of a state (state.field)`},
	{"clock on a string entry field", "    clock: seen.ts\n", "    clock: notes.text\n", `trail: clock "notes.text": an entry's clock is an integer field`},
	{"clock without MAX_SKEW_MS", "  MAX_SKEW_MS: 5000\n", "", "counter: a clock needs the constant MAX_SKEW_MS"},
	{"let named like generated code", "let from = now - window_ms", "let from__x = now - window_ms\n      let from = from__x", `"from__x": names with __ are kept for generated code`},
	{"string field not last in a list entry", "          - {name: ts, min: 0, max: NOW_MAX, doc: \"when\"}\n          - {name: text, type: string, doc: \"the note\"}", "          - {name: text, type: string, doc: \"the note\"}\n          - {name: ts, min: 0, max: NOW_MAX, doc: \"when\"}", "small.yaml:73: trail: entry field notes.text: only the last field of a list entry may be a string"},
	{"string field in a zset entry", "{name: cost, min: 1, max: 100, doc: \"cost admitted\"}", "{name: cost, type: string, doc: \"cost admitted\"}", "trail: entry field log.cost: only the last field of a list entry may be a string"},
	{"zset sum of another value", "sum(e in log where e.ts > from: e.cost)", "sum(e in log where e.ts > from: e.cost - limit)", "small.yaml:99: sum over the zset log adds e.cost - limit: it must add a literal or e.cost"},
	{"zset filtered by another field", "sum(e in log where e.ts > from: e.cost)", "sum(e in log where e.cost > 1: e.cost)", "small.yaml:99: the where clause of an aggregate over the zset log must compare its score e.ts"},
	{"list aggregate in a decision", "let newest = last(e in log: e.ts else 0)", "let newest = last(e in notes where e.ts > 0: e.ts else 0)", "small.yaml:100: a decision reads a list's newest entry alone (last with no where clause)"},
	{"show of an unknown field", "          show notes if fresh", "          show notes { ts, txt } if fresh", `small.yaml:127: an entry of notes has no field "txt"`},
	{"show of a field twice", "          show notes if fresh", "          show notes { ts, ts } if fresh", `small.yaml:127: field "ts" shown twice`},
	{"hash with entries", "        doc: the last admission\n        fields:", "        doc: the last admission\n        max_entries: 3\n        entry:\n          - {name: at, min: 0, max: 1, doc: \"x\"}\n        fields:", "trail: state seen: a string has fields, not entries: keep entries in a zset"},
	{"running sum without RUN_MOD", "  RUN_MOD: 1000000\n", "", "trail: entry field log.run: a running sum needs the constant RUN_MOD, in [2, 2^52]"},
	{"running sum of a field over parameters", "{name: cost, min: 1, max: 100, doc", "{name: cost, min: 1, max: limit, doc", "trail: log.cost is summed by log.run: its domain must not depend on the parameters"},
	{"running sum may reach RUN_MOD", "  RUN_MOD: 1000000\n", "  RUN_MOD: 10000\n", "trail: the sum of log.cost over limit entries may reach 10000, not below RUN_MOD"},
	{"running sum of an unknown field", "running: cost,", "running: price,", "trail: state log: running sum of \"price\" is not an integer entry field of log other than its score"},
	{"merge by an unknown field", "        merge: n\n", "        merge: m\n", "trail: state hits: merge \"m\" is not an integer entry field of hits other than its score"},
	{"show outside a view", "      reply {\n        allowed = ok,", "      show notes\n      reply {\n        allowed = ok,", "small.yaml:117: show ends a view; the logic of an algorithm ends with reply"},
	{"store in a view", "          show notes if fresh", "          store ctr { ts = now, n = 0 } ttl 1\n          show notes if fresh", "small.yaml:127: view recent: only let and show are allowed in a view"},
	{"add in a view", "          show notes if fresh", "          add notes { ts = now, text = note } ttl 1\n          show notes if fresh", "small.yaml:127: view recent: only let and show are allowed in a view"},
	{"reply in a view", "          show notes if fresh", "          reply { allowed = fresh, remaining = 0 }", "small.yaml:127: view recent: only let and show are allowed in a view"},
	{"optional parameter default outside its domain", "max: 1000, default: 10, doc", "max: 1000, default: 0, doc", "trail: parameter bucket_ms: default 0 is outside [1, 1000]"},
	{"unknown state type", "        type: zset", "        type: set", `trail: state log: type "set" is not supported (supported: string, zset, list)`},
	{"force in a view", "          show notes if fresh", "          show notes if fresh && !force", "small.yaml:127: force cannot be used here: only in an algorithm's logic"},
	{"force in a domain", "{name: n, min: 0, max: limit, default: 0, doc: \"count\"}", "{name: n, min: 0, max: if force then limit else 1, default: 0, doc: \"count\"}", "force cannot be used here"},
	{"force is a boolean", "let c = min(cost, limit + 1)", "let c = min(cost, force)", "small.yaml:40: expected an int expression, found bool"},
	{"zset with fields", "        doc: one entry per admission\n        max_entries: limit\n        entry:", "        doc: one entry per admission\n        fields:", "trail: state log: a zset has entries, not fields"},
	// The window: an integer expression over parameters and constants,
	// proven within [0, 2^53-1] without a runtime check of its own.
	{"window with an unknown name", "window: gap_ms", "window: gap", `small.yaml:27: unknown name "gap" (in window)`},
	{"window not an integer", "window: gap_ms", "window: gap_ms > 0", "small.yaml:27: counter: window must be an integer expression (ms) over the parameters, not a bool"},
	{"window reads now", "window: gap_ms", "window: now - gap_ms", "small.yaml:27: now cannot be used here: only parameters and constants"},
	{"window reads the state", "window: gap_ms", "window: ctr.n", "small.yaml:27: state cannot be read here"},
	{"window not an expression", "window: gap_ms", "window: {expr: gap_ms}", "small.yaml:27: counter: window must be an expression, such as window_ms"},
	{"window may pass 2^53", "window: gap_ms", "window: gap_ms * gap_ms", "small.yaml:27: counter: the window gap_ms * gap_ms may pass 2^53-1 for parameters the spec accepts"},
	{"window may be negative", "window: gap_ms", "window: gap_ms - limit", "small.yaml:27: counter: the window gap_ms - limit may be negative (as low as -999)"},
}

// TestRejects makes each of rejects and expects its error, with its file
// and line.
func TestRejects(t *testing.T) {
	base, err := os.ReadFile("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range rejects {
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

// TestWindow: a window is kept as written and adds no runtime check, a
// requirement bounding it where the domains alone do not.
func TestWindow(t *testing.T) {
	tests := []struct{ window, want string }{
		{"gap_ms", "gap_ms"},
		{"ceildiv(limit * gap_ms, 3)", "ceildiv(limit * gap_ms, 3)"}, // limit * gap_ms <= 10^11 by a require
		{"if limit > 1 then gap_ms else MARGIN", "if limit > 1 then gap_ms else MARGIN"},
	}
	for _, tt := range tests {
		src := strings.Replace(mustRead(t, "testdata/small.yaml"), "window: gap_ms", "window: "+tt.window, 1)
		sp, err := Load("small.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", tt.window, err)
		}
		counter, trail := sp.Algorithms[0], sp.Algorithms[1]
		if counter.Window == nil || Format(counter.Window) != tt.want {
			t.Errorf("%s: window %v, want %s", tt.window, counter.Window, tt.want)
		}
		if counter.WindowPos.Line != 27 {
			t.Errorf("%s: window at line %d, want 27", tt.window, counter.WindowPos.Line)
		}
		if len(counter.Checks) != 0 {
			t.Errorf("%s: %d runtime checks, want none", tt.window, len(counter.Checks))
		}
		if trail.Window != nil {
			t.Errorf("trail declares no window, got %s", Format(trail.Window))
		}
	}
}
