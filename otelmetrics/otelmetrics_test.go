package otelmetrics_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/otelmetrics"
)

// behaviour is what the fake primary does.
type behaviour int32

const (
	succeed behaviour = iota // decides: admitted
	down                     // fails as a Redis refusing the connection
	slow                     // fails as a Redis whose reply was lost
	refuse                   // refuses the request as bad input
)

// primary is a fake primary limiter that does what it is told.
type primary struct{ do atomic.Int32 }

func (p *primary) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	switch behaviour(p.do.Load()) {
	case down:
		return limitspec.Result{}, fmt.Errorf("dial tcp: connection refused: %w", limitspec.ErrUnavailable)
	case slow:
		return limitspec.Result{}, fmt.Errorf("read: connection reset: %w: %w", limitspec.ErrUnavailable, limitspec.ErrOutcomeUnknown)
	case refuse:
		return limitspec.Result{}, fmt.Errorf("cost: %w", limitspec.ErrBadInput)
	}
	return limitspec.Result{Allowed: true}, nil
}

// setup returns a Limiter on a fake primary (Failures 3, OpenFor 1 s on
// the clock *now), observed with the attribute limiter=api through a
// ManualReader.
func setup(t *testing.T) (*primary, *fallback.Limiter, *sdkmetric.ManualReader, *time.Time) {
	t.Helper()
	local, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	p := &primary{}
	now := time.UnixMilli(1_700_000_000_000)
	lim, err := fallback.New(p, local, fallback.Options{Failures: 3, OpenFor: time.Second, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { provider.Shutdown(context.Background()) })
	if _, err := otelmetrics.Observe(provider.Meter(otelmetrics.ScopeName), lim, attribute.String("limiter", "api")); err != nil {
		t.Fatal(err)
	}
	return p, lim, reader, &now
}

// call makes n calls of lim with the primary doing b, and checks that
// each is decided by side, or fails when side is -1.
func call(t *testing.T, p *primary, lim *fallback.Limiter, b behaviour, n int, side limitspec.Side) {
	t.Helper()
	p.do.Store(int32(b))
	for i := 0; i < n; i++ {
		res, err := lim.Limit(context.Background(), limitspec.Request{Key: "k", Limit: limitspec.GCRA{Burst: 100, Rate: 1, Period: time.Second}, Cost: 1})
		if side == failed {
			if err == nil {
				t.Fatalf("call %d: no error", i)
			}
			continue
		}
		if err != nil || res.Side != side {
			t.Fatalf("call %d: side %v, %v; want %v", i, res.Side, err, side)
		}
	}
}

const failed = limitspec.Side(255) // for call: the calls return an error

// collect collects the reader's metrics as "name{attributes} value"
// strings, sorted, and checks that each instrument is in ScopeName, a
// monotonic cumulative int64 sum (a counter) or, limitspec.breaker.state,
// an int64 gauge, with its unit.
func collect(t *testing.T, reader *sdkmetric.ManualReader) []string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	units := map[string]string{"limitspec.decisions": "{decision}", "limitspec.primary.errors": "{error}",
		"limitspec.errors": "{call}", "limitspec.breaker.opens": "{open}", "limitspec.breaker.state": "{state}",
		"limitspec.holds.settles": "{call}", "limitspec.holds.settles.owed": "{call}",
		"limitspec.lease.requests": "{lease}", "limitspec.lease.cost": "{cost}", "limitspec.lease.direct": "{request}"}
	gauges := map[string]bool{"limitspec.breaker.state": true, "limitspec.holds.settles.owed": true}
	var points []string
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelmetrics.ScopeName {
			t.Errorf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			if m.Unit != units[m.Name] || m.Description == "" {
				t.Errorf("%s: unit %q, description %q", m.Name, m.Unit, m.Description)
			}
			var dps []metricdata.DataPoint[int64]
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if !d.IsMonotonic || d.Temporality != metricdata.CumulativeTemporality || gauges[m.Name] {
					t.Errorf("%s: a sum, monotonic %v, %v", m.Name, d.IsMonotonic, d.Temporality)
				}
				dps = d.DataPoints
			case metricdata.Gauge[int64]:
				if !gauges[m.Name] {
					t.Errorf("%s: a gauge", m.Name)
				}
				dps = d.DataPoints
			default:
				t.Errorf("%s: data %T", m.Name, m.Data)
			}
			for _, dp := range dps {
				points = append(points, fmt.Sprintf("%s{%s} %d", m.Name, attrs(dp.Attributes), dp.Value))
			}
		}
	}
	sort.Strings(points)
	return points
}

// attrs is set as k=v,... in the order of the keys.
func attrs(set attribute.Set) string {
	var kv []string
	for _, a := range set.ToSlice() {
		kv = append(kv, string(a.Key)+"="+a.Value.Emit())
	}
	return strings.Join(kv, ",")
}

