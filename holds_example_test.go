package limitspec_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
)

// llmCall is the README's reserve and commit: an LLM call reserves its
// max tokens, calls the model, and commits the tokens it used.
func llmCall(ctx context.Context, lim limitspec.Holder, apiKey, callID string, maxTokens int64, call func() int64) (limitspec.Result, error) {
	tokens, err := limitspec.NewPolicy("llm", limitspec.PolicyLimit{Name: "tokens",
		Limit: limitspec.TokenBucket{Capacity: 100_000, RefillTokens: 100_000, Refill: time.Minute}, Identity: "key"})
	if err != nil {
		return limitspec.Result{}, err
	}
	req := limitspec.Request{Policy: tokens.WithHolds(), IDs: map[string]string{"key": apiKey}, Cost: maxTokens}
	res, err := lim.Hold(ctx, req, limitspec.Hold{Op: limitspec.Reserve, ID: callID, For: 2 * time.Minute})
	if err != nil || !res.Allowed {
		return res, err // denied: res.RetryAfter says when enough is free
	}
	req.Cost = call() // the tokens the call used
	return lim.Hold(ctx, req, limitspec.Hold{Op: limitspec.Commit, ID: callID})
}

// ExampleHolder reserves 60,000 tokens for each of two LLM calls of
// 100,000 tokens a minute, which use 20,000 and 30,000: a third call
// may then reserve 45,000 (50,000 were spent, the rest given back), but
// not 90,000.
func ExampleHolder() {
	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer lim.Close()
	ctx := context.Background()
	for i, c := range []struct{ max, used int64 }{{60_000, 20_000}, {60_000, 30_000}, {90_000, 0}, {45_000, 40_000}} {
		res, err := llmCall(ctx, lim, "key-1", fmt.Sprint("call-", i), c.max, func() int64 { return c.used })
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(c.max, res.Allowed)
	}
	// Output:
	// 60000 true
	// 60000 true
	// 90000 false
	// 45000 true
}
