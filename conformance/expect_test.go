package conformance

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/limitspec/limitspec/kit"
)

// TestErrorClasses checks what an expected error accepts: its class
// only, any class when true (deprecated), and no error when false.
func TestErrorClasses(t *testing.T) {
	refused := func(class string) Outcome { return Outcome{Error: class, Message: class + " gcra: something"} }
	decided := Outcome{Reply: kit.Reply{Allowed: true, Limit: 3, Remaining: 2, RetryAfterMs: -1}}
	for _, tt := range []struct {
		expect string // the JSON of expect.error
		got    Outcome
		fails  string // part of the failure, "" when it passes
	}{
		{`"BADINPUT"`, refused("BADINPUT"), ""},
		{`"BADINPUT"`, refused("WRONGTYPE"), "expected a BADINPUT error, got WRONGTYPE gcra: something"},
		{`"WRONGTYPE"`, decided, "expected a WRONGTYPE error, got"},
		{`"BADSTATE"`, refused("BADSTATE"), ""},
		{`true`, refused("WRONGTYPE"), ""},
		{`true`, refused("BADINPUT"), ""},
		{`true`, decided, "expected an error, got"},
		{`false`, decided, ""},
		{`false`, refused("BADINPUT"), "unexpected error BADINPUT gcra: something"},
	} {
		var e Expect
		if err := json.Unmarshal([]byte(`{"error": `+tt.expect+`}`), &e); err != nil {
			t.Fatalf("%s: %v", tt.expect, err)
		}
		msg := checkExpect(e, tt.got)
		if (tt.fails == "") != (msg == "") || !strings.Contains(msg, tt.fails) {
			t.Errorf("error %s, outcome %+v: %q, want %q", tt.expect, tt.got, msg, tt.fails)
		}
		back, err := json.Marshal(e)
		if err != nil || string(back) != `{"error":`+tt.expect+`}` {
			t.Errorf("error %s written back as %s, %v", tt.expect, back, err)
		}
	}
	for _, bad := range []string{`"badinput"`, `"ERR"`, `1`, `null`, `"BADINPUT WRONGTYPE"`} {
		var e Expect
		if err := json.Unmarshal([]byte(`{"error": `+bad+`}`), &e); err == nil && e.Error.Refused() {
			t.Errorf("error %s read as %q", bad, *e.Error)
		}
	}
}

// TestContractRefusals replays testdata/vectors, written as the
// contract's format writes a refusal ({"error": true}) beside a named
// class, on every embedded target.
func TestContractRefusals(t *testing.T) {
	vs, err := Load("testdata/vectors")
	if err != nil {
		t.Fatal(err)
	}
	targets, err := EmbeddedTargets()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, tg := range targets {
			tg.Close()
		}
	}()
	for _, r := range Run(vs, append(targets, NewOracleTarget())) {
		if !r.Passed() || r.Steps != 3 {
			t.Errorf("%s [%s]: %d steps, %s", r.Vector, r.Target, r.Steps, r.Failed)
		}
	}
}
