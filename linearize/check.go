package linearize

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Model is the porcupine model of spec's holding policy, the oracle's
// model its sequential specification: a nondeterministic model, turned
// into a porcupine.Model by porcupine's power-set construction
// (NondeterministicModel.ToModel), so that a state of the check is the
// set of the oracle's states the history so far allows. It partitions a
// history by the identity's value: each partition is the history of one
// value's keys, which no call of another value touches. Step applies an
// operation's input to a state of the oracle and accepts iff the oracle's
// outcome equals the recorded one (Output.Equal); an operation whose
// output is Unknown accepts any outcome and leads both to the state it
// was applied to (it did not take effect) and to the state after it (it
// did). A Spec the oracle refuses makes Step panic.
func Model(spec Spec) porcupine.Model { return newChecker(spec).model() }

// newChecker is a checker of spec, with no engine yet.
func newChecker(spec Spec) *checker { return &checker{spec: spec, engines: map[string]*engine{}} }

// model is the porcupine model of c (see Model).
func (c *checker) model() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Partition:                 partition,
		Init:                      func() []any { return []any{initial} },
		Step:                      c.step,
		Equal:                     func(a, b any) bool { return a == b },
		Hash:                      func(s any) uint64 { return s.(*state).id * 0x9E3779B97F4A7C15 },
		DescribeOperation:         describeOperation,
		DescribeState:             describeState,
		DescribeOperationMetadata: func(m any) string { return fmt.Sprint(m) },
	}
	return nm.ToModel()
}

// initial is the state before any call, of every identity value: its
// first step goes on from the value's engine's root.
var initial = &state{id: 0}

// checker holds the engines of a Model, one per identity value.
type checker struct {
	spec    Spec
	mu      sync.Mutex
	engines map[string]*engine
}

// engine is the engine of the identity value value.
func (c *checker) engine(value string) *engine {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.engines[value]
	if !ok {
		var err error
		if e, err = newEngine(c.spec, value); err != nil {
			panic("linearize: the oracle refuses the spec: " + err.Error())
		}
		c.engines[value] = e
	}
	return e
}

// step is the nondeterministic step of the Model.
func (c *checker) step(st, input, output any) []any {
	s, in, out := st.(*state), input.(Input), output.(Output)
	if s == initial {
		s = c.engine(in.Value).root
	}
	r := s.eng.step(s, in)
	switch {
	case !out.known():
		if r.next == s {
			return []any{s}
		}
		return []any{s, r.next}
	case r.out.Equal(out):
		return []any{r.next}
	}
	return nil
}

// partition splits a history by the identity's value, keeping each
// value's operations in order.
func partition(history []porcupine.Operation) [][]porcupine.Operation {
	var values []string
	by := map[string][]porcupine.Operation{}
	for _, op := range history {
		v := op.Input.(Input).Value
		if _, ok := by[v]; !ok {
			values = append(values, v)
		}
		by[v] = append(by[v], op)
	}
	slices.Sort(values)
	out := make([][]porcupine.Operation, 0, len(values))
	for _, v := range values {
		out = append(out, by[v])
	}
	return out
}

func describeOperation(input, output any) string {
	return fmt.Sprintf("%v → %v", input, output)
}

func describeState(st any) string {
	s := st.(*state)
	if s == initial || s.parent == nil {
		return "fresh"
	}
	return fmt.Sprintf("#%d (%d steps; last %s → %v)", s.id, s.depth, s.in.Op, s.made)
}

// Result is the verdict of Check.
type Result struct {
	// Verdict is porcupine's: Ok, Illegal, or Unknown when the check
	// timed out.
	Verdict porcupine.CheckResult
	// Visualization is the path of the HTML file porcupine wrote, when
	// Check was given a directory and the verdict is not Ok.
	Visualization string
	// Took is how long the check took.
	Took time.Duration
	// Explanation says, when the verdict is not Ok, where each partition
	// that was not linearized whole stopped (see Explain).
	Explanation string
}

// Check checks that the history ops is linearizable with respect to the
// oracle's model of spec (Model), within timeout. When it is not, or the
// check times out, it explains where it stopped and, when dir is not "",
// writes porcupine's visualization of the history and its longest
// linearizations to dir.
func Check(spec Spec, ops []porcupine.Operation, timeout time.Duration, dir string) (Result, error) {
	c := newChecker(spec)
	model := c.model()
	start := time.Now()
	verdict, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	res := Result{Verdict: verdict, Took: time.Since(start)}
	if verdict == porcupine.Ok {
		return res, nil
	}
	res.Explanation = c.explain(ops, info)
	if dir == "" {
		return res, nil
	}
	res.Visualization = filepath.Join(dir, "linearizability.html")
	f, err := os.Create(res.Visualization)
	if err != nil {
		return res, err
	}
	if err := porcupine.Visualize(model, info, f); err != nil {
		f.Close()
		return res, err
	}
	return res, f.Close()
}
