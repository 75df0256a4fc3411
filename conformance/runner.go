package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/internal/oracle"
	"github.com/limitspec/limitspec/kit"

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
// target (a Peer against the vector only), and on targets with a
// keyspace that every key has a TTL and that a refused step changed no
// key. It reports the first failure per target.
func RunVector(v Vector, targets []Target) []VectorResult {
	res := make([]VectorResult, len(targets))
	for i, t := range targets {
		res[i] = VectorResult{Vector: v.Name, File: v.File, Target: t.Name()}
		switch err := begin(t, &v); {
		case errors.Is(err, ErrNotApplicable):
			res[i].Skipped = err.Error()
		case err != nil:
			res[i].Failed = "begin: " + err.Error()
		}
	}
	params, maxTTL := v.Params, int64(0)
	for si, s := range v.Steps {
		if s.Params != nil {
			params = s.Params
		}
		// Keys written under earlier parameters keep their TTLs.
		maxTTL = max(maxTTL, maxTTLOf(v, params))
		r, where := v.Request(s, params), stepLabel(si, s, v.Policy != nil)
		base := -1
		var baseOutcome Outcome
		for i, run := range runTargets(targets, res, s, r, maxTTL) {
			if !run.ran {
				continue
			}
			res[i].Steps++
			msg := run.msg
			if msg == "" && base >= 0 && !run.peer {
				if diff := cmp.Diff(baseOutcome, run.o, ignoreMessage); diff != "" {
					b, t := targets[base].Name(), targets[i].Name()
					msg = fmt.Sprintf("%s and %s differ (-%s +%s):\n%s", b, t, b, t, diff)
				}
			}
			if msg != "" {
				res[i].Failed = where + ": " + msg
				continue
			}
			if base < 0 && !run.peer {
				base, baseOutcome = i, run.o
			}
		}
	}
	return res
}

// begin begins v on t, or says why t cannot run it: a target of a Go
// limiter cannot decide an algorithm whose typed limit is not linked in
// (a user's spec given to cmd/verify as a file, whose Lua runs).
func begin(t Target, v *Vector) error {
	if _, ok := t.(interface{ decidesTypedLimits() }); ok {
		for _, a := range v.Algorithms() {
			if _, ok := kit.LookupLimit(limitspec.ParseAlgorithm(a)); !ok {
				return fmt.Errorf("%w: no typed limit of %s is linked in: compile its spec into a package (cmd/gen) "+
					"and run its vectors from a test of that package (conformance.Test)", ErrNotApplicable, a)
			}
		}
	}
	return t.Begin(v)
}

// Peer is implemented by a target held to the vectors alone (ExecTarget):
// another implementation of the contract, not expected to agree with the
// other targets on what the vectors leave open. The runner checks it
// against each step's expectation, narrowed to the fields it reports,
// and never compares it with another target, nor another with it.
type Peer interface {
	// Reported narrows an expectation to the fields the target reports
	// (and error).
	Reported(e Expect) Expect
	// Fault is why the target gave no valid answer to the last step (it
	// hung, exited, or broke its protocol), "" when it did; the step
	// then fails, whatever it expects.
	Fault() string
}

// stepRun is one target's run of one step: its outcome and what is wrong
// ("" when nothing), or nothing when the target did not run it.
type stepRun struct {
	ran  bool
	o    Outcome
	msg  string
	peer bool
}

// runTargets runs step s on every target that has not failed yet, all at
// once: the targets share nothing (each has its own state, or its own
// key prefix on a shared server), so a step takes the slowest target's
// time rather than the sum of all. A wrong type needs Redis types: a
// target without a keyspace does not run such a step. A Peer is held to
// the fields it reports.
func runTargets(targets []Target, res []VectorResult, s Step, r Request, maxTTL int64) []stepRun {
	runs := make([]stepRun, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		if !res[i].Passed() || (s.WrongType.Any() && !hasKeyspace(t)) {
			continue
		}
		wg.Go(func() {
			peer, isPeer := t.(Peer)
			st := s
			if isPeer {
				st.Expect = peer.Reported(s.Expect)
			}
			o, msg := runStep(t, st, r, maxTTL)
			if isPeer && peer.Fault() != "" {
				msg = peer.Fault()
			}
			runs[i] = stepRun{ran: true, o: o, msg: msg, peer: isPeer}
		})
	}
	wg.Wait()
	return runs
}

func hasKeyspace(t Target) bool {
	_, ok := t.(Keyspace)
	return ok
}

// stepLabel names a step in a failure.
func stepLabel(i int, s Step, policy bool) string {
	where := fmt.Sprintf("step %d (t_ms %d, key %q, cost %s)", i, s.T, s.Key, s.CostArg())
	switch {
	case policy:
		where = fmt.Sprintf("step %d (t_ms %d, ids %v, cost %s)", i, s.T, s.IDs, s.CostArg())
	case s.View != "":
		where = fmt.Sprintf("step %d (t_ms %d, key %q, view %s)", i, s.T, s.Key, s.View)
	}
	if s.Params != nil {
		where += fmt.Sprintf(", params %v", s.Params)
	}
	if s.Force {
		where += ", forced"
	}
	return where
}

