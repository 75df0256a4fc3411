package otelmetrics

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/lease"
)

// ScopeName is the instrumentation scope to get a Meter by:
// provider.Meter(otelmetrics.ScopeName).
const ScopeName = "github.com/limitspec/limitspec/otelmetrics"

// The attributes' keys that Observe sets itself, and refuses in attrs.
const (
	sideKey    = attribute.Key("side")    // of limitspec.decisions: primary, fallback, fail-open, fail-closed
	kindKey    = attribute.Key("kind")    // of limitspec.primary.errors: slow, down
	settledKey = attribute.Key("outcome") // of limitspec.holds.settles: replayed, lost
)

var sides = [...]limitspec.Side{limitspec.Primary, limitspec.Fallback, limitspec.FailOpen, limitspec.FailClosed}

// Observe registers on meter the instruments of the package
// documentation, observed from lim.Stats() at each collection, each
// observation carrying attrs (a name for lim, say) beside its own side
// or kind. It refuses a nil meter, a nil lim, and attrs with the key
// side or kind, with an error matching limitspec.ErrMisconfigured, as
// every constructor's refusal. Unregister the Registration to stop
// observing lim (it starts no goroutine: the meter's reader calls it);
// give each Limiter observed on one meter its own attrs.
func Observe(meter metric.Meter, lim *fallback.Limiter, attrs ...attribute.KeyValue) (metric.Registration, error) {
	if err := check("Observe", meter, lim == nil, attrs, sideKey, kindKey, settledKey); err != nil {
		return nil, err
	}
	o := &observer{lim: lim}
	if err := o.instruments(meter); err != nil {
		return nil, err
	}
	o.options(attrs)
	return registerCallback(meter, o.observe, o.decisions, o.primaryErrors, o.errors, o.opens, o.state, o.settles, o.owed)
}

// instruments makes the instruments of one observer on a meter,
// gathering their errors.
type instruments struct {
	meter metric.Meter
	errs  []error
}

// counter makes an observable counter with its name, unit and
// description.
func (in *instruments) counter(name, unit, description string) metric.Int64ObservableCounter {
	c, err := in.meter.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(description))
	in.errs = append(in.errs, err)
	return c
}

// err is the instruments' errors, nil when there are none.
func (in *instruments) err() error {
	if err := errors.Join(in.errs...); err != nil {
		return fmt.Errorf("otelmetrics: %w", err)
	}
	return nil
}

// registerCallback registers f on meter to observe instruments.
func registerCallback(meter metric.Meter, f metric.Callback, instruments ...metric.Observable) (metric.Registration, error) {
	reg, err := meter.RegisterCallback(f, instruments...)
	if err != nil {
		return nil, fmt.Errorf("otelmetrics: %w", err)
	}
	return reg, nil
}

// observer observes one Limiter's Stats.
type observer struct {
	lim                                              *fallback.Limiter
	decisions, primaryErrors, errors, opens, settles metric.Int64ObservableCounter
	state, owed                                      metric.Int64ObservableGauge
	sideOpts                                         [len(sides)]metric.ObserveOption
	slowOpt, downOpt, opt, replayedOpt, lostOpt      metric.ObserveOption
}

// instruments makes o's instruments on meter.
func (o *observer) instruments(meter metric.Meter) error {
	in := &instruments{meter: meter}
	o.decisions = in.counter("limitspec.decisions", "{decision}",
		"Rate-limit decisions, by the side that made them: primary (the primary limiter, Redis), fallback (the local limiter), fail-open or fail-closed.")
	o.primaryErrors = in.counter("limitspec.primary.errors", "{error}",
		"Failures of the primary limiter, by kind: slow (no reply in time, or the reply lost: the call may have been applied) or down (unreachable or refusing: not applied).")
	o.errors = in.counter("limitspec.errors", "{call}", "Calls of Limit that returned an error instead of a decision.")
	o.opens = in.counter("limitspec.breaker.opens", "{open}", "Times the circuit breaker opened, leaving the primary limiter.")
	o.settles = in.counter("limitspec.holds.settles", "{call}",
		"Calls owed to the primary and kept (commits and releases of holds that failed for want of it, releases of reserves and decisions with request ids whose outcome was unknown), by outcome: replayed (sent again and answered) or lost (dropped).")
	var err error
	o.state, err = meter.Int64ObservableGauge("limitspec.breaker.state", metric.WithUnit("{state}"),
		metric.WithDescription("State of the circuit breaker: 0 closed (deciding with the primary), 1 open, 2 half-open."))
	in.errs = append(in.errs, err)
	o.owed, err = meter.Int64ObservableGauge("limitspec.holds.settles.owed", metric.WithUnit("{call}"),
		metric.WithDescription("Calls kept to send the primary again: commits and releases of holds that failed for want of it, releases of reserves and decisions with request ids whose outcome was unknown."))
	in.errs = append(in.errs, err)
	return in.err()
}

// options makes the attribute sets of o's observations.
func (o *observer) options(attrs []attribute.KeyValue) {
	with := func(kv ...attribute.KeyValue) metric.ObserveOption { return withAttrs(attrs, kv...) }
	for i, side := range sides {
		o.sideOpts[i] = with(sideKey.String(side.String()))
	}
	o.slowOpt, o.downOpt, o.opt = with(kindKey.String("slow")), with(kindKey.String("down")), with()
	o.replayedOpt, o.lostOpt = with(settledKey.String("replayed")), with(settledKey.String("lost"))
}

