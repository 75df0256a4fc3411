// Package gen compiles a spec of rate-limiting algorithms and policies
// into Lua scripts for Redis and into Go: the catalogue
// (spec/algorithms.yaml and spec/policies.yaml) into this module's
// packages, or a user's spec into one package of the user's module. It is
// the compiler behind cmd/gen.
//
// # Pipeline
//
// LoadCatalogue reads the catalogue: Load parses algorithms.yaml (errors
// carry file:line), parses each algorithm's logic and views, resolves
// names and types, and runs Analyze; LoadPolicies then adds the policies
// of policies.yaml. LoadUser reads a user's spec over the catalogue: its
// own constants, algorithms and policies, with the catalogue's constants,
// reply and algorithms in scope (Spec.Imported, compiled in the
// catalogue and not again), compiled into a library named after the
// user's package. The result is a Spec, the IR every emitter reads.
//
// Generate turns a Spec into files, by path, without I/O, laid out by an
// Output: CatalogueOutput, or PackageOutput for a user's package. Per
// algorithm it writes
//
//	lua/<name>.lua           the decision (emit_lua.go, emit_lua_zset.go),
//	                         and with ARGV force 1 the forced call, which
//	                         charges a denied request too (emit_lua_force.go),
//	                         with an optional request key after its state
//	                         keys (emit_lua_request.go)
//	lua/<name>_reset.lua     deletes a key's state (emit_lua_reset.go)
//	lua/<name>_<view>.lua    each view, read-only
//	<goimpl>/<name>_gen.go   the decision in Go, a kit.Table (emit_goimpl.go,
//	                         emit_go.go, emit_go_agg.go, emit_go_zset.go)
//
// and once per spec
//
//	lua/policy.lua           decides any policy over the algorithms in
//	                         scope (emit_lua_policy.go; see Policies)
//	lua/policy_reset.lua     deletes a policy's keys
//	lua/holds.lua            a holding policy's decisions and holds
//	                         (emit_lua_holds.go; see Policies)
//	lua/library.lua          every script above as one Redis Functions
//	                         library, named after the spec's library, the
//	                         helpers they share stated once
//	                         (emit_lua_library.go)
//	lua/manifest.json        the interface of every script, for clients in
//	                         any language (manifest.go)
//	<lua>/scripts_gen.go     embeds the scripts and registers them for
//	                         package redislimit (emit_lua_embed.go)
//	<limits>/limits_gen.go   the typed limits (emit_limits.go)
//	<names>/limits_gen.go    their registration by name, for package
//	                         policyfile (emit_limits.go, emitNames)
//	<limits>/policies_gen.go the spec's policies as ready-made values, when
//	                         it has any (emit_policies.go)
//
// and for the catalogue alone the runtime of generated code that a spec
// states: exact/exact_gen.go, package exact (the saturating arithmetic,
// the parameter checks, Pick and CeilDiv, stated once in emit_exact.go),
// which goimpl's decisions and a user's typed limits import; the root's
// exact_gen.go, an unexported copy of it, since package limitspec imports
// the standard library alone; and kit/reply_gen.go, kit.Reply and
// kit.ReplyFields from the spec's reply (emit_reply.go).
//
// No generated line is longer than 150 characters (wrap.go): a longer
// line of code breaks after a comma or an operator at its outermost
// level, into lines of about 100 with continuation indentation, a long
// string into two joined by .. or +, a comment between words; the
// manifest gives each doc as an array of its lines.
//
// For the catalogue, <limits> is the root package limitspec, <names>
// package policyfile, <goimpl> package goimpl and <lua> package lua, in
// lua/ beside the scripts. For a user's spec all four are the one package, whose directory holds lua/
// too, and the package also gets vectors_gen_test.go (emit_vectortest.go):
// a test that replays the vectors under its testdata/vectors with
// conformance.Test (docs/vectors.md). Generate refuses an algorithm or a
// view whose file would be another file's (an algorithm named policy or
// limits, a view named reset). Emitters are generic over the IR: nothing
// in this package names an algorithm (gcra is only among the initialisms
// a Go name writes in upper case).
//
// # The generated Go
//
// A typed limit is one Go type per algorithm (gcra: GCRA, fixed_window:
// FixedWindow: a few initialisms stay upper case, goInitialisms) with a field per parameter: an int64, or a time.Duration,
// a whole number of ms, for a parameter whose name ends in _ms or _ms_N
// (period_ms: Period, window_ms_2: Window2). It implements
// limitspec.Limit: Algorithm names its library and algorithm; Validate
// refuses what the scripts refuse, with their messages and in their
// order (each parameter's domain, the requirements, the runtime checks of
// Exactness below); QuotaWindow gives its window (Windows below). An
// init registers it with kit.RegisterLimit (in the user's package; the
// catalogue's in package policyfile, as the contract imports nothing of
// its module), so that policyfile.NewLimit and policyfile.Parse build it
// from parameters named and measured as the spec names and measures
// them.
//
// An algorithm's decision in Go is a kit.Table holding the state of every
// limit of the algorithm by key, in a kit.Store of locked shards, each
// key with its expiry on the caller's clock where Redis would keep a TTL.
// Prepare checks a call (the typed limit, the key, now_ms, cost, the
// string inputs, in the order the scripts check them; the Validate of
// the first few distinct limits only once, kit.Valid) and names its
// state: a kit.Key of the key and the parameters the state's Redis keys
// name, compared rather than formatted, so that two calls share a state
// exactly when their Redis keys are the same, hashed with its parameters
// mixed in line (kit.Mix); Decide decides it as the Lua script does,
// writing only when the call commits; Limit checks and decides a limit's
// call alone, with no kit.Call (goimpl's decision of a Request.Limit);
// Bind checks a limit once and returns a kit.Bound, which decides and
// prepares its calls checking only their key, time, cost and inputs
// (goimpl's Bound and BoundPolicy); View runs a view. The decision reads
// its state by the table's read (stale or expired state reads as absent),
// computes each aggregate by a method of the table (winSum, winReach:
// the collection and the aggregate, numbered when a collection has
// several of one kind; aggregates that differ only in values that read
// no entry share one, taking those values as arguments a1, a2, ...),
// which cuts a zset to its score range by sort.Search in place (a
// binary search the compiler inlines) and calls the helpers of package
// kit (Last, CountSum, CountReach, RunSum, RunReach compute the
// aggregate), under its guard (an if, or kit.When when that is short),
// and adds to or drops from a zset by the state's methods (addWin,
// dropWin), each run of writes under one c.Commit. A call's key, time,
// cost and inputs are checked by argsOK, small enough to be inlined, and
// refuseArgs words the refusal of those it refuses. Its init
// registers it with kit.RegisterTable, and package goimpl's Limiter makes
// one table per algorithm it is asked to decide. scripts_gen.go registers
// each algorithm's scripts with kit.RegisterScripts (their names, SHA1s,
// keys, string inputs, parameters with their defaults, and a function
// from a typed limit to the scripts' ARGV) and the spec's library with
// kit.RegisterLibrary (the Functions library, its version and the policy
// scripts); package redislimit calls the scripts through them.
//
// # Policies
//
// A policy is a list of limits decided all or nothing (docs/semantics.md,
// "Policies"): each an algorithm in scope with its parameters (integers,
// or "call" for one passed with each call) and the identity it counts (a
// name) or a constant. LoadPolicies reads them from a file of policies
// alone (spec/policies.yaml); a user's spec holds its own beside its
// algorithms. policies_gen.go makes each a function that returns a
// *limitspec.Policy (limitspec.NewPolicy over typed limits: ip_user is
// IPUserPolicy()), taking its per-call parameters as arguments
// (burst_quota's daily.limit: BurstQuotaPolicy(dailyLimit)). A policy is
// a value at run time, and limitspec.NewPolicy and policyfile.Parse make any
// other: nothing else is generated per policy.
//
// One script decides every policy over a library's algorithms,
// lua/policy.lua. It holds one Lua function per algorithm in scope (the
// catalogue's, and a user's spec's own), emitted by the same code as the
// algorithm's script with each write deferred: called for a limit with
// the limit's KEYS, ARGV, error prefix and key infix (:<limit>), the function checks
// the limit's parameters and keys, or decides and returns its reply and
// the writes that apply it. The script takes every limit's keys as KEYS
// and as ARGV now_ms, cost, force (0 or 1), then per limit its algorithm
// (as Algorithm.Qualified names it), its name :<policy>:<limit> (its
// keys carry :<limit>),
// the number n of its parameters and those n (trailing optional ones may
// be left out). It checks every limit before deciding any, decides every
// limit writing nothing, and runs the writes only once every limit has
// admitted (or the call is forced); its reply is the policy's result, the
// binding limit's index, then each limit's reply. lua/policy_reset.lua
// deletes a policy's keys: the same KEYS, ARGV the limits alone. In Go, a
// table's Decide guards every write with the call's Commit, as the
// script's function defers them; package goimpl decides a policy with
// every shard its limits touch locked, each limit first without Commit
// (a forced call commits at once), then, when all admit, again with it.
// The manifest describes the policy
// script (its ARGV, the algorithms it decides, its reset). Nothing here
// names a policy either.
//
// lua/holds.lua (emit_lua_holds.go) runs a holding policy's operations
// (docs/semantics.md, "Holds"): the same per-algorithm functions as the
// policy script, and around them the counting of each limit's holds, a
// hash {tag}:<limit>:hd after the limit's keys, written once for every
// algorithm: a decision admits when the algorithm admits its cost plus
// the holds, a reserve adds a hold, a commit ends one and charges the
// amount spent by the function's forced call, a release or renew ends
// or moves one, a reset deletes every key. An algorithm of the spec so
// holds with no code of its own; package goimpl counts holds in Go the
// same way (goimpl/holds.go), around the tables' Decide.
//
// # The spec
//
// constants: NAME: integer. NOW_MAX and COST_MAX bound the per-call inputs
// now_ms and cost. Every script declares the spec's constants as locals
// at its top (and MAX_SAFE, 2^53-1, the bound of the exactness checks)
// and reads them by name; the generated Go declares them as unexported
// constants of its packages, Go-cased (MAX_SKEW_MS: maxSkewMs, in
// limits_gen.go and, for the catalogue, goimpl/constants_gen.go), and
// reads them by name, but the decisions read NOW_MAX and COST_MAX as
// kit.NowMax and kit.CostMax. A let may not take a constant's Go name
// (max_skew_ms), which would hide it. reply: the fields every decision returns, in order,
// each int or bool; an int field may have a default. It is the one
// statement of the reply: kit.Reply and kit.ReplyFields are generated
// from it. Generate requires the catalogue's reply (allowed, limit,
// remaining, retry_after_ms, reset_after_ms, delay_ms, tier), by whose
// places the policy script combines results. algorithms: a list, each with
//
//	name, doc
//	params:  name, min, max, default, doc  integer domains, checked per call;
//	                                       default makes the parameter optional;
//	                                       a name ending in _ms or _ms_N is a
//	                                       duration in ms
//	require: expr, doc                     joint constraints on parameters;
//	                                       doc is the error message
//	inputs:  name, type, max_len, doc      per-call strings (type: string)
//	state:   name, key, type, doc          key is "{key}:" and a name, then
//	                                       more :pieces, each text or a
//	                                       {parameter}, so every key of one
//	                                       call shares the hash tag and one
//	                                       cluster slot; type is string, zset
//	                                       or list
//	  fields: name, min, max, default, doc  the fixed fields of a string;
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
//	                                       last admission (of a collection,
//	                                       its newest entry's); required when
//	                                       the logic writes
//	window:  EXPR                          optional: the window in ms (below)
//	logic:   the decision, in the language below
//	views:   name, doc, logic              read-only scripts over the state
//
// Every key of an algorithm names the same parameters, those its state is
// measured in ({key}:gc:{rate}:{period_ms}), so that two limits that
// differ in one of them never share state, while a limit whose amounts
// change between calls keeps its state (docs/semantics.md, "Keys"). After
// the hash tag, a policy's limit adds :<limit> and an algorithm of a
// user's spec :<library>, so that no two limits of a policy, and no two
// libraries, share a key: {alice}:gc:10:1000, {alice}:burst:gc:10:1000,
// {acme}:quota:dq:18000000. Limits of one name share their state across
// policies.
//
// policies (spec/policies.yaml, or a user's spec): a list, each with name,
// doc and limits, each limit with name, algorithm (any in scope: the
// catalogue's, and a user's spec's own), identity (a name whose value
// each call passes) or constant (one value for every caller), and params,
// each an integer or call; optional parameters may be left out.
//
// A user's spec holds constants of its own (none of the catalogue's
// again), algorithms (none named as the catalogue's) and policies; the
// catalogue's constants, reply and algorithms are in scope.
//
// # State
//
// A state is one Redis key. A string holds fixed integer fields, packed:
// each in decimal, joined by ":" in the order of the spec ("ts:tat"),
// read with one GET and written whole, with its TTL, by one SET ... PX.
// A string that does not hold them is BADSTATE. Entries live in a zset or
// a list: a string holds no entries, since reading or dropping them would
// read them all.
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
// entry instead (ZADD of the merged member, then ZREM of the old one; a
// drop before an add is written after it: a key never vanishes between
// two writes of one call, which a Cluster slot in migration refuses).
//
// A list holds entries in arrival order, each its fields joined by ":".
// A view reads it whole with LRANGE; a decision reads its newest entry
// alone with LINDEX -1, the one entry its aggregates (last with no where
// clause) may read. Its last field may be a
// string (the rest are integers); the string may itself contain ":", since
// an entry is split at its first colons only.
//
// A collection needs max_entries, an expression over parameters and
// constants that must be non-negative: an add to a zset then removes the
// oldest entries past max_entries (ZREMRANGEBYRANK), and a view reading a
// list keeps its last max_entries. Each integer field read is clamped
// into its declared domain, as fixed fields are; an entry that does not
// split into its fields, or a field that is not an integer, is BADSTATE.
// A goimpl table keeps each key's entries in a slice, in the same order,
// and computes the same aggregates by binary search over them.
//
// # Clock, types, arguments: what every script checks
//
// An algorithm's clock (a fixed field of a string, or an integer field of
// a collection's newest entry: a list's last, or the top of a zset whose
// adds continue its newest entry; the time of the last admission) is
// compared with now after the state is read: when it is more
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
// Scripts count their arguments first: ARGV must hold now_ms, cost, force
// (a decision's; exactly 0 or 1), every string input and every parameter up to the last required one, and no
// more than all of them. Each KEYS entry must be its state's key for the
// call's parameters: the hash tag, then the key's template with the
// parameters' values (and a policy's infix). An empty now_ms reads the
// server's TIME. Errors quote at most 32 bytes of a refused value. An
// empty key, or one beginning with "}", is refused, since its hash tag
// would be empty. A table's Prepare refuses the same keys, and names the
// state by the key and the parameters the scripts require in its name;
// in Go the time is the request's Now, or the limiter's clock when it has
// none. Scripts end without a newline, so that the shell's
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
// The generated Lua and Go carry them over (Commented): the whole-line
// comments above a statement and the one at the end of its last line (of
// an if, of its opening brace's line) become comment lines just above the
// code the statement lowers to, above the first of its lines; a
// window's comment goes above QuotaWindow's return, a constant's above
// its declaration.
//
// A store writes every fixed field of a string and the key's TTL, in ms
// from now, at once (SET key fields PX ttl). Only store, add, drop and clear
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
// removes. An aggregate over a list is a loop, in views; a decision may
// read only a list's newest entry (last with no where clause).
//
// # Inputs, optional parameters and reply defaults
//
// An algorithm may declare string inputs, with a max_len in [1, 65536]
// bytes. They follow now_ms, cost and force in ARGV, in the order declared, before
// the parameters; each must be passed (the empty string is a value), and
// a longer one is refused with BADINPUT (<name> must be at most N bytes).
// In Go a request passes them by name, in limitspec.Request.Inputs
// (missing ones are empty); a table takes them in the order declared
// (kit.Call.Inputs, named by kit.TableAlgorithm.Inputs, as
// kit.Scripts.Inputs names the scripts'). A policy passes none: each of
// its limits decides with empty strings.
//
// A parameter with a default (within its domain) is optional: the script
// uses the default when its ARGV is absent (so only trailing parameters
// can be left out; kit.Scripts.Params and the manifest give the values),
// the typed limit when its field is zero (a parameter whose domain holds
// 0 may only have the default 0), policyfile.NewLimit when it is left out
// of the map, and a policy file, a vector or spec/policies.yaml when it is
// left out of a limit's params.
//
// A reply field with a default may be left out of an algorithm's reply,
// which then returns the default in that place.
//
// # Views
//
// A view is a read-only script over an algorithm's state: its logic is
// let statements ending with show C { FIELD, ... } if COND (the fields
// returned of each entry, all of them in order when left out; if COND
// may be left out too). It
// may read now, the parameters, state fields and aggregates, but not cost
// or the string inputs. The view is its own script, lua/<algorithm>_<view>.lua,
// taking the algorithm's KEYS and ARGV now_ms then the parameters, and
// returning the entries of C as read (of a list, the last max_entries), in order,
// each an array of its fields, or an empty array when COND is false; it
// writes nothing. In Go, a view is a method of the algorithm's table (the
// view entries is viewEntries), returning the entries as kit.Records,
// each its fields in order (int64s, and a string where the entry holds
// one); the table's View runs any view by name, and so do the View
// methods of package goimpl's and package redislimit's limiters, for a
// request's key and limit.
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
// Algorithm.Window (nil when none). Every typed limit gets QuotaWindow
// (limitspec.Limit), a time.Duration printed by the saturating printer
// the requirements use, 0 when the algorithm declares none or the limit
// is not valid; limitspec.LimitResult.Window gives it for each limit of a
// decision, a policy's included. The manifest gives each decision
// script's window as expression text. The scripts do not compute it: it
// depends on the parameters alone.
//
// # Exactness
//
// Lua numbers are doubles, exact up to 2^53. The analysis in bounds.go
// gives every integer value symbolic bounds over the parameters and
// proves, from the declared domains and the requirements, that it stays
// within ±(2^53-1); where it cannot, it turns the bound into a runtime
// check on the parameters (Algorithm.Checks), which the scripts and the
// typed limit's Validate evaluate before deciding, refusing the
// parameters with BADINPUT. Operands
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
// Generate, with a conformance target to prove it: it prints the
// operators from a table of its own (op.go: a test fails while one is
// missing) and the aggregates as lower.go plans them.
package gen