// want is the points of collect for the counts given, in this order:
// decisions primary, fallback, fail-open, fail-closed; primary errors
// slow, down; errors; opens; state.
func want(primary, fallback, failOpen, failClosed, slow, down, errs, opens, state int) []string {
	return []string{
		fmt.Sprintf("limitspec.breaker.opens{limiter=api} %d", opens),
		fmt.Sprintf("limitspec.breaker.state{limiter=api} %d", state),
		fmt.Sprintf("limitspec.decisions{limiter=api,side=fail-closed} %d", failClosed),
		fmt.Sprintf("limitspec.decisions{limiter=api,side=fail-open} %d", failOpen),
		fmt.Sprintf("limitspec.decisions{limiter=api,side=fallback} %d", fallback),
		fmt.Sprintf("limitspec.decisions{limiter=api,side=primary} %d", primary),
		fmt.Sprintf("limitspec.errors{limiter=api} %d", errs),
		"limitspec.holds.settles.owed{limiter=api} 0",
		"limitspec.holds.settles{limiter=api,outcome=lost} 0",
		"limitspec.holds.settles{limiter=api,outcome=replayed} 0",
		fmt.Sprintf("limitspec.primary.errors{kind=down,limiter=api} %d", down),
		fmt.Sprintf("limitspec.primary.errors{kind=slow,limiter=api} %d", slow),
	}
}

// TestObserve drives a Limiter through a primary failing, the breaker
// opening, a failed probe and a successful one, and checks every point
// after each step.
func TestObserve(t *testing.T) {
	p, lim, reader, now := setup(t)
	check := func(step string, want []string) {
		t.Helper()
		if diff := cmp.Diff(want, collect(t, reader)); diff != "" {
			t.Errorf("%s: points (-want +got):\n%s", step, diff)
		}
	}
	check("at first", want(0, 0, 0, 0, 0, 0, 0, 0, 0))

	call(t, p, lim, succeed, 3, limitspec.Primary)
	call(t, p, lim, refuse, 1, failed) // an error, not a primary failure
	check("3 decided by the primary, 1 refused", want(3, 0, 0, 0, 0, 0, 1, 0, 0))

	call(t, p, lim, down, 2, limitspec.Fallback)
	check("2 failures, down", want(3, 2, 0, 0, 0, 2, 1, 0, 0))
	call(t, p, lim, slow, 1, limitspec.Fallback) // the 3rd failure in a row: the breaker opens
	check("the breaker opened", want(3, 3, 0, 0, 1, 2, 1, 1, 1))

	call(t, p, lim, succeed, 2, limitspec.Fallback) // open: the primary is not called
	check("open", want(3, 5, 0, 0, 1, 2, 1, 1, 1))

	*now = now.Add(time.Second) // half-open: the next call probes
	call(t, p, lim, down, 1, limitspec.Fallback)
	check("the probe failed", want(3, 6, 0, 0, 1, 3, 1, 2, 1))

	*now = now.Add(time.Second)
	call(t, p, lim, succeed, 2, limitspec.Primary)
	check("the probe succeeded", want(5, 6, 0, 0, 1, 3, 1, 2, 0))

	if st := lim.Stats(); st.PrimaryErrors != 4 || st.PrimarySlow != 1 {
		t.Errorf("Stats %+v", st)
	}
}

