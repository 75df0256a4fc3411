// Package httplimit is net/http middleware over any limitspec.Limiter:
// a goimpl limiter in process (limitspec.Local, limitspec.LocalPolicy), a
// Redis limiter of package redisimpl, or package fallback's pair of them.
//
//	l, _ := goimpl.NewGCRA(goimpl.GCRAParams{Burst: 10, Rate: 5, PeriodMs: 1000})
//	m, _ := httplimit.New(limitspec.Local("per-ip", l), httplimit.Options{})
//	http.ListenAndServe(addr, m.Handler(mux))
//
// # Keys
//
// Each request becomes a limitspec.Request: Options.Key gives its Key
// (RemoteIP by default), Options.IDs a policy's identities by name,
// Options.Cost its cost (1 by default). The KeyFuncs:
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
//   - Join(f, g, ...): several values in one key; or any func.
//
// For a policy such as ip_user:
//
//	httplimit.Options{IDs: map[string]httplimit.KeyFunc{
//		"ip":   httplimit.RemoteIP,
//		"user": httplimit.Header("X-User"),
//	}}
//
// # Header fields
//
// Every decided response, allowed or denied, carries the fields of
// draft-ietf-httpapi-ratelimit-headers-11, one list item per quota of
// Result.Limits, in order (a policy's limits, or the algorithm's one),
// named by Quota.Name or Options.QuotaName as a Structured Field String
// ('"' and '\' escaped, bytes outside printable ASCII sent as '?'):
//
//	RateLimit-Policy: "ip_second";q=10;w=1, "ip_minute";q=120;w=60
//	RateLimit: "ip_second";r=9;t=1, "ip_minute";r=119;t=42
//
// q is the quota's Limit; w its Window in whole seconds, rounded up (a
// 1500 ms window is w=2), left out when the quota has no single window
// (Window 0); r is its Remaining; t the seconds until it is whole again
// (ResetAfter), rounded up. For the windows (fixed_window,
// sliding_window, ...) t is the end of the window; for the buckets
// (token_bucket, gcra, leaky_bucket) it is the time to refill completely,
// while some capacity returns sooner: a denied request's Retry-After may
// then be shorter than t. Integers above 999999999999999, the largest a
// Structured Field holds, are sent as it. A result without limits (a
// fallback's fail open or fail closed) gets no RateLimit fields.
//
// With Options.LegacyHeaders, X-RateLimit-Limit, X-RateLimit-Remaining
// and X-RateLimit-Reset describe the binding limit (Result itself);
// X-RateLimit-Reset is a delta, seconds from now rounded up, not the
// epoch time some services send.
//
// # Responses
//
// An allowed request is served by the wrapped handler. The others are
// answered with an application/problem+json body (RFC 9457: type, title,
// status, detail):
//
//   - Denied: 429, of type
//     https://iana.org/assignments/http-problem-types#quota-exceeded
//     (the draft's), with violated-policies naming the quotas that
//     denied, and Retry-After: Result.RetryAfter in whole seconds,
//     rounded up (a retry after 1001 ms is 2), so that a client that
//     obeys it is never early. A request whose cost exceeds the limit
//     can never be admitted (goimpl.Never): it gets a 429 without
//     Retry-After and a detail that says so.
//   - Denied by a fallback failing closed (Side FailClosed): 503, of type
//     ...#temporary-reduced-capacity.
//   - A KeyFunc or Cost error: the *Error's Status (such as Header's 400
//     "missing header X-Api-Key"); any other error, 500.
//   - A limiter error matching limitspec.ErrBadInput (a key or cost the
//     limiter refuses: an empty key, a negative cost): 400, with the
//     limiter's message.
//   - Any other limiter error (ErrUnavailable, ErrBadState, the request's
//     context ended): 503, or, with Options.FailOpen, the handler runs
//     without RateLimit fields.
//
// The limiter gets the request's context: its deadline and cancellation
// bound the decision.
//
// # Dry run
//
// With Options.DryRun the middleware decides and sends the RateLimit
// fields as usual, but never answers on its own: denied requests, key
// errors and limiter errors all reach the handler, and no Retry-After is
// sent. Options.OnDecision, called for every request, reports what would
// have been denied (Allowed false and a nil error); it also serves logs
// and metrics outside dry runs.
package httplimit
