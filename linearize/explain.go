package linearize

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Explain says why the history ops is not linearizable, in text, after
// checking it within timeout (see Check, whose Result holds the same
// explanation).
func Explain(spec Spec, ops []porcupine.Operation, timeout time.Duration) string {
	c := newChecker(spec)
	verdict, info := porcupine.CheckOperationsVerbose(c.model(), ops, timeout)
	if verdict == porcupine.Ok {
		return ""
	}
	return c.explain(ops, info)
}

// explain writes, for each partition (identity value) of ops that info,
// porcupine's check of ops by c's model, did not linearize whole: the last
// operations of its longest linearization, the operations that could not
// follow it (in the order they were invoked), and what the oracle answers
// the first of them from every state that linearization may have
// reached.
func (c *checker) explain(ops []porcupine.Operation, info porcupine.LinearizationInfo) string {
	var b strings.Builder
	partials := info.PartialLinearizationsOperations()
	for p, part := range partition(ops) {
		var longest []porcupine.Operation
		if len(partials[p]) > 0 {
			longest = slices.MaxFunc(partials[p], func(a, b []porcupine.Operation) int { return len(a) - len(b) })
		}
		if len(longest) == len(part) {
			continue
		}
		fmt.Fprintf(&b, "tenant %s: %d operations, the longest linearization found %d\n", part[0].Input.(Input).Value, len(part), len(longest))
		for _, op := range longest[max(0, len(longest)-8):] {
			fmt.Fprintf(&b, "  linearized %s\n", describe(op))
		}
		rest := pending(part, longest)
		for _, op := range rest[:min(8, len(rest))] {
			fmt.Fprintf(&b, "  then?      %s\n", describe(op))
		}
		c.explainStates(&b, longest, rest[:min(4, len(rest))])
	}
	return b.String()
}

// pending are the operations of part that linearization does not hold,
// in the order they were invoked.
func pending(part, linearization []porcupine.Operation) []porcupine.Operation {
	done := map[string]bool{}
	for _, op := range linearization {
		done[opKey(op)] = true
	}
	var rest []porcupine.Operation
	for _, op := range part {
		if !done[opKey(op)] {
			rest = append(rest, op)
		}
	}
	slices.SortStableFunc(rest, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	return rest
}

// opKey tells an operation of a history from the others.
func opKey(op porcupine.Operation) string {
	return fmt.Sprint(op.ClientId, op.Call, op.Return, op.Input, op.Metadata)
}

// explainStates writes what the oracle answers to each of next from the
// states linearization may have reached.
func (c *checker) explainStates(b *strings.Builder, linearization, next []porcupine.Operation) {
	model := c.model()
	st := model.Init()
	for _, op := range linearization {
		_, st = model.Step(st, op.Input, op.Output)
	}
	for _, s := range st.([]any) {
		s := s.(*state)
		fmt.Fprintf(b, "  from state %s:\n", describeState(s))
		for _, op := range next {
			in := op.Input.(Input)
			if s == initial {
				s = c.engine(in.Value).root
			}
			fmt.Fprintf(b, "    the oracle: %v → %v\n", in, s.eng.step(s, in).out)
		}
	}
}

// describe is an operation as Explain writes it: its interval in ms of
// the recorder's clock, its client, input, output and metadata.
func describe(op porcupine.Operation) string {
	return fmt.Sprintf("[%.1f, %.1f] client %d: %v → %v (%v)", float64(op.Call)/1e6, float64(op.Return)/1e6, op.ClientId, op.Input, op.Output, op.Metadata)
}
