package main

// usage is -h's text; the flags follow it. TestUsageNamesEveryField
// keeps its list of fields in step with the vector types and
// docs/vectors.md.
const usage = `usage: go run ./cmd/verify [-vectors DIR] [-run REGEXP] [-spec FILE [-package NAME]] [-redis URL] [-cluster ADDRS] [-functions] [-v | -json]
       go run ./cmd/verify -exec CMD [-exec-timeout D] [-vectors DIR] [-run REGEXP] [-v | -json]

Replays every vector (*.json, searched recursively) in DIR, or those whose
name matches -run, against every target and checks each step against the
vector's expectations and against the other targets:

  goimpl     package goimpl's limiter (the generated Go), given the typed
             limit or the policy the vector names
  goimpl-bound
             the same limiter through the handles its Bind and BindPolicy
             return, each limit and policy bound once
  gopherlua  the generated Lua in gopher-lua, over an in-process store
  miniredis  the generated Lua in miniredis, through go-redis
  redis      the generated Lua on a real Redis (only with -redis or REDIS_URL)
  cluster    the generated Lua on a Redis Cluster (only with -cluster)
  redis-functions, cluster-functions
             the same through the Redis Functions library, lua/library.lua
             (FCALL limitspec_<script>; only with -functions)

  exec:NAME  with -exec, in place of the embedded targets: the program
             CMD, run by sh -c, an adapter of another implementation
             speaking the line protocol of docs/protocol.md (NAME is
             the name it gives). It is held to the vectors only, on the
             result fields it says it reports, and is compared with no
             other target. Vectors of the algorithms it does not
             implement, of policies and with a view are SKIPped;
             wrong_type steps are not run (as on goimpl). A first line
             (on stderr with -json) names what it implements and the
             fields not compared. An adapter that takes longer than
             -exec-timeout to reply, or exits, FAILs its vector and every
             later one; it is stopped (with what it started) when verify
             ends.

The algorithms are the catalogue's (spec/algorithms.yaml). The vectors of
a user's spec (algorithm "library.name") run with -spec FILE: verify
compiles the spec in memory, as cmd/gen -spec FILE -package NAME would,
and runs its scripts on gopherlua, miniredis and every Redis given; the
targets of a Go limiter (goimpl, goimpl-bound, and redislimit's on a
Redis) SKIP those vectors, since the spec's typed limits exist only in
the package cmd/gen writes, whose own test (vectors_gen_test.go) runs
them through package conformance on every target. Vectors naming an
algorithm of no spec given are refused before any runs.

OUTPUT

A table: a row per algorithm and per policy (the vectors that decide by
it), a column per target that ran; each cell counts the vectors the
target passed of those it ran ("52/52", "51/52 FAIL") and those it
skipped ("20 skipped": a policy over several identities on a cluster).
Then the first failures, each with the step where the target first
departed and a diff, and a last line "N passed, M failed, K skipped over
V vectors and T targets" (N, M and K count vector x target pairs). -v
prints a line per vector and target instead of the table and the first
failures (PASS, FAIL with the diff and the vector's comment, or SKIP
with the reason), then the same last line.

-json prints one JSON object instead:
  targets    the targets' names, in the order they ran
  vectors    one object per vector, in the order read (sorted by path):
             name, file, algorithm or policy (the policy's name), and
             results: one per target, each {target, status ("pass",
             "fail" or "skip"), steps (the steps it ran), failure (the
             first divergence and its diff, when failed), skipped (why,
             when skipped)}
  summary    {passed, failed, skipped, vectors, targets}

verify exits 1 if anything failed, no vector was found or matched, a
vector could not be read or a target could not be opened; 2 on a usage
error.

VECTORS (docs/vectors.md; the schema is docs/vector.schema.json)

A vector is a JSON object:
  name       required; names it in every report ("<directory>/<file>")
  algorithm  the algorithm as policyfile.NewLimit names it ("gcra"), or
  policy     a policy, as a policy file writes it: {name, limits: [{name,
             algorithm, identity or constant, params, unit}, ...]}, unit
             naming what a limit counts when not the step's cost; with
             "holds": true, a holding policy, whose steps run op
  params     with algorithm: its parameters, JSON numbers passed on as
             written (a refused one, such as 1.5, is refused input)
  comment    free text: the derivation of the expected values
  steps      required, at least one; replayed in order
Other top-level fields are ignored; an unknown field of a policy, a step
or an expectation is an error.

A step is a JSON object:
  t_ms        the request's time, ms since the epoch
  key         an algorithm's key; or
  ids         a policy's identity values by name ({"user": "alice"})
  cost        1 when absent; 0 is a peek
  costs       a policy's amounts by unit ({"tokens": 400}): a limit whose
              unit is given counts that amount, the others cost
  meta        meta_window's string input
  inputs      the string inputs by name, for an algorithm taking others
  params      an algorithm's parameters from this step on
  force       true: the forced call, charged even when denied
  reset       true: delete the key's state instead of deciding
  view        run a read-only view ("entries") instead of deciding
  op          a holding policy's operation: reserve, commit, release or
              renew; a decision when absent (any other op, decide
              included, and an op on any other vector, are refused when
              the vector is read, as are force and id on a holding
              policy's step)
  hold        its hold's id (1 to 128 bytes)
  hold_ms     how long a reserve or renew holds (1 to 86400000)
  wrong_type  first store another Redis type at the step's keys: true for
              all, or a list of 1-based places in KEYS; the step must
              expect an error, and only targets with a keyspace run it
  expect      what the outcome must be: any subset of

An expectation (expect) holds any subset of:
  allowed, limit, remaining, retry_after_ms, reset_after_ms, delay_ms
              the decision's fields
  tier        a tiered limit's binding tier, from 1 (0 elsewhere)
  index       a policy's binding limit, from 1
  limits      a policy's: each limit's own result, every limit, in order
  entries     a view's entries, each an array of numbers and strings
  error       the class of the error the step must end in: "BADINPUT",
              "WRONGTYPE", "BADSTATE" or "NOHOLD" (docs/semantics.md,
              "Errors");
              false: the step ends in no error (a reset that succeeds).
              true (deprecated: name the class) passes with any class
Fields left out are not compared with the vector; the targets are still
compared with each other on every field, an error's class included.

On every target but goimpl and goimpl-bound, verify checks after each
step that every key has a TTL, no longer than the longest its limit may
need (its horizon plus MAX_SKEW_MS plus the margin), and that a refused
step changed no key.
On a real Redis or Cluster it writes only keys whose hash tag starts with
a random prefix of its own ("{limitspec-verify:<random>:..."), and
deletes them all when done; it never flushes a database. With -functions
it loads the library on each master that lacks it and deletes it from
those when done; a master that holds another version of it is an error,
never replaced.

Flags:
`
