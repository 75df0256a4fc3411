package redisimpl

import "time"

// Option configures a Limiter.
type Option func(*options)

type options struct {
	clock       func() time.Time
	serverClock bool
	functions   bool
	prefix      string
}

func makeOptions(opts []Option) options {
	o := options{clock: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithClock decides requests without a Now at clock's time instead of
// time.Now's.
func WithClock(clock func() time.Time) Option {
	return func(o *options) { o.clock = clock }
}

// WithServerClock decides requests without a Now at the Redis server's
// clock (the scripts read TIME when now_ms is empty), which every process
// sharing the Redis agrees on.
func WithServerClock() Option {
	return func(o *options) { o.serverClock = true }
}

// WithFunctions calls the Redis Functions library (FCALL, Redis 7 and
// later) instead of EVALSHA; a server without it gets it loaded at the
// first call that needs it.
func WithFunctions() Option {
	return func(o *options) { o.functions = true }
}

// WithPrefix puts prefix in front of every key and identity value, inside
// the hash tag ("{" + prefix + key + "}..."), so that several
// applications or limiters can share a Redis without sharing keys.
func WithPrefix(prefix string) Option {
	return func(o *options) { o.prefix = prefix }
}
