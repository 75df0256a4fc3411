package linearize_test

import (
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/limitspec/limitspec/linearize"
)

// jobs is the policy of the hand-made histories: 1 slot, and 10 per
// second, per tenant.
var jobs = linearize.Spec{Name: "jobs", Identity: "tenant", Limits: []linearize.LimitSpec{
	{Name: "slots", Algorithm: "concurrency", Params: map[string]int64{"limit": 1}},
	{Name: "window", Algorithm: "fixed_window", Params: map[string]int64{"limit": 10, "window_ms": 1000}},
}}

// The calls of the hand-made histories, on tenant acme from 1000 ms.
var (
	reserveA  = linearize.Input{Op: linearize.Reserve, Value: "acme", ID: "a", Cost: 1, HoldMs: 100, Now: 1000}
	reserveB  = linearize.Input{Op: linearize.Reserve, Value: "acme", ID: "b", Cost: 1, HoldMs: 100, Now: 1001}
	commitA   = linearize.Input{Op: linearize.Commit, Value: "acme", ID: "a", Cost: 2, Now: 1010}
	peekAt    = func(now int64) linearize.Input { return linearize.Input{Op: linearize.Decide, Value: "acme", Now: now} }
	unknown   = linearize.Output{Class: linearize.Unknown}
	heldUntil = func(end, now int64) linearize.Output { // a decision of 0 while a holds the slot
		return result(true, 0, lim(true, 0, 0, end-now), lim(true, 9, 0, end-now))
	}
	free = result(true, 0, lim(true, 1, 0, 0), lim(true, 10, 0, 0)) // nothing held, nothing charged
)

func lim(allowed bool, remaining, retry, reset int64) linearize.LimitOut {
	return linearize.LimitOut{Allowed: allowed, Remaining: remaining, RetryAfterMs: retry, ResetAfterMs: reset}
}

func result(allowed bool, binding int, limits ...linearize.LimitOut) linearize.Output {
	return linearize.Output{Allowed: allowed, Binding: binding, Limits: limits}
}

// op is a call of client over [call, ret] (ret 0: returned after every
// other call, its outcome unknown).
func op(client int, call, ret int64, in linearize.Input, out linearize.Output) porcupine.Operation {
	if ret == 0 {
		ret = 1000
	}
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

// TestCheckerVerdicts: hand-made histories of jobs, each linearizable or
// not as worked out by hand, get porcupine's verdict through Model.
func TestCheckerVerdicts(t *testing.T) {
	t.Parallel()
	admittedA := result(true, 0, lim(true, 0, 0, 100), lim(true, 9, 0, 100))
	committedA := result(true, 1, lim(true, 1, 0, 0), lim(true, 8, 0, 990))
	tests := []struct {
		name    string
		history []porcupine.Operation
		want    porcupine.CheckResult
	}{
		{"the last slot reserved by two at once: one admitted, told to retry when the other's hold ends", []porcupine.Operation{
			op(0, 0, 10, reserveA, admittedA),
			op(1, 5, 15, reserveB, result(false, 0, lim(false, 0, 99, 99), lim(true, 9, 0, 99))),
		}, porcupine.Ok},
		{"the last slot reserved by two at once: both admitted", []porcupine.Operation{
			op(0, 0, 10, reserveA, admittedA),
			op(1, 5, 15, reserveB, result(true, 0, lim(true, 0, 0, 100), lim(true, 9, 0, 100))),
		}, porcupine.Illegal},
		{"a commit of 2 charges 2", []porcupine.Operation{
			op(0, 0, 1, reserveA, admittedA),
			op(0, 2, 3, commitA, committedA),
			op(1, 4, 5, peekAt(1020), result(true, 1, lim(true, 1, 0, 0), lim(true, 8, 0, 980))),
		}, porcupine.Ok},
		{"a commit of 2 charged twice", []porcupine.Operation{
			op(0, 0, 1, reserveA, admittedA),
			op(0, 2, 3, commitA, committedA),
			op(1, 4, 5, peekAt(1020), result(true, 1, lim(true, 1, 0, 0), lim(true, 6, 0, 980))),
		}, porcupine.Illegal},
		{"a reserve whose reply was lost took effect late", []porcupine.Operation{
			op(0, 0, 0, reserveA, unknown),
			op(1, 10, 11, peekAt(1005), free),
			op(1, 20, 21, peekAt(1006), heldUntil(1100, 1006)),
		}, porcupine.Ok},
		{"a reserve whose reply was lost never took effect", []porcupine.Operation{
			op(0, 0, 0, reserveA, unknown),
			op(1, 10, 11, peekAt(1005), free),
			op(1, 20, 21, peekAt(1006), free),
		}, porcupine.Ok},
		{"a reserve whose reply was lost held, then not, before its end", []porcupine.Operation{
			op(0, 0, 0, reserveA, unknown),
			op(1, 10, 11, peekAt(1005), heldUntil(1100, 1005)),
			op(1, 20, 21, peekAt(1006), free),
		}, porcupine.Illegal},
		{"a decision seen before another was invoked is not taken after it", []porcupine.Operation{
			op(0, 0, 1, reserveA, admittedA),
			op(1, 2, 3, peekAt(1001), free),
		}, porcupine.Illegal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := linearize.Check(jobs, tt.history, 10*time.Second, t.ArtifactDir())
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tt.want {
				t.Errorf("verdict %s; want %s (visualization: %s)", res.Verdict, tt.want, res.Visualization)
			}
		})
	}
}

