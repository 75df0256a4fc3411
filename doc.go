// Package limitspec states every Redis rate-limiting algorithm once, in
// spec/algorithms.yaml, and compiles it into Lua scripts for Redis (package
// lua) and native Go limiters (package goimpl); package conformance proves
// that every target decides the same. See README.md.
//
// This package holds what a Go service's limiters share: the Limiter
// interface, its Request and Result, the error classes, and Local and
// LocalPolicy, which make a goimpl limiter a Limiter. Package redisimpl
// decides on Redis, package fallback decides locally while Redis is
// unavailable, and package httplimit puts any Limiter in front of an HTTP
// handler.
package limitspec

//go:generate go run ./cmd/gen
