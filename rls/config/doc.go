// Package config reads the YAML configuration files of Envoy's reference
// rate limit service (github.com/envoyproxy/ratelimit) as that service
// reads them, so that a team can point its Envoy gateways at our service
// with the files it already has, and finds the limit of a descriptor as
// that service finds it.
//
// # Files
//
// A file names one domain and lists its descriptors:
//
//	domain: api
//	descriptors:
//	  - key: remote_address           # every value of remote_address...
//	    rate_limit:                    # ...gets its own 100 per minute
//	      unit: minute
//	      requests_per_unit: 100
//	  - key: path
//	    value: /login                  # only this value of path
//	    rate_limit: {unit: second, requests_per_unit: 5}
//	    descriptors:                   # and under it, per user
//	      - key: user
//	        rate_limit: {unit: minute, requests_per_unit: 20}
//
// A descriptor has a key, an optional value, an optional rate_limit and
// nested descriptors, and the flags shadow_mode, quota_mode,
// detailed_metric, value_to_metric and share_threshold. A rate_limit has
// a unit (second, minute, hour, day, week, month of 30 days or year of
// 365 days, in any case) and requests_per_unit (0 to 4294967295; 0
// refuses every request), or unlimited: true and no unit; an optional
// name, and replaces: a list of {name: other} naming the limits it
// replaces. A value ending in '*' is a wildcard: it matches the values
// that begin with what comes before the '*'. share_threshold, allowed
// only on a wildcard, makes every value it matches share one counter.
//
// Load refuses what the reference refuses: a key it does not know, a key
// that is not a string, a list of something other than mappings, a file
// without a domain, a descriptor without a key, two descriptors with the
// same key and value at one level, an invalid unit, a unit beside
// unlimited: true, an empty or self-naming replaces entry,
// share_threshold on a value that is not a wildcard, and two files of
// one domain unless Options.MergeDomains; and, where the reference's
// YAML reader has other rules, a key set twice in one mapping and
// aliases that form a circle or expand the file past a budget. A
// scalar is read as the reference reads it: yes and on are true in a
// flag, and the text written in a string. A key the reference knows but
// ignores where it is written (shadow_mode inside rate_limit, say) is
// ignored here too. Every refusal is an *Error naming the file and the
// line of the offending node; Load is all or nothing.
//
// # Our extension
//
// A rate_limit may also name an algorithm of package
// github.com/limitspec/limitspec, with its parameters as its spec names
// and measures them (durations in ms), and mark the limit as one whose
// calls may reserve, commit and release (holds):
//
//	descriptors:
//	  - key: user
//	    rate_limit:
//	      algorithm: gcra                 # as policyfile.NewLimit takes it
//	      params: {burst: 20, rate: 10, period_ms: 1000}
//	      unit: second                    # optional: what the service
//	      requests_per_unit: 10           # reports as the current limit
//	      holds: true
//
// Without algorithm a limit is the reference's: a fixed window of
// requests_per_unit per unit (limitspec.FixedWindow). Every limit is
// built and validated when the file is loaded, so a file with an
// unknown algorithm or a missing or out-of-domain parameter is refused
// at the line that says it. With algorithm, unit and requests_per_unit
// are optional, but requests_per_unit needs a unit, unlimited: true is
// refused, and an algorithm that counts held requests (concurrency)
// needs holds: true; params without algorithm is refused. The reference
// does not know these keys: it refuses a file that uses them.
//
// # Over xDS
//
// LoadProto reads the RateLimitConfig resources an xDS management server
// (Envoy Gateway's) delivers, as Load reads files of the same domains
// and descriptors: the protocol carries the reference's fields only.
//
// # Matching
//
// Config.Match finds the limit of a descriptor, a list of entries
// (key, value), as the reference's GetLimit does for a descriptor that
// carries no limit of its own: level by level, an entry matches the
// descriptor with its key and value, else a wildcard of its key (the
// first, in file order, whose prefix its value has), else the descriptor
// with its key and no value; the limit applies only when it is found at
// the level of the descriptor's last entry. Match also returns the
// counter's name, Tag, as the reference names its cache key. A Config is
// immutable and safe for concurrent use; Match allocates nothing when no
// limit applies and only its Tag when one does (entries of ordinary
// length).
package config