// TestObserveModes checks the fail-open and fail-closed sides, with no
// attribute given.
func TestObserveModes(t *testing.T) {
	for _, mode := range []fallback.Mode{fallback.FailOpen, fallback.FailClosed} {
		p := &primary{}
		p.do.Store(int32(down))
		lim, err := fallback.New(p, nil, fallback.Options{Mode: mode, Failures: 1, OpenFor: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		reader := sdkmetric.NewManualReader()
		provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		if _, err := otelmetrics.Observe(provider.Meter(otelmetrics.ScopeName), lim); err != nil {
			t.Fatal(err)
		}
		side := limitspec.FailOpen
		if mode == fallback.FailClosed {
			side = limitspec.FailClosed
		}
		call(t, p, lim, down, 4, side)
		got := strings.Join(collect(t, reader), "\n")
		for _, w := range []string{"limitspec.decisions{side=" + side.String() + "} 4", "limitspec.decisions{side=primary} 0",
			"limitspec.primary.errors{kind=down} 1", "limitspec.breaker.opens{} 1", "limitspec.breaker.state{} 1"} {
			if !strings.Contains(got, w+"\n") {
				t.Errorf("%v: no %q in\n%s", mode, w, got)
			}
		}
		provider.Shutdown(context.Background())
	}
}

// TestUnregister: once unregistered, the callback observes nothing more.
func TestUnregister(t *testing.T) {
	local, _ := goimpl.New(goimpl.Options{})
	t.Cleanup(func() { local.Close() })
	lim, err := fallback.New(&primary{}, local, fallback.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(context.Background())
	reg, err := otelmetrics.Observe(provider.Meter(otelmetrics.ScopeName), lim)
	if err != nil {
		t.Fatal(err)
	}
	if got := collect(t, reader); len(got) != 12 {
		t.Errorf("registered: %d points, want 12: %q", len(got), got)
	}
	if err := reg.Unregister(); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, reader); len(got) != 0 {
		t.Errorf("unregistered: points %q", got)
	}
}

// TestTwoLimiters: two Limiters on one meter, each with its attribute.
func TestTwoLimiters(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(context.Background())
	meter := provider.Meter(otelmetrics.ScopeName)
	for i, name := range []string{"a", "b"} {
		local, _ := goimpl.New(goimpl.Options{})
		t.Cleanup(func() { local.Close() })
		p := &primary{}
		lim, err := fallback.New(p, local, fallback.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := otelmetrics.Observe(meter, lim, attribute.String("limiter", name)); err != nil {
			t.Fatal(err)
		}
		call(t, p, lim, succeed, i+1, limitspec.Primary)
	}
	got := strings.Join(collect(t, reader), "\n")
	for _, w := range []string{"limitspec.decisions{limiter=a,side=primary} 1", "limitspec.decisions{limiter=b,side=primary} 2"} {
		if !strings.Contains(got, w+"\n") {
			t.Errorf("no %q in\n%s", w, got)
		}
	}
}

func TestObserveRefuses(t *testing.T) {
	local, _ := goimpl.New(goimpl.Options{})
	t.Cleanup(func() { local.Close() })
	lim, err := fallback.New(&primary{}, local, fallback.Options{})
	if err != nil {
		t.Fatal(err)
	}
	meter := noop.NewMeterProvider().Meter("x")
	var typedNil *noopMeter
	for _, tt := range []struct {
		name  string
		meter metric.Meter
		lim   *fallback.Limiter
		attrs []attribute.KeyValue
		want  string
	}{
		{"nil meter", nil, lim, nil, "otelmetrics: misconfigured: Observe: the meter is nil"},
		{"typed nil meter", typedNil, lim, nil, "otelmetrics: misconfigured: Observe: the meter is nil"},
		{"nil limiter", meter, nil, nil, "otelmetrics: misconfigured: Observe: the limiter is nil"},
		{"side attribute", meter, lim, []attribute.KeyValue{attribute.String("side", "x")},
			`otelmetrics: misconfigured: Observe: the attribute "side" is Observe's own`},
		{"kind attribute", meter, lim, []attribute.KeyValue{attribute.String("limiter", "api"), attribute.String("kind", "x")},
			`otelmetrics: misconfigured: Observe: the attribute "kind" is Observe's own`},
	} {
		reg, err := otelmetrics.Observe(tt.meter, tt.lim, tt.attrs...)
		if reg != nil || err == nil || err.Error() != tt.want || !errors.Is(err, limitspec.ErrMisconfigured) {
			t.Errorf("%s: %v, %v; want the error %q, matching ErrMisconfigured", tt.name, reg, err, tt.want)
		}
	}
	if _, err := otelmetrics.Observe(meter, lim, attribute.String("limiter", "api")); err != nil {
		t.Errorf("noop meter: %v", err)
	}
}

// noopMeter is a Meter whose nil pointer Observe is to refuse.
type noopMeter struct{ noop.Meter }

// TestConcurrent collects while goroutines call a Limiter whose primary
// changes its behaviour: no counter ever decreases, and the last
// collection counts every call.
func TestConcurrent(t *testing.T) {
	p, lim, reader, _ := setup(t)
	const goroutines, calls = 8, 300
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Go(func() {
				for i := 0; i < calls; i++ {
					p.do.Store(int32((g + i) % 3)) // succeed, down, slow
					lim.Limit(context.Background(), limitspec.Request{Key: "k", Limit: limitspec.GCRA{Burst: 100, Rate: 1, Period: time.Second}, Cost: 1})
				}
			})
		}
		wg.Wait()
	}()
	last := map[string]int64{}
	decreased := func(points []string) {
		for _, pt := range points {
			i := strings.LastIndexByte(pt, ' ')
			var v int64
			fmt.Sscan(pt[i+1:], &v)
			if name := pt[:i]; !strings.HasPrefix(name, "limitspec.breaker.state") && v < last[name] {
				t.Errorf("%s went from %d to %d", name, last[name], v)
			} else {
				last[name] = v
			}
		}
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		decreased(collect(t, reader))
	}
	decreased(collect(t, reader))
	st := lim.Stats()
	sum := last["limitspec.decisions{limiter=api,side=primary}"] + last["limitspec.decisions{limiter=api,side=fallback}"]
	if sum != goroutines*calls || last["limitspec.primary.errors{kind=slow,limiter=api}"]+last["limitspec.primary.errors{kind=down,limiter=api}"] != int64(st.PrimaryErrors) {
		t.Errorf("last points %v; Stats %+v", last, st)
	}
}
