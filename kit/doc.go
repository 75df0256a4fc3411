// Package kit is the runtime of generated code: what the code cmd/gen
// writes, in this repository and in a user's package, calls and
// registers into. Its API follows the generator: it changes with it, it
// makes no promise to anyone else, and a service never imports it.
//
// It holds the helpers the generated decisions call (Field, JoinEntry,
// the aggregates Last, CountSum, RunSum, ...; the exact arithmetic is
// package exact's), the sharded store they keep their state in
// (Store, by Key: a name and the parameters a state is measured in, no
// key name built), the memory of the limits a table found valid (Valid),
// and the registries the generated code fills when its package is
// initialized: an algorithm's TableAlgorithm (its decision in Go, which
// package goimpl finds by LookupTable), its Scripts (which package
// redislimit finds by LookupScripts and calls with their ARGV: Decimal,
// ForceArg), its spec's Library (its Redis Functions library and the
// script that decides a policy over its algorithms), and the builder of
// its typed limit (RegisterLimit, for package policyfile). What the two
// limiters share beyond that is internal/limitcall's.
package kit
