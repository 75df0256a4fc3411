package otelmetrics_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/lease"
	"github.com/limitspec/limitspec/otelmetrics"
)

// TestObserveLease: five requests on a fixed window of 4 with leases of
// 3. The first takes a lease (3 used), the next two spend it, the 4th is
// denied a lease (1 left) and decided alone (admitted), the 5th too
// (denied).
func TestObserveLease(t *testing.T) {
	primary, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { primary.Close() })
	lim, err := lease.New(primary, lease.Options{Size: 3})
	if err != nil {
		t.Fatal(err)
	}
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { provider.Shutdown(context.Background()) })
	if _, err := otelmetrics.ObserveLease(provider.Meter(otelmetrics.ScopeName), lim, attribute.String("limiter", "api")); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for i := range 5 {
		req := limitspec.Request{Key: "k", Limit: limitspec.FixedWindow{Limit: 4, Window: time.Minute}, Cost: 1, Now: now}
		if res, err := lim.Limit(t.Context(), req); err != nil || res.Allowed != (i < 4) {
			t.Fatalf("request %d: %+v, %v", i+1, res, err)
		}
	}
	want := []string{
		"limitspec.lease.cost{limiter=api,use=lapsed} 0",
		"limitspec.lease.cost{limiter=api,use=leased} 3",
		"limitspec.lease.cost{limiter=api,use=spent} 3",
		"limitspec.lease.direct{limiter=api} 2",
		"limitspec.lease.requests{limiter=api,outcome=denied} 1",
		"limitspec.lease.requests{limiter=api,outcome=granted} 1",
	}
	if diff := cmp.Diff(want, collect(t, reader)); diff != "" {
		t.Errorf("points (-want +got):\n%s", diff)
	}
	for _, key := range []string{"outcome", "use"} {
		_, err := otelmetrics.ObserveLease(provider.Meter(otelmetrics.ScopeName), lim, attribute.String(key, "x"))
		if want := fmt.Sprintf("otelmetrics: misconfigured: ObserveLease: the attribute %q is ObserveLease's own", key); err == nil || err.Error() != want || !errors.Is(err, limitspec.ErrMisconfigured) {
			t.Errorf("ObserveLease with the attribute %s: %v, want the error %q, matching ErrMisconfigured", key, err, want)
		}
	}
	if _, err := otelmetrics.ObserveLease(provider.Meter(otelmetrics.ScopeName), nil); err == nil || !errors.Is(err, limitspec.ErrMisconfigured) {
		t.Errorf("ObserveLease of a nil limiter: %v, want an error matching ErrMisconfigured", err)
	}
}
