package otelmetrics_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/otelmetrics"
)

// unreachable is a primary limiter whose Redis refuses every connection.
type unreachable struct{}

func (unreachable) Limit(context.Context, limitspec.Request) (limitspec.Result, error) {
	return limitspec.Result{}, fmt.Errorf("dial tcp 10.0.0.7:6379: connection refused: %w", limitspec.ErrUnavailable)
}

// Example exports a Limiter's counters to Prometheus through the SDK's
// MeterProvider and the Prometheus exporter, on a registry of its own,
// and prints the limitspec series of /metrics after 3 requests to a
// Redis that refuses them.
func Example() {
	local, err := goimpl.New(goimpl.Options{})
	if err != nil {
		panic(err)
	}
	defer local.Close()
	lim, err := fallback.New(unreachable{}, local, fallback.Options{Failures: 2})
	if err != nil {
		panic(err)
	}

	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo())
	if err != nil {
		panic(err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer provider.Shutdown(context.Background())
	reg, err := otelmetrics.Observe(provider.Meter(otelmetrics.ScopeName), lim, attribute.String("limiter", "api"))
	if err != nil {
		panic(err)
	}
	defer reg.Unregister()
	metrics := promhttp.HandlerFor(registry, promhttp.HandlerOpts{}) // to serve at GET /metrics

	perUser := limitspec.GCRA{Burst: 20, Rate: 10, Period: time.Second}
	for i := 0; i < 3; i++ {
		if _, err := lim.Limit(context.Background(), limitspec.Request{Key: "user:1", Limit: perUser, Cost: 1}); err != nil {
			panic(err)
		}
	}

	rec := httptest.NewRecorder()
	metrics.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for sc := bufio.NewScanner(rec.Body); sc.Scan(); {
		if strings.HasPrefix(sc.Text(), "limitspec_") {
			fmt.Println(sc.Text())
		}
	}
	// Output:
	// limitspec_breaker_opens_total{limiter="api"} 1
	// limitspec_breaker_state{limiter="api"} 1
	// limitspec_decisions_total{limiter="api",side="fail-closed"} 0
	// limitspec_decisions_total{limiter="api",side="fail-open"} 0
	// limitspec_decisions_total{limiter="api",side="fallback"} 3
	// limitspec_decisions_total{limiter="api",side="primary"} 0
	// limitspec_errors_total{limiter="api"} 0
	// limitspec_holds_settles_owed{limiter="api"} 0
	// limitspec_holds_settles_total{limiter="api",outcome="lost"} 0
	// limitspec_holds_settles_total{limiter="api",outcome="replayed"} 0
	// limitspec_primary_errors_total{kind="down",limiter="api"} 2
	// limitspec_primary_errors_total{kind="slow",limiter="api"} 0
}
