// Package conformance replays time-stamped vectors against every
// implementation of the algorithms and reports the first step where any
// target departs from the vector or from another target.
//
// Targets: the generated Go (goimpl), the generated Lua run in gopher-lua
// over an in-process store of this package's own (gopherlua), the same Lua
// in miniredis through go-redis (miniredis), a real Redis server by URL
// (redis), and a real Redis Cluster (cluster). After each step on a target with a Redis keyspace, the runner
// checks that every key carries a TTL, and after a refused step that the
// keys did not change.
package conformance
