package redislimit_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/redislimit"
	"github.com/redis/go-redis/v9"
)

// viaBound decides each request by a handle of its limiter bound to the
// request's limit (Bind) or policy (BindPolicy), bound at the first
// request of each, so that the Limiter's tests hold the handles to the
// same outcomes. A limit Bind refuses is refused as Bind refuses it.
type viaBound struct {
	lim      *redislimit.Limiter
	mu       sync.Mutex
	limits   map[limitspec.Limit]*redislimit.Bound
	policies map[*limitspec.Policy]*redislimit.BoundPolicy
}

func newViaBound(lim *redislimit.Limiter) *viaBound {
	return &viaBound{lim: lim, limits: map[limitspec.Limit]*redislimit.Bound{}, policies: map[*limitspec.Policy]*redislimit.BoundPolicy{}}
}

// Limit decides req by the handle bound to its limit or policy; a limit's
// result is the Result of its one limit.
func (v *viaBound) Limit(ctx context.Context, req limitspec.Request) (limitspec.Result, error) {
	v.mu.Lock()
	bp, bl, err := v.policies[req.Policy], v.limits[req.Limit], error(nil)
	switch {
	case req.Policy != nil && bp == nil:
		bp, err = v.lim.BindPolicy(req.Policy)
		v.policies[req.Policy] = bp
	case req.Policy == nil && bl == nil:
		bl, err = v.lim.Bind(req.Limit)
		v.limits[req.Limit] = bl
	}
	v.mu.Unlock()
	switch {
	case err != nil:
		return limitspec.Result{}, err
	case bp != nil:
		return bp.Limit(ctx, req)
	}
	lr, err := bl.Limit(ctx, req)
	if err != nil {
		return limitspec.Result{}, err
	}
	return limitspec.Result{Allowed: lr.Allowed, RetryAfter: lr.RetryAfter, Delay: lr.Delay, Limits: []limitspec.LimitResult{lr}}, nil
}

// ways are the ways the tests decide by a limiter: its Limit, and the
// handles bound to each request's limit or policy.
var ways = []struct {
	name string
	via  func(*redislimit.Limiter) decider
}{
	{"Limiter", func(l *redislimit.Limiter) decider { return l }},
	{"Bound", func(l *redislimit.Limiter) decider { return newViaBound(l) }},
}

// sameAsLimitSteps are the requests TestBoundSameAsLimit decides, in
// turn: every algorithm of the catalogue, and the ready-made policies.
func sameAsLimitSteps(t *testing.T) []limitspec.Request {
	ipUser, err := limitspec.IPUserPolicy()
	if err != nil {
		t.Fatal(err)
	}
	quota, err := limitspec.BurstQuotaPolicy(6)
	if err != nil {
		t.Fatal(err)
	}
	userGlobal, err := limitspec.UserGlobalPolicy(9)
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]string{"user": "alice"}
	return []limitspec.Request{
		{Key: "alice", Limit: burst},
		{Key: "bob", Limit: limitspec.FixedWindow{Limit: 7, Window: time.Second}},
		{Key: "carol", Limit: limitspec.SlidingWindow{Limit: 7, Window: time.Second}},
		{Key: "dave", Limit: limitspec.TokenBucket{Capacity: 6, RefillTokens: 3, Refill: time.Second}},
		{Key: "erin", Limit: limitspec.LeakyBucket{Capacity: 5, Rate: 4, Period: time.Second}},
		{Key: "frank", Limit: limitspec.SlidingLog{Limit: 6, Window: time.Second}},
		{Key: "grace", Limit: limitspec.BucketWindow{Limit: 5, Window: time.Second, Bucket: 250 * time.Millisecond, Limit2: 8, Window2: 2 * time.Second}},
		{Key: "heidi", Limit: limitspec.MetaWindow{Limit: 6, Window: time.Second}, Inputs: map[string]string{"meta": "heidi's"}},
		{Key: strings.Repeat("k", 300), Limit: burst}, // stored as its SHA-256
		{Policy: ipUser, IDs: map[string]string{"ip": "10.0.0.1", "user": "alice"}},
		{Policy: quota, IDs: users},
		{Policy: userGlobal, IDs: users},
		{Key: "", Limit: burst},
		{Key: "}x", Limit: burst},
		{Policy: quota, IDs: map[string]string{"user": ""}},
		{Policy: quota, IDs: map[string]string{"user": "alice", "org": "x"}},
	}
}

