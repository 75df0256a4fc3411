// Package httplimit is net/http middleware over any limitspec.Limiter:
// package goimpl's in process, package redislimit's on Redis, or package
// fallback's pair of them (Redis, and in process while Redis is
// unavailable).
//
//	lim, _ := goimpl.New(goimpl.Options{})
//	m, err := httplimit.New(lim, httplimit.Options{
//		Limit: limitspec.GCRA{Burst: 10, Rate: 5, Period: time.Second},
//		Name:  "per-ip",
//	})
//	...
//	http.ListenAndServe(addr, m.Handler(mux))
//
// # Rules
//
// A limiter is not bound to a limit: the middleware names, for each
// request, the rule it is decided by, a Rule: a Limit (any typed limit:
// limitspec.GCRA, limitspec.FixedWindow, ..., or one of a package cmd/gen
// wrote), counting the request's Key, or a *limitspec.Policy, several
// limits decided all or nothing, counting the request's identities. A
// request's rule is, in this order:
//
//   - Options.Select's, a function of the request (a plan looked up by
//     API key, say), unless it gives the zero Rule;
//   - its route's, in Options.Routes, by the ServeMux pattern it matched
//     ("GET /items/{id}", exactly as registered). Routes need
//     Options.Mux, the ServeMux: a middleware around the whole mux
//     (m.Handler(mux)) runs before the mux routes, and asks Mux which
//     pattern it will route the request to; one inside the mux
//     (mux.Handle(pattern, m.Handler(h))) reads Request.Pattern;
//   - else Options' own: Limit (its quota named Name) or Policy.
//
// A request with no rule is served as it is, with no decision and no
// header fields. New refuses, with an error that names the mistake, what
// could not work: a nil limiter, no rule anywhere, a rule with both a
// Limit and a Policy, a Name on a policy's rule (a policy's quotas are
// named by its limits), a zero Policy (not made by limitspec.NewPolicy),
// a route with an empty rule, or with a pattern no ServeMux would
// register, Routes without Mux, a nil KeyFunc, a policy's identity
// without its KeyFunc in Options.IDs, a limit or a policy the limiter
// refuses (when it implements limitspec.Checker, as the goimpl, Redis and
// fallback limiters do: a policy over several identities on a Redis
// Cluster, an invalid limit, a limit of a package not linked in; else
// the limit's own Validate), and Fields with a name missing, malformed or
// of a field the middleware sets itself. A rule Select gives is checked
// the same way at each request; one that fails is the server's mistake,
// answered 500. The KeyFuncs of the helpers below, which return no error,
// refuse what they were given that could not work (Header(""), Join(),
// an invalid trusted prefix or one of length 0) at each request instead:
// 500, with the mistake in the error OnDecision sees.
//
// # Methods
//
// OPTIONS and HEAD requests are served as they are, with no decision, no
// header fields and no call of OnDecision, unless Options.DecideOptions
// and Options.DecideHead ask for them. A CORS preflight (OPTIONS) is the
// browser's request, not the client's: charging it would make each
// cross-origin call cost two. A HEAD is usually a monitor's or a cache's.
// The method comes first: Select and Routes never see such a request, so
// a route's rule or a plan applies to them only with DecideOptions or
// DecideHead. A ServeMux serves HEAD by a GET pattern's handler, which
// runs in full: where a HEAD costs what its GET does, set DecideHead, or
// a client could run the GET's work unlimited.
//
// Two limits of one algorithm whose state is measured in the same
// durations (two fixed windows of one minute, two GCRAs of one rate and
// period) share their state for one key, as one limit whose amounts
// change (docs/semantics.md, "Keys"). Rules that must count apart on the
// same key, such as the limits of two routes, need limits that differ in
// a duration, or keys that differ: Key: Join(RemoteIP, Route) counts each
// client on each route.
//
// # Keys
//
// Each request becomes a limitspec.Request: Options.Key gives the Key a
// Limit counts (RemoteIP by default), Options.IDs a policy's identity
// values by name, Options.Cost its cost (1 by default). The KeyFuncs:
//
//   - RemoteIP: the connection's address; for a server that clients reach
//     directly.
//   - XForwardedFor(trusted...) and Forwarded(trusted...): the client's
//     address behind proxies, from X-Forwarded-For or RFC 7239's
//     Forwarded. The header counts only when the connection comes from a
//     trusted proxy; its chain is walked from the right, past trusted
//     proxies, to the first address that is not one. A spoofed header
//     from anyone else is ignored.
//   - Header(name): a header's value, such as an API key.
//   - Route: the ServeMux pattern that matched, else method and path.
//     Around a whole mux, the pattern is known only with Options.Mux:
//     the KeyFuncs, Cost and Select then see, in Request.Pattern, the
//     pattern the mux will choose (but no path values).
//   - Join(f, g, ...): several values in one key; or any func.
//
// For a policy such as limitspec.IPUserPolicy(), whose limits count the
// identities "ip" and "user":
//
//	httplimit.Options{Policy: ipUser, IDs: map[string]httplimit.KeyFunc{
//		"ip":   httplimit.RemoteIP,
//		"user": httplimit.Header("X-User"),
//	}}
//
// # Header fields
//
// Every decided response, allowed or denied, carries the fields of
// draft-ietf-httpapi-ratelimit-headers-11, one list item per limit of
// Result.Limits, in order (a policy's limits, or the one limit), named
// as a Structured Field String ('"' and '\' escaped, bytes outside
// printable ASCII sent as '?'): by Options.QuotaName of the limit's name,
// which is the rule's Name, else the algorithm's ("gcra"), or for a
// policy the name of each of its limits:
//
//	RateLimit-Policy: "ip_second";q=10;w=1, "ip_minute";q=120;w=60
//	RateLimit: "ip_second";r=9;t=1, "ip_minute";r=119;t=42
//
// q is the limit's Quota; w its window (Limit.QuotaWindow) in whole
// seconds, rounded up (a 1500 ms window is w=2), left out when the limit
// has no single window; r is its Remaining; t the seconds until it is
// whole again (ResetAfter), rounded up. For the windows (fixed_window,
// sliding_window, ...) t is the end of the window; for the buckets
// (token_bucket, gcra, leaky_bucket) it is the time to refill
// completely, while some capacity returns sooner: a denied request's
// Retry-After may then be shorter than t. Integers above
// 999999999999999, the largest a Structured Field holds, are sent as it.
// A result without limits (a fallback's fail open or fail closed) gets no
// RateLimit fields. A process of package fallback deciding locally
// reports its own share of each limit (fallback.Options.Processes).
//
// Options.Fields renames the fields and their parameters, for another
// version of the draft (the zero Fields are Draft11's). With
// Options.LegacyHeaders, X-RateLimit-Limit, X-RateLimit-Remaining and
// X-RateLimit-Reset describe the binding limit (Result.Binding: when
// denied, the one with the longest wait; when allowed, the one with the
// least remaining relative to its quota); X-RateLimit-Reset is a delta,
// seconds from now rounded up, not the epoch time some services send.
//
// # Several middlewares on one route
//
// Middlewares nest: a global limit around the mux, a route's own limit
// inside it. Each appends its items to the RateLimit-Policy and
// RateLimit fields the outer ones set (give their limits different
// names), and with LegacyHeaders the X-RateLimit-* fields keep the
// binding limit that leaves the least remaining. The decisions are made
// one after the other: a request the inner middleware denies has used
// the outer one's quota. A Policy decides its limits all or nothing, in
// one call.
//
// # Responses
//
// An allowed request is served by the wrapped handler. The others are
// answered with an application/problem+json body (RFC 9457: type, title,
// status, detail):
//
//   - Denied: 429, of type
//     https://iana.org/assignments/http-problem-types#quota-exceeded
//     (the draft's), with violated-policies naming the limits that
//     denied, and Retry-After: Result.RetryAfter in whole seconds,
//     rounded up (a retry after 1001 ms is 2), so that a client that
//     obeys it is never early. A request whose cost exceeds the limit
//     can never be admitted (limitspec.Never): it gets a 429 without
//     Retry-After and a detail that says so.
//   - Denied by a fallback failing closed (Side FailClosed): 503, of type
//     ...#temporary-reduced-capacity, with Retry-After the time until
//     the fallback tries Redis again, rounded up.
//   - A KeyFunc, Cost or Select error: the *Error's Status (such as
//     Header's 400 "missing header X-Api-Key"; 500 for a Status that is
//     not a 4xx or 5xx); any other error, 500. A rule Select gives that
//     cannot be decided: 500.
//   - A limiter error matching limitspec.ErrBadInput (a key or cost the
//     limiter refuses: an empty key, a negative cost): 400, with the
//     limiter's message.
//   - A limiter error matching limitspec.ErrMisconfigured (a Redis
//     holding another version of a Functions library): 500, whatever
//     Options.FailOpen says: a mistake to fix, not an outage to ride out.
//   - Any other limiter error (ErrUnavailable, ErrBadState, the request's
//     context ended): 503, or, with Options.FailOpen, the handler runs
//     without RateLimit fields.
//
// The limiter gets the request's context: its deadline and cancellation
// bound the decision.
//
// The decision is made before the handler runs, and stands whatever the
// handler does (but for a holding policy's rule, above): a request whose
// handler fails, or panics, has used its quota. That is intended: the work was admitted, and refunding a panic
// would let a client that crashes the handler retry it for free.
//
// # Requests in flight, and costs known afterwards
//
// A rule of a holding policy (limitspec.Policy.WithHolds) holds the
// request's cost while it is served, instead of charging it before: the
// middleware reserves the cost (Options.Cost, 1 by default, and
// Options.Costs, the amounts by unit) before the handler runs, and when
// the handler returns, a panic and a client gone included, commits what
// the handler reported with ReportCost and ReportUnitCost (the tokens an
// LLM call used), or else what was reserved. One policy so limits an LLM
// gateway's whole job: a slot in flight, a request and its tokens. With a limit of
// limitspec.Concurrency in the policy, that is an in-flight limit: at
// most that many requests per identity are served at once, each holding
// a slot until its response ends, and a process that dies with a slot
// frees it when its hold ends (Options.HoldFor, a minute by default).
//
// Only holds count requests in flight: New refuses a concurrency limit
// (limitspec.InFlight) as a rule's Limit or in a policy without holds,
// which would admit every request. Middlewares may be stacked (requests
// per minute outside, tokens inside): when one inside denies or refuses
// the request, each holding middleware around it releases its hold
// rather than commit it, so that a request never served counts nothing.
//
// A reserve denied is a 429 as any denial. Its Retry-After is the
// limiter's wait, but for a limit in flight: that wait counts each hold
// until its end (HoldFor), the longest a holder may take, while a slot
// frees as soon as a handler returns, so it is capped at
// Options.InFlightRetryAfter (a second by default); a longer wait of
// another limit that denies too is sent as it is. The RateLimit fields
// are the reserve's, its hold counted whole. A RateLimit-Policy item
// names its limit's unit, qu: a concurrency limit's
// "concurrent-requests", unit bytes' "content-bytes", none for requests
// (the draft's default), any other unit by its name
// (qu="tokens"). The limiter must keep holds
// (limitspec.Holder: goimpl's, redislimit's, fallback's).
//
// # Dry run
//
// With Options.DryRun the middleware decides and sends the RateLimit
// fields as usual, but never answers on its own: denied requests, key
// errors and limiter errors all reach the handler, and no Retry-After is
// sent. Options.OnDecision, called for every request decided, reports
// what would have been denied (Allowed false and a nil error); it also
// serves logs and metrics outside dry runs.
package httplimit
