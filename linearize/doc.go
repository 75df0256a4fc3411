// Package linearize checks that concurrent histories of a holding policy
// (docs/semantics.md, "Holds") are linearizable with respect to the
// oracle, the reference model of internal/oracle, with porcupine
// (github.com/anishathalye/porcupine). It is a module of its own
// (github.com/limitspec/limitspec/linearize), so that limitspec's go.mod
// does not require porcupine; being under limitspec's path, it may import
// limitspec's internal packages.
//
// # What is checked
//
// A history is linearizable when every call can be given one instant
// between its invocation and its return such that the calls, run one by
// one in the order of those instants on the oracle's model, get exactly
// the outcomes that were recorded. So a limiter whose history is
// linearizable behaves as the oracle does, each call atomic, whatever the
// concurrency, the batching, the lost replies and the retries: no
// admission the oracle would deny, no count or hold lost or made twice,
// no call that takes effect before it is made or after it has returned.
// An outcome is compared whole (Output.Equal): its class (a result,
// NOHOLD or BADINPUT) and, for a result, whether it was admitted, its
// binding limit, and each limit's admission, remaining, retry_after and
// reset_after, in ms.
//
// # How a history is recorded
//
// A Recorder wraps a Limiter (limitspec.Limiter and limitspec.Holder:
// redislimit's, goimpl's, ...) and a Spec, the holding policy by its
// limits' algorithms and parameters, every limit counting one identity.
// Clients (goroutines) call Recorder.Do with an Input: the operation
// (decide, reserve, commit, release, renew), the identity's value, the
// hold's id, the cost and the hold's length. Do gives the call an explicit
// Now from a logical clock the clients share, which moves forward by one
// ms at every invocation, so that a call that returns before another is
// invoked has the earlier time (the oracle decides each call at its Now,
// as the limiter does); it runs the call under a deadline and records its
// Input, its Output (Outcome: the class of its error, or its result), and
// the monotonic times of its invocation and return. Workload.Run drives
// many clients with random calls: decisions, reserves of new and reused
// ids, commits and releases (some sent twice, some of ids never held) and
// renews.
//
// A limiter may send a call more than once: redislimit sends an operation
// on a hold again after a lost reply, and returns the last attempt's
// reply. Sends, a go-redis hook added to the client the limiter is given,
// counts the attempts of each call that may have run (by now_ms, which
// names the call), and those of them that timed out, so that each attempt
// whose reply was not the one returned is in the history too.
//
// # Operations whose outcome is unknown
//
// A call that failed with limitspec.ErrOutcomeUnknown, or its context's
// deadline, may or may not have been applied; so may every attempt of a
// call whose reply was lost before the limiter sent it again. Operations
// makes each such attempt an operation of its own (a lost attempt), whose
// output is Unknown, invoked with its call. Model, the porcupine model, is
// nondeterministic: from a state, an Unknown operation leads both to that
// state (it did not take effect) and to the state after its input (it
// did), whatever the oracle answers. porcupine's
// NondeterministicModel.ToModel turns it into a deterministic model over
// sets of states (a power-set construction), which porcupine's search
// handles as any model. The two branches cover "applied once" and "never
// applied", all an attempt sent once can do; an attempt sent again is
// another operation, so that k attempts may each take effect once; the
// calls whose outcome is known are still compared whole.
//
// When may a lost attempt take effect? After its call was invoked, and:
//
//   - when its reply was lost to a broken connection (EOF, reset: the
//     proxy of the tests, internal/faultproxy, reads the reply of the
//     command it cuts after before it cuts, and forwards nothing after),
//     before the break was seen, so before its call returned: its
//     operation returns with the call;
//   - when it timed out (a deadline: a slow server, or one frozen with
//     SIGSTOP that runs what it had received once resumed, after the
//     caller gave up), at any later time: its operation returns after
//     every other call, so that porcupine may place it anywhere after its
//     invocation.
//
// Without Sends (a nil Attempts) every lost attempt is taken to have
// timed out, which is sound whatever the fault, and slower to check. A
// call the limiter says was not applied (limitspec.ErrUnavailable without
// ErrOutcomeUnknown) is believed when Sends counted no attempt of it that
// may have run.
//
// # The oracle's states
//
// The oracle's models are mutable and cannot be copied. A state of Model
// is a node of a graph whose edges are inputs: its model is made again, when
// needed, by replaying the inputs of the path that first reached it on a
// fresh model (or from the nearest state on that path whose model is
// kept), and each input's outcome from a state is computed once. States
// are interned by a fingerprint of all the oracle's data (read by
// reflection), so that calls that commute meet in one state; when that
// data holds something that cannot be fingerprinted (a func), states are
// told apart by the sequence of inputs instead, which is correct and
// slower. A history is partitioned by the identity's value, each
// partition one key's history, checked apart (in parallel). Only model.go
// calls the oracle: it is the adapter to change when the oracle's API
// does.
//
// # Running it
//
//	cd linearize && go test ./...
//
// The tests start their own redis-server (internal/redistest; it must be
// on PATH) and run 32 clients over 8 tenants, about 300 calls each, on one
// server behind a proxy that cuts the connection after every 25th
// EVALSHA's reply (TestLinearizableRedis), and on a 3-master Cluster one of
// whose masters is frozen for 500 ms (TestLinearizableCluster); the same
// traffic on package goimpl's in-process limiter (TestLinearizableGoimpl);
// one client calling one call at a time, so that any outcome other than
// the oracle's fails (TestSequentialRedis); hand-made histories, legal and
// not (TestCheckerVerdicts), how calls become operations
// (TestOperations), and the history of a limiter that is the oracle
// itself, losing replies (TestCheckerAcceptsTheOracle). A history that
// is not linearizable fails its test with porcupine's visualization
// written to the test's artifact directory (its path in the message;
// go test -artifacts keeps it) and an explanation: where the longest
// linearization of each failing tenant stops, the calls that could not
// come next, and what the oracle answers them. The seed of the traffic is
// logged; each test checks its history within a minute (a second or
// two when it is linearizable).
//
// To check a limiter of your own:
//
//	rec, err := linearize.NewRecorder(lim, spec, startMs, 200*time.Millisecond)
//	workload.Run(ctx, rec) // or call rec.Do from your own clients
//	ops := linearize.Operations(rec.Calls(), sends) // sends: a *Sends, or nil
//	res, err := linearize.Check(spec, ops, 20*time.Second, dir)
package linearize
