package conformance

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/kit"
	"github.com/limitspec/limitspec/redislimit"
)

// TestLibraryRemembersParameters: the Functions library's decisions
// remember the parameters they found valid, by their arguments, and
// forget them all past a bound, replying alike all the while. Through
// more distinct parameter sets than it remembers, each used twice (a miss, then a hit) and interleaved
// with refused ones (which it must not remember) and with ones of
// another spelling (leading zeros, which go to the exact checks), FCALL
// replies as EVALSHA does on a twin key, call by call.
func TestLibraryRemembersParameters(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t).Addr()})
	defer rdb.Close()
	ctx := t.Context()
	lib, ok := kit.LookupLibrary(limitspec.Catalogue)
	if !ok {
		t.Fatal("the catalogue's library is not linked in")
	}
	if _, err := redislimit.LoadLibrary(ctx, rdb, lib); err != nil {
		t.Fatal(err)
	}
	sc, _ := kit.LookupScripts(limitspec.Algorithm{Library: limitspec.Catalogue, Name: "gcra"})
	fn := lib.Name + "_" + sc.Decide.Name
	// decide runs argv on key, whose tail names rate as keyRate spells
	// it, by EVALSHA and by FCALL on a twin key.
	decide := func(key, keyRate string, argv ...any) (evalsha, fcall any) {
		keys := []string{"{" + key + "}:gc:" + keyRate + ":" + fmt.Sprint(argv[5])}
		twin := []string{"{" + key + "-f}:gc:" + keyRate + ":" + fmt.Sprint(argv[5])}
		a, aerr := rdb.EvalSha(ctx, sc.Decide.SHA1, keys, argv...).Result()
		if redis.HasErrorPrefix(aerr, "NOSCRIPT") {
			a, aerr = rdb.Eval(ctx, sc.Decide.Source, keys, argv...).Result()
		}
		b, berr := rdb.FCall(ctx, fn, twin, argv...).Result()
		return reply(a, aerr), reply(b, berr)
	}
	// More sets than a function remembers, so that it forgets them all at
	// least once: the bound as the library's code states it.
	const sets = 1200
	m := regexp.MustCompile(`__n > (\d+) then`).FindStringSubmatch(lib.Source)
	if m == nil {
		t.Fatal("the library states no bound of the parameters it remembers")
	}
	if bound, _ := strconv.Atoi(m[1]); sets <= bound {
		t.Fatalf("%d parameter sets do not pass the %d the library remembers", sets, bound)
	}
	for round := range 2 {
		for i := 1; i <= sets; i++ {
			burst := strconv.Itoa(i)
			now := strconv.Itoa(1_700_000_000_000 + round*1000 + i)
			steps := []struct {
				keyRate string
				argv    []any
			}{
				{"10", []any{now, "1", "0", burst, "10", "1000"}},   // valid: remembered
				{"0", []any{now, "1", "0", burst, "0", "1000"}},     // rate 0: refused
				{"010", []any{now, "1", "0", burst, "010", "1000"}}, // the exact checks refuse the key
				{"10", []any{now, "1", "0", burst, "010", "1000"}},  // the exact checks accept it
				{"10", []any{now, "2", "0", burst, "10", "1000"}},   // valid again: found
			}
			for j, st := range steps {
				argv := st.argv
				a, b := decide("k"+burst, st.keyRate, argv...)
				if diff := cmp.Diff(a, b); diff != "" {
					t.Fatalf("round %d, set %d, call %d %v: EVALSHA and FCALL differ (-EVALSHA +FCALL):\n%s", round, i, j, argv, diff)
				}
			}
		}
	}
}

// reply is a script's reply or its error's text.
func reply(v any, err error) any {
	if err != nil {
		return "error: " + err.Error()
	}
	return v
}
