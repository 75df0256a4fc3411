package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/lua"
	"github.com/limitspec/limitspec/redisimpl"
	"github.com/redis/go-redis/v9"
)

// ClientTarget drives package redisimpl's Limiter, the Go client a
// service uses, on the Redis (or Cluster) of a RedisTarget: the client's
// parameter mapping, ARGV, reply decoding and error classes are held to
// every vector, as the scripts are. It reuses the RedisTarget's key space
// (through redisimpl.WithPrefix) and its keyspace checks; views, which
// the client does not offer, run the view scripts as the RedisTarget
// does.
type ClientTarget struct {
	*RedisTarget
	lim     *redisimpl.Limiter
	refused *Outcome
}

// NewClientTarget drives redisimpl on rt's server; with rt.UseFunctions
// called first, the client calls the Functions library too.
func NewClientTarget(rt *RedisTarget) *ClientTarget { return &ClientTarget{RedisTarget: rt} }

// Name is the RedisTarget's with "-client": redis-client, or
// cluster-client-functions for a Cluster through the Functions library.
func (t *ClientTarget) Name() string {
	base, functions := strings.CutSuffix(t.RedisTarget.Name(), "-functions")
	if functions {
		return base + "-client-functions"
	}
	return base + "-client"
}

func (t *ClientTarget) Begin(name string, params map[string]json.Number) error {
	if err := t.RedisTarget.Begin(name, params); err != nil {
		return err
	}
	t.lim, t.refused = nil, nil
	ints, refused := intParams(name, params)
	if refused != nil {
		t.refused = refused
		return nil
	}
	opts := []redisimpl.Option{redisimpl.WithPrefix(t.prefix)}
	if t.functions {
		opts = append(opts, redisimpl.WithFunctions())
	}
	var err error
	if _, ok := lua.LookupPolicy(name); ok {
		t.lim, err = redisimpl.NewPolicy(t.rdb, name, ints, opts...)
	} else {
		t.lim, err = redisimpl.New(t.rdb, name, ints, opts...)
	}
	if err != nil {
		o := clientOutcome(err)
		t.refused = &o
	}
	return nil
}

func (t *ClientTarget) Decide(r Request) Outcome {
	if t.refused != nil {
		return *t.refused
	}
	c, refused := intCost(r)
	if refused != nil {
		return *refused
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := t.lim.Limit(ctx, limitspec.Request{Key: r.Key, IDs: r.IDs, Cost: c,
		Now: time.UnixMilli(r.NowMs), Force: r.Force, Inputs: r.Inputs})
	if err != nil {
		return clientOutcome(err)
	}
	o := resultOutcome(res.Result)
	if res.Index > 0 {
		o.Index = int64(res.Index)
		for _, q := range res.Limits {
			o.Limits = append(o.Limits, resultOutcome(q.Result))
		}
	}
	return o
}

func (t *ClientTarget) Reset(r Request) Outcome {
	if t.refused != nil {
		return *t.refused
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := t.lim.Reset(ctx, limitspec.Request{Key: r.Key, IDs: r.IDs}); err != nil {
		return clientOutcome(err)
	}
	return Outcome{}
}

// clientOutcome classifies a redisimpl error: BADINPUT, or the code of
// the Redis error behind a bad state (BADSTATE, WRONGTYPE); anything else
// is CLIENT, which no vector expects.
func clientOutcome(err error) Outcome {
	var rerr redis.Error
	switch {
	case errors.Is(err, goimpl.ErrBadInput):
		return failure("BADINPUT", err.Error())
	case errors.Is(err, limitspec.ErrBadState) && errors.As(err, &rerr):
		return errorOutcome(lua.ErrorReply(rerr.Error()))
	}
	return failure("CLIENT", err.Error())
}
