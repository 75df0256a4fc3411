package conformance

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/limitspec/limitspec/lua"

	"github.com/limitspec/limitspec/internal/oracle"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// VectorResult is how one target fared on one vector.
type VectorResult struct {
	Vector string
	File   string
	Target string
	Steps  int    // steps the target ran
	Failed string // the first failure, with its diff; "" when passed
	// Skipped says why the target could not run the vector at all (see
	// ErrNotApplicable); such a vector neither passes nor fails.
	Skipped string
}

// Passed reports whether the target ran the vector without failure.
func (r VectorResult) Passed() bool { return r.Failed == "" && r.Skipped == "" }

// Run replays every vector on every target in lockstep and returns one
// result per vector and target.
func Run(vectors []Vector, targets []Target) []VectorResult {
	var out []VectorResult
	for _, v := range vectors {
		out = append(out, RunVector(v, targets)...)
	}
	return out
}

// ignoreMessage compares outcomes by class, not by the error's text.
var ignoreMessage = cmpopts.IgnoreFields(Outcome{}, "Message")

// RunVector replays one vector on all targets. At each step it checks
// every target against the vector's expectations and against the first
// target, and on targets with a keyspace that every key has a TTL and that
// a refused step changed no key. It reports the first failure per target.
func RunVector(v Vector, targets []Target) []VectorResult {
	res := make([]VectorResult, len(targets))
	for i, t := range targets {
		res[i] = VectorResult{Vector: v.Name, File: v.File, Target: t.Name()}
		switch err := t.Begin(v.Subject(), v.Params); {
		case errors.Is(err, ErrNotApplicable):
			res[i].Skipped = err.Error()
		case err != nil:
			res[i].Failed = "begin: " + err.Error()
		}
	}
	maxTTL := maxTTLOf(v)
	for si, s := range v.Steps {
		where := fmt.Sprintf("step %d (t_ms %d, key %q, cost %s)", si, s.T, s.Key, s.CostArg())
		if v.Policy != "" {
			where = fmt.Sprintf("step %d (t_ms %d, ids %v, cost %s)", si, s.T, s.IDs, s.CostArg())
		}
		if s.View != "" {
			where = fmt.Sprintf("step %d (t_ms %d, key %q, view %s)", si, s.T, s.Key, s.View)
		}
		if s.Force {
			where += ", forced"
		}
		outs := make([]*Outcome, len(targets))
		base := -1
		for i, t := range targets {
			if !res[i].Passed() {
				continue
			}
			ks, hasKeys := t.(Keyspace)
			if s.WrongType.Any() && !hasKeys {
				continue // not applicable without Redis types
			}
			var before []KeyTTL
			if hasKeys {
				if s.WrongType.Any() {
					if err := ks.PlantWrongType(s.Request(), s.WrongType); err != nil {
						res[i].Failed = where + ": planting a wrong type: " + err.Error()
						continue
					}
				}
				var err error
				if before, err = ks.Keys(); err != nil {
					res[i].Failed = where + ": listing keys: " + err.Error()
					continue
				}
			}
			var o Outcome
			switch {
			case s.View != "":
				o = t.View(s.View, s.Key, s.T)
			case s.Reset:
				o = t.Reset(s.Request())
			default:
				o = t.Decide(s.Request())
			}
			outs[i] = &o
			res[i].Steps++
			if msg := checkExpect(s.Expect, o); msg != "" {
				res[i].Failed = fmt.Sprintf("%s: %s", where, msg)
				continue
			}
			if hasKeys {
				if msg := checkKeys(ks, before, o.Error != "", maxTTL); msg != "" {
					res[i].Failed = fmt.Sprintf("%s: %s", where, msg)
					continue
				}
			}
			if base < 0 {
				base = i
				continue
			}
			if diff := cmp.Diff(*outs[base], o, ignoreMessage); diff != "" {
				res[i].Failed = fmt.Sprintf("%s: %s and %s differ (-%s +%s):\n%s",
					where, targets[base].Name(), t.Name(), targets[base].Name(), t.Name(), diff)
			}
		}
	}
	return res
}

// checkExpect compares an outcome with the fields a vector expects.
func checkExpect(e Expect, o Outcome) string {
	if e.Error != nil && *e.Error {
		if o.Error == "" {
			return fmt.Sprintf("expected an error, got %+v", o)
		}
		return ""
	}
	if e.none() {
		return "" // nothing expected, nothing checked; other targets still are
	}
	if e.Entries != nil {
		if o.Error != "" {
			return fmt.Sprintf("unexpected error %s", o.Message)
		}
		if diff := cmp.Diff(entryStrings(*e.Entries), o.Entries); diff != "" {
			return "entries differ from the vector (-want +got):\n" + diff
		}
		return ""
	}
	if o.Error != "" {
		return fmt.Sprintf("unexpected error %s", o.Message)
	}
	want, got := map[string]any{}, map[string]any{}
	check := func(name string, w *int64, g int64) {
		if w != nil {
			want[name], got[name] = *w, g
		}
	}
	if e.Allowed != nil {
		want["allowed"], got["allowed"] = *e.Allowed, o.Allowed
	}
	check("limit", e.Limit, o.Limit)
	check("remaining", e.Remaining, o.Remaining)
	check("retry_after_ms", e.RetryAfterMs, o.RetryAfterMs)
	check("reset_after_ms", e.ResetAfterMs, o.ResetAfterMs)
	check("delay_ms", e.DelayMs, o.DelayMs)
	check("tier", e.Tier, o.Tier)
	check("index", e.Index, o.Index)
	if diff := cmp.Diff(want, got); diff != "" {
		return "differs from the vector (-want +got):\n" + diff
	}
	if e.Limits != nil && len(e.Limits) != len(o.Limits) {
		return fmt.Sprintf("%d limits, the vector expects %d", len(o.Limits), len(e.Limits))
	}
	for i, le := range e.Limits {
		if msg := checkExpect(le, o.Limits[i]); msg != "" {
			return fmt.Sprintf("limit %d: %s", i+1, msg)
		}
	}
	return ""
}

