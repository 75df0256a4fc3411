package keyed

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
)

// TestKeys: requests on one limit and key share a value; another key,
// another limit (even of equal parameters in another type) or a policy's
// other identity values do not; a policy's identity values are one key
// in any map order.
func TestKeys(t *testing.T) {
	fw := limitspec.FixedWindow{Limit: 10, Window: time.Minute}
	sw := limitspec.SlidingWindow{Limit: 10, Window: time.Minute}
	pol, err := limitspec.IPUserPolicy()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		a, b limitspec.Request
		same bool
	}{
		{"one limit and key", limitspec.Request{Key: "k", Limit: fw}, limitspec.Request{Key: "k", Limit: fw, Cost: 3}, true},
		{"another key", limitspec.Request{Key: "k", Limit: fw}, limitspec.Request{Key: "j", Limit: fw}, false},
		{"another limit", limitspec.Request{Key: "k", Limit: fw}, limitspec.Request{Key: "k", Limit: sw}, false},
		{"another amount", limitspec.Request{Key: "k", Limit: fw}, limitspec.Request{Key: "k", Limit: limitspec.FixedWindow{Limit: 11, Window: time.Minute}}, false},
		{"a policy's identities", limitspec.Request{Policy: pol, IDs: map[string]string{"ip": "1", "user": "u"}},
			limitspec.Request{Policy: pol, IDs: map[string]string{"user": "u", "ip": "1"}}, true},
		{"a policy's other identity", limitspec.Request{Policy: pol, IDs: map[string]string{"ip": "1", "user": "u"}},
			limitspec.Request{Policy: pol, IDs: map[string]string{"ip": "2", "user": "u"}}, false},
	}
	for _, tt := range tests {
		m := New[int](10, nil)
		m.With(tt.a, true, func(v *int) { *v = 1 })
		got := 0
		m.With(tt.b, false, func(v *int) {
			if v != nil {
				got = *v
			}
		})
		if (got == 1) != tt.same {
			t.Errorf("%s: shared %v, want %v", tt.name, got == 1, tt.same)
		}
	}
}

// TestForget: a map of about 64 keys holds no more than a value per
// shard beyond it, and forgets with forget; Delete forgets too.
func TestForget(t *testing.T) {
	forgot := 0
	m := New(64, func(*int) { forgot++ })
	const n = 1000
	for i := range n {
		m.With(limitspec.Request{Key: fmt.Sprint(i), Limit: limitspec.FixedWindow{Limit: 1, Window: time.Second}}, true, func(*int) {})
	}
	if got := m.Len(); got > 2*shards || got+forgot != n {
		t.Errorf("%d held, %d forgotten of %d; want at most %d held, the rest forgotten", got, forgot, n, 2*shards)
	}
	held := m.Len()
	m.Delete(limitspec.Request{Key: "never", Limit: limitspec.FixedWindow{Limit: 1, Window: time.Second}})
	if m.Len() != held {
		t.Error("Delete of a key never held changed the map")
	}
}

// TestAged: a decision as of later has its waits shortened, never below
// 0, Never kept, every other field as it was, and the decision it was
// made from untouched.
func TestAged(t *testing.T) {
	gcra := limitspec.GCRA{Burst: 1, Rate: 1, Period: time.Second}
	denied := limitspec.Result{RetryAfter: 300 * time.Millisecond, Binding: 1, Side: limitspec.Primary, Limits: []limitspec.LimitResult{
		{Name: "a", Limit: gcra, Allowed: true, Quota: 5, Remaining: 4, ResetAfter: 200 * time.Millisecond},
		{Name: "b", Limit: gcra, Quota: 1, RetryAfter: 300 * time.Millisecond, ResetAfter: time.Second},
	}}
	never := limitspec.Result{RetryAfter: limitspec.Never, Limits: []limitspec.LimitResult{{Quota: 1, RetryAfter: limitspec.Never, ResetAfter: time.Second}}}
	for _, tt := range []struct {
		name  string
		res   limitspec.Result
		since time.Duration
		want  limitspec.Result
	}{
		{"now", denied, 0, denied},
		{"later", denied, 250 * time.Millisecond, limitspec.Result{RetryAfter: 50 * time.Millisecond, Binding: 1, Side: limitspec.Primary, Limits: []limitspec.LimitResult{
			{Name: "a", Limit: gcra, Allowed: true, Quota: 5, Remaining: 4, ResetAfter: 0},
			{Name: "b", Limit: gcra, Quota: 1, RetryAfter: 50 * time.Millisecond, ResetAfter: 750 * time.Millisecond},
		}}},
		{"past every wait", denied, time.Hour, limitspec.Result{Binding: 1, Side: limitspec.Primary, Limits: []limitspec.LimitResult{
			{Name: "a", Limit: gcra, Allowed: true, Quota: 5, Remaining: 4},
			{Name: "b", Limit: gcra, Quota: 1},
		}}},
		{"never", never, 400 * time.Millisecond, limitspec.Result{RetryAfter: limitspec.Never, Limits: []limitspec.LimitResult{{Quota: 1, RetryAfter: limitspec.Never, ResetAfter: 600 * time.Millisecond}}}},
	} {
		before := slices.Clone(tt.res.Limits)
		got := Aged(tt.res, tt.since)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
		if !reflect.DeepEqual(tt.res.Limits, before) {
			t.Errorf("%s: the decision aged changed to %+v", tt.name, tt.res.Limits)
		}
	}
}

// resetter counts its resets.
type resetter struct{ resets int }

func (*resetter) Limit(context.Context, limitspec.Request) (limitspec.Result, error) {
	return limitspec.Result{}, nil
}

func (r *resetter) Reset(context.Context, limitspec.Request) error { r.resets++; return nil }

// plainLimiter has no Reset.
type plainLimiter struct{}

func (plainLimiter) Limit(context.Context, limitspec.Request) (limitspec.Result, error) {
	return limitspec.Result{}, nil
}

// TestResetThrough: a reset counts, forgets the key's value and resets
// the primary; a primary without Reset is refused and nothing changes.
func TestResetThrough(t *testing.T) {
	ctx := context.Background()
	req := limitspec.Request{Key: "k"}
	m := New[int](10, nil)
	m.With(req, true, func(v *int) { *v = 7 })
	var resets atomic.Uint64
	err := m.ResetThrough(ctx, plainLimiter{}, req, "wrapper", &resets)
	if !errors.Is(err, limitspec.ErrBadInput) || err.Error() != "wrapper: the primary limiter has no reset" || resets.Load() != 0 || m.Len() != 1 {
		t.Fatalf("a primary without Reset: %v, %d resets, %d values; want ErrBadInput naming the wrapper, nothing changed", err, resets.Load(), m.Len())
	}
	r := &resetter{}
	if err := m.ResetThrough(ctx, r, req, "wrapper", &resets); err != nil || resets.Load() != 1 || m.Len() != 0 || r.resets != 1 {
		t.Fatalf("a primary with Reset: %v, %d counted, %d values, %d resets; want nil, 1, 0, 1", err, resets.Load(), m.Len(), r.resets)
	}
}
