package redisimpl

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/lua"
	"github.com/redis/go-redis/v9"
)

// Limiter decides the requests of one algorithm or policy on Redis. It
// implements limitspec.Limiter and limitspec.Resetter, and is safe for
// concurrent use.
type Limiter struct {
	rdb  redis.UniversalClient
	name string
	o    options
	// decide and force are the decision's and the forced call's scripts;
	// reset deletes a call's keys.
	decide, force, reset script
	// keys returns a request's KEYS, or false when the key or an
	// identity is refused.
	keys func(req limitspec.Request) ([]string, bool)
	// inputs name the per-call strings, in ARGV order after the cost.
	inputs []string
	// params are the parameters' ARGV, in order.
	params []string
	// limits is how many limits the reply holds (0: an algorithm's).
	limits int
	// names and windows are each limit's (an algorithm's one), for
	// Result.Limits.
	names   []string
	windows []time.Duration
	// local is the goimpl twin: Local returns it, and its refusals are
	// the messages of a key or identities refused before calling Redis.
	local limitspec.Limiter
}

// script is one generated script: its name (for FCALL), its text and SHA1.
type script struct{ name, src, sha string }

// New returns the Redis limiter of the named algorithm with params, which
// it checks as goimpl.New does (an unknown algorithm, a missing, unknown
// or out-of-domain parameter: an error matching limitspec.ErrBadInput).
// Optional parameters left out take their defaults.
func New(rdb redis.UniversalClient, algorithm string, params map[string]int64, opts ...Option) (*Limiter, error) {
	twin, err := goimpl.New(algorithm, params)
	if err != nil {
		return nil, err
	}
	s, _ := lua.Lookup(algorithm)
	values := make([]int64, len(s.Params))
	for i, p := range s.Params {
		v, ok := params[p]
		if !ok {
			v, _ = strconv.ParseInt(s.Defaults[p], 10, 64)
		}
		values[i] = v
	}
	return newAlgorithm(rdb, s, twin, values, opts)
}

// newAlgorithm returns the limiter of s's algorithm with parameter values
// in s.Params's order, checked already by twin's constructor.
func newAlgorithm(rdb redis.UniversalClient, s lua.Script, twin goimpl.Limiter, values []int64, opts []Option) (*Limiter, error) {
	if err := checkClient(s.Algorithm, rdb); err != nil {
		return nil, err
	}
	l := &Limiter{rdb: rdb, name: s.Algorithm, o: makeOptions(opts), inputs: s.Strings,
		decide: script{s.Name, s.Source, s.SHA1},
		force:  script{lua.ForceName(s.Name), s.ForceSource, s.ForceSHA1},
		reset:  script{lua.ResetName(s.Name), s.ResetSource, s.ResetSHA1},
		local:  limitspec.Local(s.Algorithm, twin),
		names:  []string{s.Algorithm}, windows: []time.Duration{limitspec.Window(twin)},
	}
	byName := map[string]string{}
	for i, v := range values {
		l.params = append(l.params, strconv.FormatInt(v, 10))
		byName[s.Params[i]] = l.params[i]
	}
	l.keys = func(req limitspec.Request) ([]string, bool) {
		if req.Key == "" || req.Key[0] == '}' {
			return nil, false
		}
		return s.KeyNames(l.o.prefix+req.Key, byName), true
	}
	return l, nil
}

// NewPolicy returns the Redis limiter of the named policy of
// spec/policies.yaml, with its per-call parameters (named limit.param, as
// goimpl.NewPolicy takes them), which it checks as goimpl.NewPolicy does.
// A policy counting several identities is refused on a Cluster or a Ring,
// where its keys may lie on several nodes.
func NewPolicy(rdb redis.UniversalClient, name string, params map[string]int64, opts ...Option) (*Limiter, error) {
	twin, err := goimpl.NewPolicy(name, params)
	if err != nil {
		return nil, err
	}
	p, _ := lua.LookupPolicy(name)
	if err := checkClient(name, rdb); err != nil {
		return nil, err
	}
	if err := refuseSpread(rdb, p); err != nil {
		return nil, err
	}
	l := &Limiter{rdb: rdb, name: name, o: makeOptions(opts), limits: len(p.Limits),
		decide: script{p.Name, p.Source, p.SHA1},
		force:  script{lua.ForceName(p.Name), p.ForceSource, p.ForceSHA1},
		reset:  script{lua.ResetName(p.Name), p.ResetSource, p.ResetSHA1},
		local:  limitspec.LocalPolicy(twin),
	}
	for _, v := range p.Params {
		l.params = append(l.params, strconv.FormatInt(params[v], 10))
	}
	l.names, l.windows = twin.LimitNames(), limitspec.PolicyWindows(twin)
	l.keys = func(req limitspec.Request) ([]string, bool) { return policyKeys(p, l.o.prefix, req.IDs) }
	return l, nil
}

