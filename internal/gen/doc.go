// Package gen compiles spec/algorithms.yaml into Lua scripts for Redis and
// native Go limiters. It is the compiler behind cmd/gen.
//
// # Pipeline
//
// Load parses the YAML (errors carry file:line), parses each algorithm's
// logic and views, resolves names and types, and runs Analyze; the result
// is a Spec, the IR every emitter reads. Generate turns a Spec into files,
// by path, without I/O: lua/<name>.lua, lua/<name>_<view>.lua for each
// view, lua/<name>_reset.lua (deletes a key's state), lua/<name>_force.lua
// (the decision with force true: it charges a denied request too),
// lua/library.lua (every script as a Redis Functions library),
// lua/manifest.json, lua/scripts_gen.go, goimpl/<name>_gen.go,
// goimpl/result_gen.go and redisimpl/limiters_gen.go (each algorithm's and
// policy's typed Redis constructor, and the decoding of a reply).
// Emitters are generic over the IR: nothing in this package names an
// algorithm.
//
// # Policies
//
// LoadPolicies (LoadDir reads spec/policies.yaml beside the algorithms)
// adds policies: each a list of limits, an algorithm with its parameters
// (fixed, or "call" for a per-call ARGV "limit.param") and the identity
// it counts (a name or a constant). A policy's script (lua/<policy>.lua)
// holds one Lua function per algorithm it uses, called for each limit with
// that limit's KEYS, ARGV and error prefix, and emitted by the same code as
// the algorithm's script with each write deferred: the function returns
// its reply and the writes that apply it,
// and the script runs the writes only once every limit has admitted. In
// Go every generated limiter gets decide (the decision under a caller's
// lock, storing only with commit) and goimpl's hand-written Policy runs
// the limits through it; goimpl/policies_gen.go lists the policies. The
// manifest lists each policy's limits, keys, ARGV and whether it is
// cluster safe (every limit counts one identity). Nothing here names a
// policy either.
//
// # The spec
//
// constants: NAME: integer. NOW_MAX and COST_MAX bound the per-call inputs
// now_ms and cost. reply: the fields every decision returns, in order,
// each int or bool; an int field may have a default. algorithms: a list,
// each with
//
//	name, doc
//	params:  name, min, max, default, doc  integer domains, checked per call;
//	                                       default makes the parameter optional
//	require: expr, doc                     joint constraints on parameters;
//	                                       doc is the error message
//	inputs:  name, type, max_len, doc      per-call strings (type: string)
//	state:   name, key, type, doc          key is "{key}" + a constant suffix,
//	                                       so every key of one call shares the
//	                                       hash tag and one cluster slot;
//	                                       type is hash, zset or list
//	  fields: name, min, max, default, doc  the fixed fields of a hash;
//	                                       expressions over parameters
//	  max_entries: EXPR                    with entry: the most entries kept
//	  entry:  name, min, max, doc          the fields of each entry of a
//	                                       collection; type: string for the
//	                                       last field of a list entry;
//	                                       running: FIELD (no domain) for a
//	                                       zset's running sum of FIELD
//	  merge: FIELD                         a zset whose entries of one score
//	                                       merge, adding up FIELD
//	clock:   STATE.FIELD                   the field holding the time of the
//	                                       last admission; required when the
//	                                       logic writes
//	window:  EXPR                          optional: the window in ms (below)
//	logic:   the decision, in the language below
//	views:   name, doc, logic              read-only scripts over the state
//
// # State
//
// A state is one Redis key. A hash holds fixed integer fields, read with
// HMGET. Entries live in a zset or a list: a hash holds no entries, since
// reading or dropping them would read them all.
//
// A zset holds entries in a sorted set: the member is every entry field
// in decimal, joined by ":", and the score is the first field; entries of
// one score sort by their second field, which is written zero-padded to
// the digits of its largest value (unless entries merge: then scores are
// unique). ZADD of a member already present adds no entry, so where two
// entries could be equal, give the entry a field that tells them apart,
// such as a sequence number. A zset is never read whole: its aggregates
// are computed by index (below), so a decision's work grows with the
// logarithm of the entries it holds, whatever they are.
//
// A zset entry may declare a running sum, running: FIELD: the generator
// writes into it, at each add, the sum of FIELD over the entries up to and
// including the new one, modulo the constant RUN_MOD (at most 2^52); the
// sum of FIELD over any span of entries is then the difference of two of
// them. FIELD's domain must not depend on the parameters (a clamp would
// make the sums drift), and max_entries times FIELD's largest value must
// be below RUN_MOD, for every parameter value, so that the differences
// are exact. A zset with a running sum or a merge grows at its end: an
// add whose score is below the newest entry's takes the newest's score
// (this happens only when parameters change between calls), and with
// merge: FIELD an add whose score is the newest's adds its FIELD to that
// entry instead (ZREM, then ZADD of the merged member).
//
// A list holds entries in arrival order, each its fields joined by ":",
// and is read whole with LRANGE, by views only. Its last field may be a
// string (the rest are integers); the string may itself contain ":", since
// an entry is split at its first colons only.
//
// A collection needs max_entries, an expression over parameters and
// constants that must be non-negative: an add to a zset then removes the
// oldest entries past max_entries (ZREMRANGEBYRANK), and a view reading a
// list keeps its last max_entries. Each integer field read is clamped
// into its declared domain, as fixed fields are; an entry that does not
// split into its fields, or a field that is not an integer, is BADSTATE.
// goimpl keeps the entries it wrote in memory, in the same order, and
// computes the same aggregates by binary search over them.
//
// # Clock, types, arguments: what every script checks
//
// An algorithm's clock (a fixed field of a hash, the time of the last
// admission) is compared with now after the state is read: when it is more
// than MAX_SKEW_MS (a constant the spec must define) ahead, the state is
// stale and reads as absent: every field its default, every collection
// empty. The first write of such a call, on every path, deletes every key
// of the algorithm (wipe in Lua; a zero state in Go) before writing, so
// the stale state is replaced, never merged. A view reads a stale state as
// absent too.
//
// Before any write, a decision script checks the type of every key it may
// write but does not read at the start (TYPE, refused as WRONGTYPE); the
// keys it reads at the start are checked by the reads themselves. So a
// refused call writes nothing, whichever key is at fault.
//
// Scripts count their arguments first: ARGV must hold now_ms, cost, every
// string input and every parameter up to the last required one, and no
// more than all of them. An empty now_ms reads the server's TIME. Errors
// quote at most 32 bytes of a refused value. A key beginning with "}" is
// refused, since its hash tag would be empty. The generated Go refuses the
// same key and a limiter not made by its constructor, and takes Now for
// the process clock. Scripts end without a newline, so that the shell's
// "$(cat lua/x.lua)" loads the bytes whose SHA1 the manifest lists.
//
// # The logic language
//
// Statements:
//
//	let NAME = EXPR                      immutable, block-scoped, must be used
//	if EXPR { ... } else { ... }
//	store STATE { FIELD = EXPR, ... } ttl EXPR
//	add C { FIELD = EXPR, ... } ttl EXPR insert an entry into a collection
//	drop C upto EXPR                     remove entries by their first field
//	clear C                              delete a collection's key
//	reply { FIELD = EXPR, ... }          last statement, outside any if
//
// Expressions are int or bool: integer literals, constants, parameters,
// now, cost, force (true in the forced call, which must consume the cost
// even when the logic denies; the fields' domains bound how far past the
// limit that may go), STATE.FIELD (the value stored when the call began, clamped
// into the field's domain; the default when the key is absent), unary - and
// !, + - * / % (floor division and modulo), comparisons (not chained),
// && ||, min(a, b), max(a, b), ceildiv(a, b), if C then A else B, and the
// aggregates below. A string input has type string: it can only be written
// into a string entry field. Comments run from # to the end of the line.
//
// A store writes every fixed field of a hash (HSET) and sets the key's
// TTL (PEXPIRE), in ms from now. Only store, add, drop and clear
// write; reads happen once, before the logic.
//
// add sets every field of one entry (but a running sum, which the
// generator computes), then the TTL of the key: in a zset ZADD key
// first-field member (see State), in a list RPUSH key member, each
// followed by PEXPIRE. Like store, add needs a
// ttl: an add or a store without one does not parse, and one whose ttl may
// be below 1 ms is rejected (PEXPIRE 0 deletes the key).
//
// drop C upto X removes the entries of a zset whose first field is at
// most X: ZREMRANGEBYSCORE key -inf X, whose work is the entries it
// removes. A drop must come before any add to the same collection, so
// that it removes only entries read when the call began. A list keeps
// arrival order, not order by a field: it cannot drop, only clear. clear C
// deletes the key with DEL.
//
// Names with __ are kept for the generated code's own locals (the
// aggregates' results, the raw replies): no let may take one.
//
// # Aggregates
//
// An aggregate reads a collection's entries as they were when the call
// began, in order (a zset by score, then by its second field; a list by
// arrival, the last max_entries of it). It binds a new name to each entry in turn,
// whose fields are read as e.FIELD, and keeps the entries for which the
// optional where condition holds:
//
//	sum(e in C where COND: V)            the sum of V over the entries, 0 if none
//	last(e in C where COND: V else D)    V of the last entry, or D if none
//	reach(e in C where COND: V >= N then R else D)
//	                                     R of the first entry at which the
//	                                     running sum of V reaches N (N is
//	                                     evaluated once), or D if none does
//
// D sees no entry. An aggregate may not contain another. No aggregate
// may follow, textually, even in another branch, the first statement that
// writes (store, add, drop, clear): every read comes before every write,
// so all targets read the state as it was when the call began, and a
// refusal (BADSTATE) has written nothing. Each aggregate is computed into
// a local just before the statement that holds it; one inside a branch of
// if C then A else B only when that branch is taken, since its value is
// not used otherwise.
//
// An aggregate over a zset is computed by index (index.go), never by a
// loop over its entries, and the parser refuses one that cannot be. Its
// where clause must compare the entry's score (its first field) with
// values that do not depend on the entry, joined by &&: two ZCOUNTs give
// the ranks [lo, hi) of the entries in range. Then sum of a literal k is
// k times hi - lo; last reads the entry at hi - 1 (ZRANGE key r r); sum of
// the field a running sum adds is the difference of the running sums at
// hi - 1 and before lo; reach of a literal reads the entry at the rank the
// count reaches N, and reach of that field finds its entry by a galloping
// search over the running sums (ranks lo, lo+1, lo+3, ..., then a binary
// search), O(log k) reads for an entry k ranks in. A decision over a zset
// of n entries thus runs O(log² n) Redis work, plus the entries a drop
// removes. An aggregate over a list is a loop, allowed in views only.
//
// # Inputs, optional parameters and reply defaults
//
// An algorithm may declare string inputs, with a max_len in [1, 65536]
// bytes. They follow now_ms and cost in ARGV, in the order declared, before
// the parameters; each must be passed (the empty string is a value), and
// a longer one is refused with BADINPUT (<name> must be at most N bytes).
// In Go the
// decision method takes them by name (AllowMeta for an input meta); Allow
// passes empty strings, and AllowInputs takes them in the order of Inputs
// (goimpl.InputLimiter).
//
// A parameter with a default (within its domain) is optional: the script
// uses the default when its ARGV is absent (so only trailing parameters
// can be left out; lua.Script.Defaults and the manifest give the values),
// and goimpl.New when it is left out of the map. The typed constructors
// take every parameter.
//
// A reply field with a default may be left out of an algorithm's reply,
// which then returns the default in that place.
//
// # Views
//
// A view is a read-only script over an algorithm's state: its logic is
// let statements ending with show C if COND (if COND may be left out). It
// may read now, the parameters, state fields and aggregates, but not cost
// or the string inputs. The view is its own script, lua/<algorithm>_<view>.lua,
// taking the algorithm's KEYS and ARGV now_ms then the parameters, and
// returning the entries of C as read (of a list, the last max_entries), in order,
// each an array of its fields, or an empty array when COND is false; it
// writes nothing. In Go, a view is a typed method named after it (the
// view entries is Entries(key, nowMs)), returning the collection's
// exported entry type, and View(name, key, nowMs) runs any view by name, implementing
// goimpl.Viewer.
//
// # Windows
//
// window: EXPR states an algorithm's window in ms: the time over which its
// limit (the reply field limit, the largest cost admitted at once) is
// counted, that is the time a fully used limit takes to be whole again;
// an HTTP RateLimit-Policy announces it as w. EXPR is an integer
// expression over parameters and constants only, parsed as a require's,
// so an unknown name, now, cost, a state field or a comparison is refused
// with its position. The analysis (bounds.go) must prove it at least 0 and,
// from the domains, the requirements and the runtime checks the logic
// needs already, at most 2^53-1 for every accepted parameter value: a
// window adds no runtime check of its own, so a spec whose window could
// pass is refused (a require bounds it). The IR keeps it in
// Algorithm.Window (nil when none). Every generated Go limiter gets
// WindowMs (goimpl.Windowed), printed by the saturating printer the
// requirements use, 0 when the algorithm declares none; goimpl.Policy's
// LimitWindowsMs lists its limits'. The manifest gives each decision
// script's window as expression text. The scripts do not compute it: it
// depends on the parameters alone.
//
// # Exactness
//
// Lua numbers are doubles, exact up to 2^53. The analysis in bounds.go
// gives every integer value symbolic bounds over the parameters and
// proves, from the declared domains and the requirements, that it stays
// within ±(2^53-1); where it cannot, it turns the bound into a runtime
// check on the parameters (Algorithm.Checks), which both targets evaluate
// before deciding and which refuse the parameters with BADINPUT. Operands
// of * / % ceildiv must be provably non-negative and divisors at least 1;
// for each division the dividend plus the divisor must also stay below
// 2^53, under which floor(a / b) computed in doubles is exact. The
// analysis does not follow branch conditions: write max(0, x) where a
// branch guarantees x >= 0.
//
// An entry field is bounded by its domain. A sum adds at most max_entries
// values, so it lies in [0, max_entries * the largest V], and V's lower
// bound must be provably non-negative; over a list, the product is checked
// like any other bound, statically or at run time. A zset may hold more
// entries than today's parameters allow (they may have been lowered), so
// its sums are bounded for every parameter value (Agg.Cap), and the
// generated code clamps them to that bound. reach keeps the same running
// sum, under the same rule; its value is bounded by R and D, and last's
// by V and D.
//
// # Extending
//
// A new algorithm is a spec entry. A new state type is a StateKind with
// its reads and writes in the parser, the analysis and each emitter. A new
// target language is one more emitter over the same Spec, added to
// Generate, with a conformance target to prove it.
package gen