// none reports whether e expects nothing.
func (e Expect) none() bool {
	return e.Allowed == nil && e.Limit == nil && e.Remaining == nil && e.RetryAfterMs == nil &&
		e.ResetAfterMs == nil && e.DelayMs == nil && e.Tier == nil && e.Entries == nil &&
		e.Index == nil && e.Limits == nil && e.Error == nil
}

// maxTTLOf is the longest TTL a key of the vector's limiter may carry
// (oracle.MaxTTL), or 0 when the oracle does not know the algorithm or
// refuses its parameters: then no bound is checked.
func maxTTLOf(v Vector) int64 {
	params := map[string]int64{}
	for k, n := range v.Params {
		x, err := n.Int64()
		if err != nil {
			return 0
		}
		params[k] = x
	}
	if v.Policy == "" {
		return algorithmMaxTTL(v.Algorithm, params)
	}
	p, ok := lua.LookupPolicy(v.Policy)
	if !ok {
		return 0
	}
	longest := int64(0)
	for _, l := range p.Limits {
		ms := algorithmMaxTTL(l.Algorithm, l.ParamsWith(params))
		if ms == 0 {
			return 0
		}
		longest = max(longest, ms)
	}
	return longest
}

// OraclePolicy is the oracle's model of the named policy, built from its
// definition in the manifest (package lua) and its per-call parameters,
// named limit.param; an unknown policy or parameter matches
// oracle.ErrBadInput.
func OraclePolicy(name string, params map[string]int64) (*oracle.Policy, error) {
	p, ok := lua.LookupPolicy(name)
	if !ok {
		return nil, fmt.Errorf("%w: unknown policy %q", oracle.ErrBadInput, name)
	}
	for k := range params {
		if !slices.Contains(p.Params, k) {
			return nil, fmt.Errorf("%w: %s: unknown parameter %s", oracle.ErrBadInput, name, k)
		}
	}
	var limits []oracle.PolicyLimit
	for _, l := range p.Limits {
		limits = append(limits, oracle.PolicyLimit{Name: l.Name, Algorithm: l.Algorithm,
			Identity: l.Identity, Constant: l.Constant, Params: l.ParamsWith(params)})
	}
	return oracle.NewPolicy(p.Name, limits)
}

func algorithmMaxTTL(algorithm string, params map[string]int64) int64 {
	if _, err := oracle.New(algorithm, params); err != nil {
		return 0
	}
	ms, _ := oracle.MaxTTL(algorithm, params)
	return ms
}

// checkKeys requires on every key a TTL, at most maxTTL when it is not 0,
// and no change of keys after a refused step.
func checkKeys(ks Keyspace, before []KeyTTL, refused bool, maxTTL int64) string {
	after, err := ks.Keys()
	if err != nil {
		return "listing keys: " + err.Error()
	}
	var noTTL []string
	for _, k := range after {
		if k.TTL <= 0 {
			noTTL = append(noTTL, fmt.Sprintf("%s (PTTL %d)", k.Key, k.TTL))
		}
	}
	if len(noTTL) > 0 {
		return "keys without a TTL: " + strings.Join(noTTL, ", ")
	}
	for _, k := range after {
		if maxTTL > 0 && k.TTL > maxTTL {
			return fmt.Sprintf("key %s has a TTL of %d ms, above the limiter's horizon plus MAX_SKEW_MS plus the margin, %d ms", k.Key, k.TTL, maxTTL)
		}
	}
	if refused && !sameKeys(before, after) {
		return fmt.Sprintf("a refused step changed the keys (-before +after):\n%s", cmp.Diff(before, after, cmpopts.IgnoreFields(KeyTTL{}, "TTL")))
	}
	return ""
}

// sameKeys compares key names and contents; a TTL may tick down on a real
// server between two listings.
func sameKeys(a, b []KeyTTL) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].Content != b[i].Content {
			return false
		}
	}
	return true
}

// Summary counts passed and failed vector×target pairs.
func Summary(results []VectorResult) (passed, failed int) {
	for _, r := range results {
		switch {
		case r.Passed():
			passed++
		case r.Skipped == "":
			failed++
		}
	}
	return passed, failed
}
