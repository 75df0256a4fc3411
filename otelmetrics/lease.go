package otelmetrics

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/lease"
)

// The attributes' keys that ObserveLease sets itself, and refuses in
// attrs.
const (
	outcomeKey = attribute.Key("outcome") // of limitspec.lease.requests: granted, denied
	useKey     = attribute.Key("use")     // of limitspec.lease.cost: leased, spent, lapsed
)

// ObserveLease registers on meter the lease instruments of the package
// documentation, observed from lim.Stats() at each collection, each
// observation carrying attrs beside its own outcome or use. It refuses a
// nil meter, a nil lim, and attrs with the key outcome or use.
func ObserveLease(meter metric.Meter, lim *lease.Limiter, attrs ...attribute.KeyValue) (metric.Registration, error) {
	switch {
	case limiters.IsNil(meter):
		return nil, errors.New("otelmetrics: nil meter")
	case lim == nil:
		return nil, errors.New("otelmetrics: nil limiter")
	}
	for _, a := range attrs {
		if a.Key == outcomeKey || a.Key == useKey {
			return nil, fmt.Errorf("otelmetrics: attribute %q is set by ObserveLease", a.Key)
		}
	}
	o := &leaseObserver{lim: lim}
	var errs [3]error
	o.requests, errs[0] = meter.Int64ObservableCounter("limitspec.lease.requests", metric.WithUnit("{lease}"),
		metric.WithDescription("Leases asked of the primary limiter, by outcome: granted or denied (the key's requests then go to the primary one by one)."))
	o.cost, errs[1] = meter.Int64ObservableCounter("limitspec.lease.cost", metric.WithUnit("{cost}"),
		metric.WithDescription("Cost of the leases, by use: leased (taken from the primary), spent (by requests), lapsed (ended unspent: admitted by nobody)."))
	o.direct, errs[2] = meter.Int64ObservableCounter("limitspec.lease.direct", metric.WithUnit("{request}"),
		metric.WithDescription("Requests sent to the primary limiter as they are, not decided from a lease."))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("otelmetrics: %w", err)
	}
	with := func(kv ...attribute.KeyValue) metric.ObserveOption { return withAttrs(attrs, kv...) }
	o.granted, o.denied = with(outcomeKey.String("granted")), with(outcomeKey.String("denied"))
	o.leased, o.spent, o.lapsed = with(useKey.String("leased")), with(useKey.String("spent")), with(useKey.String("lapsed"))
	o.opt = with()
	reg, err := meter.RegisterCallback(o.observe, o.requests, o.cost, o.direct)
	if err != nil {
		return nil, fmt.Errorf("otelmetrics: %w", err)
	}
	return reg, nil
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
