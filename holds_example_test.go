package limitspec_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
)

// llmPolicy is the README's LLM gateway: per API key, 8 calls in
// flight, 600 calls and 100,000 tokens a minute, in one holding policy
// whose limits count their own units.
func llmPolicy() (*limitspec.Policy, error) {
	llm, err := limitspec.NewPolicy("llm",
		limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: 8}, Identity: "key", Unit: "slots"},
		limitspec.PolicyLimit{Name: "requests", Limit: limitspec.FixedWindow{Limit: 600, Window: time.Minute}, Identity: "key"},
		limitspec.PolicyLimit{Name: "tokens", Limit: limitspec.TokenBucket{Capacity: 100_000, RefillTokens: 100_000, Refill: time.Minute}, Identity: "key", Unit: "tokens"},
	)
	if err != nil {
		return nil, err
	}
	return llm.WithHolds(), nil
}

// llmCall is the README's reserve and commit: an LLM call reserves a
// slot, a request and its max tokens, calls the model, and commits the
// request and the tokens it used (the slot freed).
func llmCall(ctx context.Context, lim limitspec.Holder, llm *limitspec.Policy, apiKey, callID string, maxTokens int64, call func() int64) (limitspec.Result, error) {
	req := limitspec.Request{Policy: llm, IDs: map[string]string{"key": apiKey}, Cost: 1, Costs: map[string]int64{"tokens": maxTokens}}
	res, err := lim.Hold(ctx, req, limitspec.Hold{Op: limitspec.Reserve, ID: callID, For: 2 * time.Minute})
	if err != nil || !res.Allowed {
		return res, err // denied: res.RetryAfter says when enough is free
	}
	req.Costs = map[string]int64{"tokens": call()} // the tokens the call used
	return lim.Hold(ctx, req, limitspec.Hold{Op: limitspec.Commit, ID: callID})
}

// ExampleHolder reserves 60,000 tokens for each of two LLM calls of
// 100,000 tokens a minute, which use 20,000 and 30,000: a third call
// may then reserve 45,000 (50,000 were spent, the rest given back), but
// not 90,000. The requests limit counts each call committed, once.
func ExampleHolder() {
	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer lim.Close()
	llm, err := llmPolicy()
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for i, c := range []struct{ max, used int64 }{{60_000, 20_000}, {60_000, 30_000}, {90_000, 0}, {45_000, 40_000}} {
		res, err := llmCall(ctx, lim, llm, "key-1", fmt.Sprint("call-", i), c.max, func() int64 { return c.used })
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(c.max, res.Allowed, res.Limits[1].Remaining)
	}
	// Output:
	// 60000 true 599
	// 60000 true 598
	// 90000 false 598
	// 45000 true 597
}