// runStep runs one step on one target and checks it against the vector
// and, on a target with a keyspace, its keys: every key with a TTL of at
// most maxTTL (when not 0), none changed by a refused step. It returns
// the outcome and what is wrong, "" when nothing.
func runStep(t Target, s Step, r Request, maxTTL int64) (Outcome, string) {
	ks, hasKeys := t.(Keyspace)
	var before []KeyTTL
	if hasKeys {
		if s.WrongType.Any() {
			if err := ks.PlantWrongType(r, s.WrongType); err != nil {
				return Outcome{}, "planting a wrong type: " + err.Error()
			}
		}
		// The keys before the step matter only if it may be refused (its
		// expectation allows an error): a refused step must change none.
		if s.Expect.Error.Refused() || s.Expect.none() {
			var err error
			if before, err = ks.Keys(); err != nil {
				return Outcome{}, "listing keys: " + err.Error()
			}
		}
	}
	var o Outcome
	switch {
	case s.View != "":
		o = t.View(s.View, r)
	case s.Reset:
		o = t.Reset(r)
	default:
		o = t.Decide(r)
	}
	if msg := checkExpect(s.Expect, o); msg != "" {
		return o, msg
	}
	if hasKeys {
		return o, checkKeys(ks, before, o.Error != "", maxTTL)
	}
	return o, ""
}

// checkExpect compares an outcome with the fields a vector expects.
func checkExpect(e Expect, o Outcome) string {
	if e.Error.Refused() {
		want := "an error"
		if *e.Error != AnyError {
			want = "a " + string(*e.Error) + " error"
		}
		switch {
		case o.Error == "":
			return fmt.Sprintf("expected %s, got %+v", want, o)
		case *e.Error != AnyError && ErrorClass(o.Error) != *e.Error:
			return fmt.Sprintf("expected %s, got %s", want, o.Message)
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

// maxTTLOf is the longest TTL a key of the vector's limit (or policy)
// under params may carry (oracle.MaxTTL), or 0 when the oracle does not
// know an algorithm or refuses its parameters: then no bound is checked.
// A holding policy's holds key lasts until its last hold ends (at most
// HOLD_MS_MAX after the call that made it) or its last remembered end's
// reach does (REQUEST_MS after it), plus the margin, rounded up by
// REQUEST_MS.
func maxTTLOf(v Vector, params map[string]json.Number) int64 {
	if v.Policy == nil {
		return algorithmMaxTTL(v.Algorithm, params)
	}
	longest := int64(0)
	if v.Policy.Holds { // a holds key's: its last end, rounded up by REQUEST_MS
		longest = oracle.HoldMsMax + oracle.RequestMs + oracle.TTLMarginMs
	}
	for _, l := range v.Policy.Limits {
		ms := algorithmMaxTTL(l.Algorithm, l.Params)
		if ms == 0 {
			return 0
		}
		longest = max(longest, ms)
	}
	return longest
}

// oraclePolicy is the oracle's model of a vector's policy; a parameter
// that is no integer, an unknown algorithm or a refused parameter matches
// oracle.ErrBadInput.
func oraclePolicy(p *Policy) (*oracle.Policy, error) {
	limits, err := oracleLimits(p)
	if err != nil {
		return nil, err
	}
	return oracle.NewPolicy(p.Name, limits)
}

// oracleHoldingPolicy is the oracle's model of a holding policy.
func oracleHoldingPolicy(p *Policy) (*oracle.HoldingPolicy, error) {
	limits, err := oracleLimits(p)
	if err != nil {
		return nil, err
	}
	return oracle.NewHoldingPolicy(p.Name, limits)
}

// oracleLimits are p's limits as the oracle takes them.
func oracleLimits(p *Policy) ([]oracle.PolicyLimit, error) {
	var limits []oracle.PolicyLimit
	for _, l := range p.Limits {
		ints, refused := intParams(l.Algorithm, l.Params)
		if refused != nil {
			return nil, fmt.Errorf("%w: %s", oracle.ErrBadInput, refused.Message)
		}
		limits = append(limits, oracle.PolicyLimit{Name: l.Name, Algorithm: l.Algorithm,
			Identity: l.Identity, Constant: l.Constant, Params: ints, Unit: l.Unit})
	}
	return limits, nil
}

func algorithmMaxTTL(algorithm string, params map[string]json.Number) int64 {
	ints, refused := intParams(algorithm, params)
	if refused != nil {
		return 0
	}
	if _, err := oracle.New(algorithm, ints); err != nil {
		return 0
	}
	ms, _ := oracle.MaxTTL(algorithm, ints)
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
		if strings.Contains(k.Key, limitcall.RequestKeyTail("")) { // a request key (docs/semantics.md, "Request ids")
			if k.TTL > oracle.RequestMs+oracle.TTLMarginMs {
				return fmt.Sprintf("request key %s has a TTL of %d ms, above REQUEST_MS plus the margin", k.Key, k.TTL)
			}
			continue
		}
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