// observe is the callback: it reads the Stats once and observes them.
func (o *observer) observe(_ context.Context, ob metric.Observer) error {
	st := o.lim.Stats()
	for i, side := range sides {
		ob.ObserveInt64(o.decisions, int64(st.Decisions(side)), o.sideOpts[i])
	}
	ob.ObserveInt64(o.primaryErrors, int64(st.PrimarySlow), o.slowOpt)
	ob.ObserveInt64(o.primaryErrors, int64(st.PrimaryDown), o.downOpt)
	ob.ObserveInt64(o.errors, int64(st.Errors), o.opt)
	ob.ObserveInt64(o.opens, int64(st.Opens), o.opt)
	ob.ObserveInt64(o.state, int64(st.State), o.opt)
	ob.ObserveInt64(o.settles, int64(st.SettlesReplayed), o.replayedOpt)
	ob.ObserveInt64(o.settles, int64(st.SettlesLost), o.lostOpt)
	ob.ObserveInt64(o.owed, st.SettlesOwed, o.opt)
	return nil
}

// check refuses the arguments of fn (Observe or ObserveLease) that
// cannot work: a nil meter, a nil limiter (noLim), an attribute of one
// of the keys fn sets itself.
func check(fn string, meter metric.Meter, noLim bool, attrs []attribute.KeyValue, own ...attribute.Key) error {
	switch {
	case meter == nil || reflect.ValueOf(meter).Kind() == reflect.Pointer && reflect.ValueOf(meter).IsNil():
		return misconfigured("%s: the meter is nil", fn)
	case noLim:
		return misconfigured("%s: the limiter is nil", fn)
	}
	for _, a := range attrs {
		if slices.Contains(own, a.Key) {
			return misconfigured("%s: the attribute %q is %s's own", fn, a.Key, fn)
		}
	}
	return nil
}

// misconfigured is a refusal of Observe or ObserveLease, in the format of
// every constructor's refusal: "otelmetrics: misconfigured: ...",
// matching limitspec.ErrMisconfigured. (The package is a module of its
// own: it uses none of the main module's internal packages, so that any
// version of one builds with any of the other.)
func misconfigured(format string, args ...any) error {
	return fmt.Errorf("otelmetrics: %w: %w", limitspec.ErrMisconfigured, fmt.Errorf(format, args...))
}

// withAttrs is the option of an observation carrying attrs and kv.
func withAttrs(attrs []attribute.KeyValue, kv ...attribute.KeyValue) metric.ObserveOption {
	return metric.WithAttributeSet(attribute.NewSet(append(append([]attribute.KeyValue(nil), attrs...), kv...)...))
}

// The attributes' keys that ObserveLease sets itself, and refuses in
// attrs.
const (
	outcomeKey = attribute.Key("outcome") // of limitspec.lease.requests: granted, denied
	useKey     = attribute.Key("use")     // of limitspec.lease.cost: leased, spent, lapsed
)

// ObserveLease registers on meter the lease instruments of the package
// documentation, observed from lim.Stats() at each collection, each
// observation carrying attrs beside its own outcome or use. It refuses a
// nil meter, a nil lim, and attrs with the key outcome or use, with an
// error matching limitspec.ErrMisconfigured, as Observe does.
func ObserveLease(meter metric.Meter, lim *lease.Limiter, attrs ...attribute.KeyValue) (metric.Registration, error) {
	if err := check("ObserveLease", meter, lim == nil, attrs, outcomeKey, useKey); err != nil {
		return nil, err
	}
	o := &leaseObserver{lim: lim}
	in := &instruments{meter: meter}
	o.requests = in.counter("limitspec.lease.requests", "{lease}",
		"Leases asked of the primary limiter, by outcome: granted or denied (the key's requests then go to the primary one by one).")
	o.cost = in.counter("limitspec.lease.cost", "{cost}",
		"Cost of the leases, by use: leased (taken from the primary), spent (by requests), lapsed (ended unspent: admitted by nobody).")
	o.direct = in.counter("limitspec.lease.direct", "{request}", "Requests sent to the primary limiter as they are, not decided from a lease.")
	if err := in.err(); err != nil {
		return nil, err
	}
	with := func(kv ...attribute.KeyValue) metric.ObserveOption { return withAttrs(attrs, kv...) }
	o.granted, o.denied = with(outcomeKey.String("granted")), with(outcomeKey.String("denied"))
	o.leased, o.spent, o.lapsed = with(useKey.String("leased")), with(useKey.String("spent")), with(useKey.String("lapsed"))
	o.opt = with()
	return registerCallback(meter, o.observe, o.requests, o.cost, o.direct)
}

// leaseObserver observes one lease.Limiter's Stats.
type leaseObserver struct {
	lim                                         *lease.Limiter
	requests, cost, direct                      metric.Int64ObservableCounter
	granted, denied, leased, spent, lapsed, opt metric.ObserveOption
}

// observe is the callback: it reads the Stats once and observes them.
func (o *leaseObserver) observe(_ context.Context, ob metric.Observer) error {
	st := o.lim.Stats()
	ob.ObserveInt64(o.requests, int64(st.Leases), o.granted)
	ob.ObserveInt64(o.requests, int64(st.Denied), o.denied)
	ob.ObserveInt64(o.cost, int64(st.Leased), o.leased)
	ob.ObserveInt64(o.cost, int64(st.Spent), o.spent)
	ob.ObserveInt64(o.cost, int64(st.Lapsed), o.lapsed)
	ob.ObserveInt64(o.direct, int64(st.Direct), o.opt)
	return nil
}
