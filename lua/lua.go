// Package lua holds the Lua scripts of the catalogue (spec/algorithms.yaml),
// for Redis, and registers them (kit.RegisterScripts, kit.RegisterLibrary)
// for package redislimit, which imports it. The scripts themselves are
// the files beside it, for clients in any language: per algorithm its
// decision (<name>.lua, which with ARGV force 1 is the forced call), reset
// (<name>_reset.lua) and views; policy.lua and policy_reset.lua, which
// decide a policy of any of them; library.lua, all of them as the Redis
// Functions library limitspec; and manifest.json, the interface of each.
// Each script's header documents its KEYS, ARGV and reply.
package lua
