// Package lease decides requests from quota taken ahead from a primary
// limiter, so that most decisions need no round trip and losing the
// primary can only under-admit. It knows only the contract, package
// limitspec.
//
//	remote, _ := redislimit.New(ctx, rdb, redislimit.Options{})
//	local, _ := goimpl.New(goimpl.Options{})
//	safe, _ := fallback.New(remote, local, fallback.Options{Mode: fallback.FailClosed})
//	lim, err := lease.New(safe, lease.Options{Size: 10})
//	...
//	res, err := lim.Limit(ctx, limitspec.Request{Key: user, Limit: plan, Cost: 1})
//
// # Leases
//
// A lease is a decision of the primary for Options.Size, asked for by
// the first request of a key that finds no lease left: when the primary
// admits it, that request is decided, and the units left (Size less its
// cost) decide the key's next requests in this process, without the
// primary, until they are spent or the lease ends. A lease ends For after
// it was asked for (DefaultFor, 1 s), or sooner when one of its limits is
// whole again sooner (the least ResetAfter of the lease's decision: a
// fixed window ends with its window). One call at a time takes a key's
// lease; the key's other requests wait for it.
//
// When the primary denies a lease, the request is sent to it as it is,
// and so are the key's requests for the denial's RetryAfter (For at
// most): near the limit, requests are decided one by one, exactly. A
// lease is one amount, Size, on every limit of the key, spent by
// requests whose Cost every limit counts. A request of a cost above
// Size, a forced request, a peek (cost 0), a request with Inputs, a
// request with amounts by unit (Costs: a policy's limits each counting
// their own, which one lease's units cannot stand for) and a request on
// a shaper (limitspec.Shaper: its wait depends on the work queued just
// before it) are always sent as they are, Costs included. So is every
// request when a lease fails (an error): each waiting request then tries
// the primary on its own.
//
// A request decided from a lease has the lease's Result, admitted: each
// limit's Remaining counts the units left in the lease (what this
// process can still admit, as of the lease), its ResetAfter is shortened
// by the time since the lease was asked for, and Side is the lease's.
//
// # What is admitted
//
// A lease is charged on the primary before any of it is spent, so every
// admission counts there, at the time its lease was asked for. Over any
// window of a limit of quota L, the requests admitted by n processes
// are at most
//
//	L + (the units the processes held unspent at the window's start), at most L + n·Size
//
// and exactly at most L for a limit whose leases end with its window: a
// fixed_window, whose leases are spent in the window that counted them.
// Units unspent when a lease of a limit or of a plain policy ends are
// not given back: the primary counts them, so the processes admit up to
// n·Size less than L in that window; Stats counts them (Lapsed). A lease
// of a holding policy (limitspec.Policy.WithHolds) is a hold instead:
// when it ends, what was spent of it is committed and the rest given
// back (Stats.Returned; Close does it at once for every lease held).
//
// Losing the primary: each process spends what its leases hold until
// they end, For at most, and then asks for leases that fail. Behind a
// fallback.Limiter in FailClosed mode (above), those are denied: the
// outage under-admits, by at most what the leases held; in Local mode,
// the local limiter grants leases, within the fallback's own bound.
//
// # Choosing Size and For
//
// Size trades round trips for precision: a key's requests reach the
// primary once per Size of cost, and up to n·Size of a window may be
// held unspent. A Size of a few percent of the quota divided among the
// processes keeps both small. For bounds how long a lease's units stay
// held, and how long an outage's admissions go on; keep it well under
// the limits' windows.
package lease