// attempts is an Attempts of fixed counts by now_ms: the attempts that
// ran, and of them timed out.
type attempts map[int64][2]int

// Ran is the counts given for now.
func (a attempts) Ran(now int64) (int, int) { return a[now][0], a[now][1] }

// TestOperations: each call is an operation when its outcome is known,
// and each attempt that may have run without its reply being returned is
// an operation of unknown outcome, invoked with its call, returning with
// it when its connection broke, after every call when it timed out.
func TestOperations(t *testing.T) {
	t.Parallel()
	timedOut := linearize.Output{Class: linearize.Unknown, Err: "context deadline exceeded"}
	tests := []struct {
		name       string
		out        linearize.Output
		timedOut   bool   // the call's error was a timeout
		ran        [2]int // attempts that may have run, timed out; -1: no Attempts
		known      int
		lost, late int
	}{
		{"a result, sent once", free, false, [2]int{1, 0}, 1, 0, 0},
		{"a result, without Attempts", free, false, [2]int{-1, 0}, 1, 0, 0},
		{"NOHOLD after a broken connection", linearize.Output{Class: linearize.NoHold}, false, [2]int{2, 0}, 1, 1, 0},
		{"a result after two broken connections", free, false, [2]int{3, 0}, 1, 2, 0},
		{"a result after a timeout and a broken connection", free, false, [2]int{3, 1}, 1, 2, 1},
		{"BADINPUT, refused before it was sent", linearize.Output{Class: linearize.BadInput}, false, [2]int{0, 0}, 1, 0, 0},
		{"unknown, its connection broken", unknown, false, [2]int{1, 0}, 0, 1, 0},
		{"unknown, timed out", timedOut, true, [2]int{1, 1}, 0, 1, 1},
		{"unknown, timed out, its attempt not counted", timedOut, true, [2]int{0, 0}, 0, 1, 1},
		{"unknown, without Attempts", unknown, false, [2]int{-1, 0}, 0, 1, 1},
		{"unknown, timed out after two broken connections", timedOut, true, [2]int{3, 0}, 0, 3, 1},
		{"unavailable, never sent", linearize.Output{Class: linearize.Unavailable}, true, [2]int{0, 0}, 0, 0, 0},
		{"unavailable, without Attempts", linearize.Output{Class: linearize.Unavailable}, false, [2]int{-1, 0}, 0, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := []linearize.Call{
				{Client: 0, Input: peekAt(1000), Output: free, Call: 0, Return: 10},
				{Client: 1, Input: peekAt(1001), Output: tt.out, Call: 5, Return: 20, TimedOut: tt.timedOut},
			}
			var a linearize.Attempts
			if tt.ran[0] >= 0 {
				a = attempts{1000: {1, 0}, 1001: tt.ran}
			}
			ops := linearize.Operations(calls, a)
			st := linearize.Count(calls, ops)
			if st.Operations != 1+tt.known+tt.lost || st.Lost != tt.lost || st.Late != tt.late {
				t.Fatalf("%d operations, %d lost, %d late; want %d, %d and %d", st.Operations, st.Lost, st.Late, 1+tt.known+tt.lost, tt.lost, tt.late)
			}
			late := 0
			for _, op := range ops[1:] {
				if op.Output.(linearize.Output).Class != linearize.Unknown {
					continue
				}
				if op.Return > 20 {
					late++
				}
				if op.Call != 5 || op.Return < 20 || op.ClientId < 2 {
					t.Errorf("a lost attempt over [%d, %d] by client %d; want it invoked at 5, returning at 20 or after, on a line of its own", op.Call, op.Return, op.ClientId)
				}
			}
			if late != tt.late {
				t.Errorf("%d lost attempts return after every call; want %d", late, tt.late)
			}
		})
	}
}

// TestExplain: the explanation of a history whose first call cannot be
// linearized names it, and what the oracle answers it.
func TestExplain(t *testing.T) {
	t.Parallel()
	history := []porcupine.Operation{op(0, 0, 1, peekAt(1000), result(true, 0, lim(true, 0, 0, 0), lim(true, 10, 0, 0)))}
	got := linearize.Explain(jobs, history, 10*time.Second)
	for _, want := range []string{"tenant acme: 1 operations, the longest linearization found 0", "then?      [0.0, 0.0] client 0: decide acme ×0 @1000", "the oracle: decide acme ×0 @1000 → allowed *[true 1 0 0] [true 10 0 0]"} {
		if !strings.Contains(got, want) {
			t.Errorf("the explanation\n%s\nsays not %q", got, want)
		}
	}
}
