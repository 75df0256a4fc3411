package conformance

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/kit"
	"github.com/limitspec/limitspec/redislimit"
)

// TestForceFlagIsZeroOrOne: every decision script, by EVAL and through
// the Functions library by FCALL, takes force as the policy script does
// (TestPolicyScriptNamesThePolicy): exactly "0" or "1"; anything else is
// refused as bad input, with the same message, and nothing is written.
func TestForceFlagIsZeroOrOne(t *testing.T) {
	vectors, err := Load("../vectors")
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t).Addr()})
	defer rdb.Close()
	for _, lib := range kit.Libraries() {
		if _, err := redislimit.LoadLibrary(t.Context(), rdb, lib); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for _, v := range vectors {
		// The first step of the first vector of each algorithm that
		// admits it: the call is valid but for force.
		if v.Policy != nil || seen[v.Algorithm] || len(v.Steps) == 0 || v.Steps[0].Expect.Allowed == nil || !*v.Steps[0].Expect.Allowed {
			continue
		}
		seen[v.Algorithm] = true
		c, refused := prepareCall("", v.Request(v.Steps[0], v.Params), decideCall, "")
		if refused != nil {
			t.Fatalf("%s: %v", v.Name, refused)
		}
		s, _ := lookupScripts(v.Algorithm)
		for _, force := range []string{"2", "", "01", "-0", "true"} {
			argv := make([]any, len(c.argv))
			for i, a := range c.argv {
				argv[i] = a
			}
			argv[2] = force
			want := "BADINPUT " + v.Algorithm + ": force must be 0 or 1, got " + force
			for via, call := range map[string]*redis.Cmd{
				"EVAL":  rdb.Eval(context.Background(), s.Decide.Source, c.keys, argv...),
				"FCALL": rdb.FCall(context.Background(), c.function(), c.keys, argv...),
			} {
				if err := call.Err(); err == nil || err.Error() != want {
					t.Errorf("%s %s with force %q: %v; want %s", via, s.Decide.Name, force, err, want)
				}
			}
			if n := rdb.DBSize(context.Background()).Val(); n != 0 {
				t.Fatalf("%s with force %q wrote %d keys", s.Decide.Name, force, n)
			}
		}
	}
	decided := 0 // an in-flight algorithm refuses every call alone
	for _, s := range kit.AllScripts() {
		if !inFlight(s.ID.String(), vectors) {
			decided++
		}
	}
	if len(seen) < decided {
		t.Errorf("vectors of %d algorithms, %d registered that decide alone", len(seen), decided)
	}
}
