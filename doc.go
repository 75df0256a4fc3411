// Package limitspec is the contract of limitspec's rate limiters: what a
// Go service imports to limit its traffic, and nothing else.
//
// A request is decided by a Limit, a typed value of one algorithm's
// parameters (GCRA{Burst: 20, Rate: 10, Period: time.Second},
// FixedWindow{Limit: 100, Window: time.Minute}, ...), or by a Policy,
// several limits decided all or nothing. A Limiter decides any of them
// per call:
//
//	res, err := limiter.Limit(ctx, limitspec.Request{Key: user, Limit: plan.Limit, Cost: 1})
//
// The limiters live in their own packages, each implementing Limiter:
// package goimpl decides in process memory, package redislimit on Redis
// (so that every process sharing the Redis shares the limit), package
// fallback decides with a Redis limiter and, while Redis is unavailable,
// with an in-process one, package lease decides from quota taken from
// one ahead of use, package denials answers its certain denials without
// a round trip; package httplimit puts any of them in front of
// an HTTP handler. All decide exactly alike, as spec/algorithms.yaml
// states each algorithm once and a compiler (cmd/gen) writes the Go and
// the Lua of each; docs/semantics.md is the contract of every decision.
//
// This package imports the standard library alone: the typed limits are
// generated code, and a user's own spec compiles (cmd/gen -spec) into a
// package whose limits the same limiters take. Package policyfile reads
// limits and policies from configuration (an algorithm by its name, a
// policy from YAML or JSON).
package limitspec

//go:generate go run ./cmd/gen
