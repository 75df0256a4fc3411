// Package limitspec states every Redis rate-limiting algorithm once, in
// spec/algorithms.yaml, and compiles it into Lua scripts for Redis (package
// lua) and native Go limiters (package goimpl); package conformance proves
// that every target decides the same. See README.md.
package limitspec

//go:generate go run ./cmd/gen
