package redislimit

import (
	"context"
	"fmt"
	"log/slog"
)

// GoRedisLogger writes go-redis's own log lines to a slog.Logger at one
// level: set it with redis.SetLogger (go-redis's logger is one per
// process). go-redis logs, on stderr by default, each dial that fails
// ("failed to dial after 5 attempts"), so that an outage prints a line
// per call that tries Redis; package fallback logs the outage once, when
// its breaker opens, and again when Redis is back. At slog.LevelDebug
// the lines stay out of a service's logs unless it asks for them.
type GoRedisLogger struct {
	// Logger receives the lines; nil is slog.Default().
	Logger *slog.Logger
	// Level is the level they are logged at.
	Level slog.Level
}

// Printf logs go-redis's line, formatted as fmt.Sprintf formats it, at
// g.Level, when g.Logger logs that level.
func (g GoRedisLogger) Printf(ctx context.Context, format string, v ...any) {
	l := g.Logger
	if l == nil {
		l = slog.Default()
	}
	if !l.Enabled(ctx, g.Level) {
		return // not formatted: an outage may log at every call
	}
	l.Log(ctx, g.Level, fmt.Sprintf(format, v...), "source", "go-redis")
}
