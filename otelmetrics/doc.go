// Package otelmetrics exports the counters of a fallback.Limiter
// (fallback.Stats) and of a lease.Limiter (lease.Stats) as OpenTelemetry
// metrics, so that an operator learns when the primary limiter, Redis,
// stops deciding. It is a module of its own
// (github.com/limitspec/limitspec/otelmetrics), as go-redis keeps its
// OpenTelemetry support in extra/redisotel, so that a program importing
// limitspec's limiters without it requires no OpenTelemetry module.
// Its instruments are observable: at each collection the SDK calls back,
// and the callback reads Limiter.Stats, a few atomic loads. Nothing is
// added to the path of a decision.
//
//	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
//	reg, err := otelmetrics.Observe(provider.Meter(otelmetrics.ScopeName), lim,
//		attribute.String("limiter", "api"))
//	...
//	defer reg.Unregister()
//
// Observe's attributes are added to every observation: give each Limiter
// observed on one meter its own (two Limiters observed with the same
// attributes would report the same series). Example wires the SDK to the
// Prometheus exporter, cmd/example serves its /metrics.
//
// # Metrics
//
// Their OpenTelemetry names, then the names the Prometheus exporter
// (go.opentelemetry.io/otel/exporters/prometheus) gives them by default:
// dots become underscores and counters get the suffix _total; the units,
// annotations in braces such as {decision}, add no suffix.
//
//   - limitspec.decisions, a counter (limitspec_decisions_total): the
//     decisions returned, by the attribute side: primary (the primary
//     decided), fallback (the local limiter did), fail-open or
//     fail-closed (admitted or denied without a decision). Every side is
//     reported, 0 included, so that a rate is defined from the start.
//   - limitspec.primary.errors, a counter (limitspec_primary_errors_total):
//     the primary's failures, by the attribute kind: slow (no reply within
//     the Timeout, or the connection broke after the request was sent:
//     the call may have been applied, Stats.PrimarySlow) or down (Redis
//     unreachable or refusing the call, which was not applied:
//     Stats.PrimaryDown).
//   - limitspec.errors, a counter (limitspec_errors_total): the calls of
//     Limit that returned an error instead of a decision (bad input, a
//     misconfigured Redis, the caller's context done, the local limiter's
//     errors).
//   - limitspec.breaker.opens, a counter (limitspec_breaker_opens_total):
//     the times the circuit breaker opened.
//   - limitspec.breaker.state, a gauge (limitspec_breaker_state): 0
//     closed (every call goes to the primary), 1 open (none does), 2
//     half-open (one probe does).
//   - limitspec.holds.settles, a counter (limitspec_holds_settles_total):
//     the calls owed to the primary and kept to send it again (the
//     commits and releases of holds that failed for want of it, the
//     releases of reserves and the decisions with request ids whose
//     outcome was unknown), by the attribute outcome:
//     replayed (the primary answered them once back) or lost (dropped,
//     their holds ending by themselves): Stats.SettlesReplayed and
//     SettlesLost.
//   - limitspec.holds.settles.owed, a gauge (limitspec_holds_settles_owed):
//     those kept now (Stats.SettlesOwed); above 0 while the primary is
//     away and holders end their holds.
//
// ObserveLease exports a lease.Limiter's counters (lease.Stats) the same
// way:
//
//   - limitspec.lease.requests, a counter (limitspec_lease_requests_total):
//     the leases asked of the primary, by the attribute outcome: granted
//     or denied (the key's requests then go to the primary one by one).
//   - limitspec.lease.cost, a counter (limitspec_lease_cost_total): the
//     cost of the leases, by the attribute use: leased (taken from the
//     primary), spent (by requests) and lapsed (ended unspent: counted by
//     the primary, admitted by nobody). leased − spent − lapsed is what
//     the process holds.
//   - limitspec.lease.direct, a counter (limitspec_lease_direct_total):
//     the requests sent to the primary as they are.
//
// With the exporter's defaults each series also carries the labels
// otel_scope_name, otel_scope_version and otel_scope_schema_url, unless
// the exporter is made WithoutScopeInfo, as in Example and cmd/example;
// the queries below need neither.
//
// # Alerts
//
// Every decision not made by the primary is a request limited by one
// process alone (fallback), or not limited at all (fail-open, fail-closed):
// alert on any, and on a breaker that stays open. As Prometheus rules:
//
//	groups:
//	  - name: limitspec
//	    rules:
//	      - alert: RateLimitWithoutRedis
//	        expr: sum by (job, limiter, side) (rate(limitspec_decisions_total{side!="primary"}[5m])) > 0
//	        annotations:
//	          summary: '{{ $labels.job }} decides {{ $labels.limiter }} without Redis ({{ $labels.side }})'
//	      - alert: RateLimitBreakerOpen
//	        expr: max by (job, instance, limiter) (limitspec_breaker_state) != 0
//	        for: 1m
//	        annotations:
//	          summary: '{{ $labels.instance }} has stopped calling Redis for {{ $labels.limiter }}'
//
// The first fires within a scrape or two of the first decision without
// Redis and ends five minutes after the last one; the second, after a
// minute of a breaker open or probing. rate(limitspec_primary_errors_total[5m])
// by kind tells a slow Redis (kind slow: raise the Timeout, or look at
// Redis's latency) from one down or refusing (kind down), and
// rate(limitspec_errors_total[5m]) > 0 the calls that got no decision at
// all.
package otelmetrics
