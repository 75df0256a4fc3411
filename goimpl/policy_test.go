package goimpl_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/limitspec/limitspec/goimpl"
)

// A policy decides a request by all its limits at once. burst_quota
// (spec/policies.yaml) limits each user by a gcra burst of 5 and a daily
// quota, here 3: the fourth request is denied by the quota (limit 2 of
// the policy), and the burst limit consumes nothing for it.
func ExamplePolicy() {
	p, err := goimpl.NewPolicy("burst_quota", map[string]int64{"daily.limit": 3})
	if err != nil {
		panic(err)
	}
	defer p.StopSweeper()
	alice := map[string]string{"user": "alice"}
	const t = 1_700_000_000_000
	for range 4 {
		r, err := p.Allow(alice, t, 1)
		if err != nil {
			panic(err)
		}
		fmt.Println(r.Allowed, "binding:", r.Index, "remaining:", r.Remaining, "retry:", r.RetryAfterMs,
			"burst remaining:", r.Limits[0].Remaining)
	}
	_, err = p.Allow(map[string]string{"user": ""}, t, 1)
	fmt.Println(errors.Is(err, goimpl.ErrBadInput), err)
	// Output:
	// true binding: 2 remaining: 2 retry: -1 burst remaining: 4
	// true binding: 2 remaining: 1 retry: -1 burst remaining: 3
	// true binding: 2 remaining: 0 retry: -1 burst remaining: 2
	// false binding: 2 remaining: 0 retry: 86400000 burst remaining: 2
	// true burst_quota: identity user must not be empty
}

// TestNewPolicyRefuses: each refused construction matches ErrBadInput and
// names what is wrong, with the script's words.
func TestNewPolicyRefuses(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]int64
		want   string
	}{
		{"nope", nil, `unknown policy "nope"`},
		{"burst_quota", nil, "burst_quota: missing parameter daily.limit"},
		{"burst_quota", map[string]int64{"daily.limit": 0}, "burst_quota.daily: sliding_log: parameter limit must be an integer in [1, 100000], got 0"},
		{"burst_quota", map[string]int64{"daily.limit": 3, "burst.burst": 2}, `burst_quota: unknown parameter "burst.burst"`},
	}
	for _, tt := range tests {
		_, err := goimpl.NewPolicy(tt.name, tt.params)
		if !errors.Is(err, goimpl.ErrBadInput) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewPolicy(%s, %v) = %v, want an ErrBadInput containing %q", tt.name, tt.params, err, tt.want)
		}
	}
}

// TestPolicyRefusesIdentities: a missing, unknown, empty or '}'-led
// identity is refused and changes nothing.
func TestPolicyRefusesIdentities(t *testing.T) {
	p, err := goimpl.NewPolicy("ip_user", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.StopSweeper()
	const t0 = 1_700_000_000_000
	for _, ids := range []map[string]string{
		{"ip": "10.0.0.1"},
		{"ip": "10.0.0.1", "user": "alice", "route": "/"},
		{"ip": "", "user": "alice"},
		{"ip": "}x", "user": "alice"},
	} {
		if _, err := p.Allow(ids, t0, 11); !errors.Is(err, goimpl.ErrBadInput) {
			t.Errorf("Allow(%v) = %v, want ErrBadInput", ids, err)
		}
	}
	// Nothing was written: all 10 of the second are left (ip_user's
	// limits are 10 a second, 120 a minute, 240 an hour).
	r, err := p.Allow(map[string]string{"ip": "10.0.0.1", "user": "alice"}, t0, 10)
	if err != nil || !r.Allowed {
		t.Fatalf("a cost of 10 after refusals: %+v, %v; want admitted", r, err)
	}
}
