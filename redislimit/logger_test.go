package redislimit_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/limitspec/limitspec/redislimit"
)

// TestGoRedisLogger: go-redis's lines reach the slog.Logger at the level
// set, and nothing below the logger's level is written.
func TestGoRedisLogger(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		handler slog.Level // the least level the handler writes
		level   slog.Level // GoRedisLogger's
		want    string     // in the output, or "" for none
	}{
		{"debug, not written", slog.LevelInfo, slog.LevelDebug, ""},
		{"debug, written", slog.LevelDebug, slog.LevelDebug, `level=DEBUG msg="redis: connection pool: failed to dial after 1 attempts: refused" source=go-redis`},
		{"warn", slog.LevelInfo, slog.LevelWarn, `level=WARN msg="redis: connection pool: failed to dial after 1 attempts: refused"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.handler}))
			redislimit.GoRedisLogger{Logger: l, Level: tc.level}.Printf(ctx, "redis: connection pool: failed to dial after %d attempts: %s", 1, "refused")
			switch got := buf.String(); {
			case tc.want == "" && got != "":
				t.Errorf("wrote %q; want nothing", got)
			case !strings.Contains(got, tc.want):
				t.Errorf("wrote %q; want it to hold %q", got, tc.want)
			}
		})
	}
}
