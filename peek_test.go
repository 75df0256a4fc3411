package limitspec_test

import (
	"testing"
	"time"

	"github.com/limitspec/limitspec"
)

// TestPeek: a request is a peek when every amount it asks of a limit is
// 0 (docs/semantics.md, "Units"): a Limit's Cost; a policy's limits'
// amounts, each its unit's in Costs, else Cost.
func TestPeek(t *testing.T) {
	fw := limitspec.FixedWindow{Limit: 10, Window: time.Minute}
	llm, err := limitspec.NewPolicy("llm",
		limitspec.PolicyLimit{Name: "requests", Identity: "user", Limit: fw},
		limitspec.PolicyLimit{Name: "tokens", Identity: "user", Unit: "tokens", Limit: fw})
	if err != nil {
		t.Fatal(err)
	}
	tokensOnly, err := limitspec.NewPolicy("tokens_only",
		limitspec.PolicyLimit{Name: "tokens", Identity: "user", Unit: "tokens", Limit: fw})
	if err != nil {
		t.Fatal(err)
	}
	tokens := func(n int64) map[string]int64 { return map[string]int64{"tokens": n} }
	for _, tc := range []struct {
		name string
		req  limitspec.Request
		want bool
	}{
		{"a limit, cost 0", limitspec.Request{Limit: fw}, true},
		{"a limit, cost 1", limitspec.Request{Limit: fw, Cost: 1}, false},
		{"a limit, Costs not 0 (refused by the limiters)", limitspec.Request{Limit: fw, Costs: tokens(1)}, false},
		{"a policy, cost 0", limitspec.Request{Policy: llm}, true},
		{"a policy, cost 0, tokens 0", limitspec.Request{Policy: llm, Costs: tokens(0)}, true},
		{"a policy, cost 0, tokens 5", limitspec.Request{Policy: llm, Costs: tokens(5)}, false},
		{"a policy, cost 1, tokens 0", limitspec.Request{Policy: llm, Cost: 1, Costs: tokens(0)}, false},
		{"every limit's unit given 0, cost 1", limitspec.Request{Policy: tokensOnly, Cost: 1, Costs: tokens(0)}, true},
		{"no unit given, cost 1", limitspec.Request{Policy: tokensOnly, Cost: 1}, false},
	} {
		if got := tc.req.Peek(); got != tc.want {
			t.Errorf("%s: Peek() = %v; want %v", tc.name, got, tc.want)
		}
	}
}
