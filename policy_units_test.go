package limitspec_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
)

// TestPolicyCosts: what each limit of a policy counts of a request
// (docs/semantics.md, "Units"): its unit's amount when Costs gives it,
// else Cost; a unit no limit counts, and "", which names none, are
// refused.
func TestPolicyCosts(t *testing.T) {
	minute := limitspec.FixedWindow{Limit: 1000, Window: time.Minute}
	p, err := limitspec.NewPolicy("llm",
		limitspec.PolicyLimit{Name: "requests", Limit: minute, Identity: "key"},
		limitspec.PolicyLimit{Name: "tokens", Limit: minute, Identity: "key", Unit: "tokens"},
		limitspec.PolicyLimit{Name: "daily", Limit: minute, Identity: "key", Unit: "tokens"},
		limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: 4}, Identity: "key", Unit: "slots"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		cost  int64
		costs map[string]int64
		want  []int64
		err   string
	}{
		{"cost alone", 1, nil, []int64{1, 1, 1, 1}, ""},
		{"tokens", 1, map[string]int64{"tokens": 400}, []int64{1, 400, 400, 1}, ""},
		{"every unit", 2, map[string]int64{"tokens": 7, "slots": 0}, []int64{2, 7, 7, 0}, ""},
		{"a peek", 0, map[string]int64{"tokens": 0}, []int64{0, 0, 0, 0}, ""},
		{"misspelt", 1, map[string]int64{"tokenz": 5}, nil, "llm: no limit counts the unit tokenz"},
		{"the empty unit", 1, map[string]int64{"": 5}, nil, `llm: no limit counts the unit ""`},
	} {
		got, err := p.Costs(limitspec.Request{Policy: p, Cost: c.cost, Costs: c.costs}, nil)
		switch {
		case c.err != "" && (!errors.Is(err, limitspec.ErrBadInput) || err.Error() != c.err):
			t.Errorf("%s: %v; want ErrBadInput %q", c.name, err, c.err)
		case c.err == "" && (err != nil || !slices.Equal(got, c.want)):
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
