// Package rls is Envoy's rate limit service (RLS v3,
// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit) on
// limitspec: the service Envoy, Istio, Envoy Gateway and Envoy AI
// Gateway ask whether a request may pass, reading the configuration
// files of envoyproxy/ratelimit (package config) and deciding with any
// limitspec.Limiter: redislimit on a Redis, goimpl in process, or the
// fallback between them.
//
// # A request, one decision
//
// Envoy sends a domain and a list of descriptors, each a list of
// entries (key, value). Each descriptor gets the limit its entries lead
// to in the configuration (config.Config.Match) and counts against the
// counter its domain and entries name. Where the reference server counts
// every descriptor on its own (an INCRBY per descriptor), Service
// decides the descriptors that enforce a limit as one limitspec policy
// call: all or nothing. When any is over its limit, none is charged,
// so that a request a per-user limit refuses uses none of the per-route
// one. Options.Independent counts them one by one instead, as the
// reference does, for parity tests.
//
//   - A descriptor's cost is its hits_addend when set (0 checks without
//     charging), else the request's (0 counts as 1).
//   - A limit with shadow_mode or quota_mode never refuses the request:
//     it is decided after the enforcing ones, and charged only when they
//     admit.
//   - unlimited, replaces and requests_per_unit 0 mean what they mean to
//     the reference: never limited, not applied, always over.
//   - A descriptor that carries its own limit (Envoy's limit override)
//     is a fixed window of that limit, counted as the reference counts
//     it.
//
// Each descriptor's status carries the code, current_limit,
// limit_remaining and duration_until_reset; Options.Headers adds the
// IETF RateLimit fields (and Retry-After on a refusal), and
// Options.LegacyHeaders the X-RateLimit-* fields of the reference.
//
// # Keys
//
// A counter's state is kept as a policy limit's: the hash tag is the
// domain and the descriptor's entries, as the reference names its key
// without its prefix and window ("domain_key_value_"), and the limit's
// name a hash of the configuration path (its FullKey), so that reloading
// a configuration keeps every counter whose path and window stay.
package rls