// policyKeys are the KEYS of a policy's call, or false when ids name an
// unknown identity, lack one, or give a value the scripts refuse.
func policyKeys(p lua.Policy, prefix string, ids map[string]string) ([]string, bool) {
	for name, v := range ids {
		if !slices.Contains(p.Identities, name) || v == "" || v[0] == '}' {
			return nil, false
		}
	}
	return p.KeyNames(prefix, ids)
}

// checkClient refuses a missing client, and one that would let a call
// outlive its context: go-redis bounds socket reads and writes by the
// context's deadline only with ContextTimeoutEnabled, and otherwise by
// its ReadTimeout (5 s by default), so that a silent server would hold a
// call past its deadline.
func checkClient(name string, rdb redis.UniversalClient) error {
	enabled := true
	switch c := rdb.(type) {
	case nil:
		return &goimpl.InputError{Msg: name + ": no Redis client"}
	case *redis.Client:
		enabled = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		enabled = c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		enabled = c.Options().ContextTimeoutEnabled
	}
	if !enabled {
		return &goimpl.InputError{Msg: name + ": the Redis client must have ContextTimeoutEnabled: true, so that a call's context deadline bounds it " +
			"(without it go-redis waits for its ReadTimeout, 5 s by default, on a server that does not answer)"}
	}
	return nil
}

// refuseSpread refuses a policy over several identities on a client that
// spreads keys over several nodes.
func refuseSpread(rdb redis.UniversalClient, p lua.Policy) error {
	if p.ClusterSafe {
		return nil
	}
	switch rdb.(type) {
	case *redis.ClusterClient, *redis.Ring:
		return &goimpl.InputError{Msg: p.ClusterRefusal()}
	}
	return nil
}

// Name is the algorithm's or the policy's name.
func (l *Limiter) Name() string { return l.name }

// Local returns a goimpl limiter with the same algorithm (or policy) and
// parameters, deciding in process memory, for package fallback. It is
// one limiter per Limiter: every call to Local returns the same.
func (l *Limiter) Local() limitspec.Limiter { return l.local }

// Limit decides req on Redis (see the package doc for time and errors).
func (l *Limiter) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	keys, ok := l.keys(req)
	if !ok {
		return limitspec.Result{}, l.refusal(ctx, req)
	}
	argv := make([]any, 0, 2+len(l.inputs)+len(l.params))
	argv = append(argv, l.nowArg(req.Now), strconv.FormatInt(req.Cost, 10))
	for _, in := range l.inputs {
		argv = append(argv, req.Inputs[in])
	}
	for _, p := range l.params {
		argv = append(argv, p)
	}
	s := l.decide
	if req.Force {
		s = l.force
	}
	reply, err := l.run(ctx, s, keys, argv)
	if err != nil {
		return limitspec.Result{}, err
	}
	return l.result(reply)
}

// nowArg is now_ms: t's, the clock's, or empty for the server's clock.
func (l *Limiter) nowArg(t time.Time) string {
	switch {
	case !t.IsZero():
		return strconv.FormatInt(t.UnixMilli(), 10)
	case l.o.serverClock:
		return ""
	}
	return strconv.FormatInt(l.o.clock().UnixMilli(), 10)
}

// refusal is the error of a key or identities refused before calling
// Redis: the goimpl twin's, which checks them first and writes nothing.
func (l *Limiter) refusal(ctx context.Context, req limitspec.Request) error {
	_, err := l.local.Limit(ctx, limitspec.Request{Key: req.Key, IDs: req.IDs, Now: time.UnixMilli(0)})
	if err == nil {
		err = &goimpl.InputError{Msg: l.name + ": refused key or identities"}
	}
	return err
}

// Reset deletes the state of req's key (a policy's: every limit's, for
// req.IDs), so that the next request is decided as on a fresh key.
func (l *Limiter) Reset(ctx context.Context, req limitspec.Request) error {
	keys, ok := l.keys(req)
	if !ok {
		return l.refusal(ctx, req)
	}
	var argv []any // an algorithm's reset takes its parameters, which its keys name
	if l.limits == 0 {
		for _, p := range l.params {
			argv = append(argv, p)
		}
	}
	_, err := l.run(ctx, l.reset, keys, argv)
	return err
}