// TestBoundSameAsLimit: the same requests, through Limiter.Limit on one
// limiter and through handles bound to their limits and policies on
// another (each behind a prefix of its own), by EVALSHA and by FCALL,
// batched and not: every result and every refusal is the same, and the
// two leave the same keys with the same values. The steps cover every
// algorithm and the ready-made policies, each at 37 ms steps with costs
// 0 to 3, every seventh forced, every eleventh of cost -1 (refused by
// the scripts) and every thirteenth at a time before the epoch.
func TestBoundSameAsLimit(t *testing.T) {
	t.Parallel()
	for _, way := range []struct {
		name string
		opts redislimit.Options
	}{
		{"scripts", redislimit.Options{}},
		{"functions", redislimit.Options{Functions: true}},
		{"unbatched", redislimit.Options{NoBatching: true}},
	} {
		t.Run(way.name, func(t *testing.T) {
			t.Parallel()
			_, rdb := newClient(t)
			limitOpts, boundOpts := way.opts, way.opts
			limitOpts.Prefix, boundOpts.Prefix = "limit:", "bound:"
			limit := newLimiter(t, rdb, limitOpts)
			bound := newViaBound(newLimiter(t, rdb, boundOpts))
			steps := sameAsLimitSteps(t)
			denied, refused := 0, 0
			for i := range 20 * len(steps) {
				req := steps[i%len(steps)]
				req.Cost, req.Now, req.Force = int64(i%4), at(37*int64(i)), i%7 == 6
				if i%11 == 10 {
					req.Cost = -1
				}
				if i%13 == 12 {
					req.Now = time.UnixMilli(-1)
				}
				want, wantErr := limit.Limit(t.Context(), req)
				got, err := bound.Limit(t.Context(), req)
				if !reflect.DeepEqual(got, want) || fmt.Sprint(err) != fmt.Sprint(wantErr) || errors.Is(err, limitspec.ErrBadInput) != errors.Is(wantErr, limitspec.ErrBadInput) {
					t.Fatalf("step %d: bound %+v, %v;\nwant as Limit %+v, %v", i, got, err, want, wantErr)
				}
				switch {
				case wantErr != nil && !errors.Is(wantErr, limitspec.ErrBadInput):
					t.Fatalf("step %d: %v", i, wantErr)
				case wantErr != nil:
					refused++
				case !want.Allowed:
					denied++
				}
			}
			if denied == 0 || refused == 0 {
				t.Errorf("%d denied, %d refused; want some of each", denied, refused)
			}
			sameKeys(t, rdb, "limit:", "bound:")
		})
	}
}

// sameKeys fails unless the keys under the hash tags of prefixes a and
// b are the same but for the prefix, with the same values (DUMP).
func sameKeys(t *testing.T, rdb *redis.Client, a, b string) {
	t.Helper()
	var as, bs []string
	for _, k := range keys(t, rdb) {
		switch {
		case strings.HasPrefix(k, "{"+a):
			as = append(as, k)
		case strings.HasPrefix(k, "{"+b):
			bs = append(bs, strings.Replace(k, b, a, 1))
		default:
			t.Errorf("a key %s of neither limiter", k)
		}
	}
	slices.Sort(bs)
	if !slices.Equal(as, bs) || len(as) == 0 {
		t.Fatalf("keys %v; the bound handles' %v", as, bs)
	}
	for _, k := range as {
		if va, vb := rdb.Dump(t.Context(), k).Val(), rdb.Dump(t.Context(), strings.Replace(k, a, b, 1)).Val(); va != vb {
			t.Errorf("%s: the value differs from the bound handle's", k)
		}
	}
}

