package gen

import "fmt"

// How an aggregate over a zset is computed: never by reading the entries
// it covers, but from the ranks of its score range (ZCOUNT) and at most a
// binary search over the entries at those ranks (ZRANGE r r), so that a
// decision costs O(log² n) in the entries n the set holds, however many
// its range covers.
type indexKind int

const (
	// byCount: V is a literal k; sum is k times the entries in range, and
	// reach's entry is found by its rank.
	byCount indexKind = iota
	// byRun: V is the field the zset keeps a running sum of; sum is the
	// difference of two running sums, and reach's entry is found by a
	// binary search over them.
	byRun
	// byLast: last reads the entry at the top of the range.
	byLast
)

// zsetIndex is the plan of one aggregate over a zset.
type zsetIndex struct {
	kind   indexKind
	k      int64 // the literal of byCount
	bounds scoreBounds
}

// planIndex plans an aggregate over a zset, or says why it cannot be
// computed by index: its where clause must bound the score alone, and
// the values a sum or reach adds must be a literal or the field whose
// running sum the zset keeps.
func planIndex(ag *Agg) (zsetIndex, error) {
	s := ag.It.State
	x := zsetIndex{bounds: zsetBounds(ag)}
	if !x.bounds.exact {
		return x, fmt.Errorf("the where clause of an aggregate over the zset %s must compare its score %s.%s with values that do not depend on the entry, joined by &&", s.Name, ag.It.Name, s.Entry[0].Name)
	}
	if ag.Fn == Last {
		x.kind = byLast
		return x, nil
	}
	if l, ok := ag.V.(*Lit); ok && (l.V >= 1 || l.V == 0 && ag.Fn == Sum) {
		x.kind, x.k = byCount, l.V
		return x, nil
	}
	if r, ok := ag.V.(*EntryRef); ok && r.It == ag.It && r.F == s.RunOf {
		x.kind = byRun
		return x, nil
	}
	want := "a literal"
	if s.RunOf != nil {
		want += " or " + ag.It.Name + "." + s.RunOf.Name
	}
	return x, fmt.Errorf("%s over the zset %s adds %s: it must add %s (a zset's sums come from its running sum, declared with running: FIELD)", ag.Fn, s.Name, Format(ag.V), want)
}