// TestBoundRefusals: Bind and BindPolicy refuse what Limit refuses of a
// request's limit or policy, with the same words, and a handle refuses a
// request that names another limit or policy, or names a limit to a
// policy's handle and the reverse; a key or identities the scripts
// refuse are refused as package goimpl refuses them. None writes.
func TestBoundRefusals(t *testing.T) {
	t.Parallel()
	_, rdb := newClient(t)
	lim := newLimiter(t, rdb, redislimit.Options{})
	twin, err := goimpl.New(goimpl.Options{NoSweeper: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { twin.Close() })
	quota, err := limitspec.BurstQuotaPolicy(10)
	if err != nil {
		t.Fatal(err)
	}
	other, err := limitspec.BurstQuotaPolicy(20)
	if err != nil {
		t.Fatal(err)
	}
	for _, lim2 := range []limitspec.Limit{limitspec.GCRA{Burst: 0, Rate: 10, Period: time.Second}, foreign{}, foreign{asGCRA: true},
		limitspec.FixedWindow{Limit: 5, Window: 1500 * time.Microsecond}} {
		_, err := lim.Bind(lim2)
		_, want := lim.Limit(t.Context(), limitspec.Request{Key: "u", Limit: lim2, Cost: 1})
		if !errors.Is(err, limitspec.ErrBadInput) || want == nil || err.Error() != want.Error() {
			t.Errorf("Bind(%#v): %v; want Limit's %v", lim2, err, want)
		}
	}
	for _, c := range []struct {
		name string
		bind func() error
		want string
	}{
		{"Bind(nil)", func() error { _, err := lim.Bind(nil); return err }, "a request needs a Limit or a Policy"},
		{"Bind of a typed nil", func() error { _, err := lim.Bind((*limitspec.GCRA)(nil)); return err }, "a request needs a Limit or a Policy"},
		{"BindPolicy(nil)", func() error { _, err := lim.BindPolicy(nil); return err }, "a request needs a Limit or a Policy"},
		{"BindPolicy of a zero policy", func() error { _, err := lim.BindPolicy(&limitspec.Policy{}); return err }, "a policy needs a name and limits: make it with limitspec.NewPolicy"},
	} {
		if err := noPanic(t, c.name, c.bind); !errors.Is(err, limitspec.ErrBadInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want ErrBadInput saying %q", c.name, err, c.want)
		}
	}
	b, err := lim.Bind(burst)
	if err != nil {
		t.Fatal(err)
	}
	bp, err := lim.BindPolicy(quota)
	if err != nil {
		t.Fatal(err)
	}
	boundRequestRefusals(t, b, bp, other)
	for _, req := range []limitspec.Request{{Key: "", Cost: 1, Now: at(0)}, {Key: "}x", Cost: 1, Now: at(0)}, {Key: "u", Cost: -1, Now: at(0)}} {
		_, err := b.Limit(t.Context(), req)
		req.Limit = burst
		_, want := twin.Limit(t.Context(), req)
		if !errors.Is(err, limitspec.ErrBadInput) || want == nil || err.Error() != want.Error() {
			t.Errorf("%+v: %v; want memory's %v", req, err, want)
		}
	}
	for _, ids := range []map[string]string{nil, {"user": ""}, {"user": "}u"}, {"user": "u", "ip": "1"}} {
		_, err := bp.Limit(t.Context(), limitspec.Request{IDs: ids, Cost: 1, Now: at(0)})
		_, want := twin.Limit(t.Context(), limitspec.Request{Policy: quota, IDs: ids, Cost: 1, Now: at(0)})
		if !errors.Is(err, limitspec.ErrBadInput) || want == nil || err.Error() != want.Error() {
			t.Errorf("identities %v: %v; want memory's %v", ids, err, want)
		}
	}
	if ks := keys(t, rdb); len(ks) != 0 {
		t.Errorf("refused calls left keys %v", ks)
	}
}

// boundRequestRefusals: b (bound to burst) and bp (to a policy) refuse
// requests that name another limit or policy, or a policy to b and a
// limit to bp; a request that names the bound limit or policy, or
// none, is decided.
func boundRequestRefusals(t *testing.T, b *redislimit.Bound, bp *redislimit.BoundPolicy, other *limitspec.Policy) {
	ids := map[string]string{"user": "u"}
	limitRefusals := map[string]limitspec.Request{
		"a policy":      {Key: "u", Policy: other, IDs: ids, Cost: 1},
		"another limit": {Key: "u", Limit: limitspec.GCRA{Burst: 6, Rate: 10, Period: time.Second}, Cost: 1},
		"a pointer":     {Key: "u", Limit: &burst, Cost: 1},
	}
	for name, req := range limitRefusals {
		if _, err := b.Limit(t.Context(), req); !errors.Is(err, limitspec.ErrBadInput) || !strings.Contains(err.Error(), "a request to a bound limit names") {
			t.Errorf("a bound limit, %s: %v; want ErrBadInput", name, err)
		}
	}
	policyRefusals := map[string]limitspec.Request{
		"a limit":        {Limit: burst, IDs: ids, Cost: 1},
		"another policy": {Policy: other, IDs: ids, Cost: 1},
	}
	for name, req := range policyRefusals {
		if _, err := bp.Limit(t.Context(), req); !errors.Is(err, limitspec.ErrBadInput) || !strings.Contains(err.Error(), "burst_quota: a request to a bound policy names") {
			t.Errorf("a bound policy, %s: %v; want ErrBadInput", name, err)
		}
	}
}

// TestBoundAccepts: a handle decides a request that names its own limit
// or policy, or none (a typed nil limit is none), and its result names
// the bound limit.
func TestBoundAccepts(t *testing.T) {
	t.Parallel()
	_, rdb := newClient(t)
	lim := newLimiter(t, rdb, redislimit.Options{})
	quota, err := limitspec.BurstQuotaPolicy(10)
	if err != nil {
		t.Fatal(err)
	}
	b, err := lim.Bind(burst)
	if err != nil {
		t.Fatal(err)
	}
	for i, req := range []limitspec.Request{{Key: "u", Limit: burst}, {Key: "u"}, {Key: "u", Limit: (*limitspec.GCRA)(nil)}} {
		req.Cost, req.Now = 1, at(0)
		res, err := b.Limit(t.Context(), req)
		if want := int64(4 - i); err != nil || !res.Allowed || res.Remaining != want || res.Limit != burst || res.Name != "gcra" {
			t.Errorf("%+v: %+v, %v; want gcra allowed, %d remaining", req, res, err, want)
		}
	}
	bp, err := lim.BindPolicy(quota)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []limitspec.Request{{Policy: quota}, {}, {Limit: (*limitspec.GCRA)(nil)}} {
		req.IDs, req.Cost, req.Now = map[string]string{"user": "u"}, 1, at(0)
		if res, err := bp.Limit(t.Context(), req); err != nil || !res.Allowed || len(res.Limits) != 2 {
			t.Errorf("%+v: %+v, %v; want allowed by both limits", req, res, err)
		}
	}
}

// TestBoundPolicyLimitInto: LimitInto decides as Limit does into a
// Result whose Limits it reuses, and leaves the Result as it was when it
// refuses.
func TestBoundPolicyLimitInto(t *testing.T) {
	t.Parallel()
	_, rdb := newClient(t)
	lim := newLimiter(t, rdb, redislimit.Options{})
	quota, err := limitspec.BurstQuotaPolicy(3)
	if err != nil {
		t.Fatal(err)
	}
	bp, err := lim.BindPolicy(quota)
	if err != nil {
		t.Fatal(err)
	}
	var res limitspec.Result
	var array *limitspec.LimitResult
	for i := range 5 {
		req := limitspec.Request{IDs: map[string]string{"user": "u"}, Cost: 1, Now: at(400 * int64(i))}
		if err := bp.LimitInto(t.Context(), req, &res); err != nil {
			t.Fatal(err)
		}
		req.IDs = map[string]string{"user": "v"}
		want, err := lim.Limit(t.Context(), limitspec.Request{Policy: quota, IDs: req.IDs, Cost: 1, Now: req.Now})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res, want) {
			t.Errorf("decision %d: %+v; want as Limit of another user %+v", i, res, want)
		}
		if i > 0 && &res.Limits[0] != array {
			t.Errorf("decision %d: the Limits were not decided into the array of the first", i)
		}
		array = &res.Limits[0]
	}
	if res.Allowed || res.Binding != 1 {
		t.Fatalf("the fifth decision: %+v; want denied by the daily quota of 3", res)
	}
	before := res
	if err := bp.LimitInto(t.Context(), limitspec.Request{IDs: map[string]string{"user": "u"}, Cost: -1, Now: at(0)}, &res); !errors.Is(err, limitspec.ErrBadInput) {
		t.Fatalf("cost -1: %v; want ErrBadInput", err)
	}
	if !reflect.DeepEqual(res, before) {
		t.Errorf("a refusal changed the Result: %+v; was %+v", res, before)
	}
}
