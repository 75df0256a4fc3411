package limitcall

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/kit"
)

// TestMillis: ms as a Duration, and a wait past what a Duration holds is
// Never.
func TestMillis(t *testing.T) {
	maxMs := int64(limitspec.Never / time.Millisecond) // 9223372036854
	tests := []struct {
		ms   int64
		want time.Duration
	}{
		{0, 0},
		{1500, 1500 * time.Millisecond},
		{maxMs, time.Duration(maxMs) * time.Millisecond},
		{maxMs + 1, limitspec.Never},
		{1 << 53, limitspec.Never},
	}
	for _, tt := range tests {
		if got := Millis(tt.ms); got != tt.want {
			t.Errorf("Millis(%d) = %v, want %v", tt.ms, got, tt.want)
		}
	}
}

// TestLimitResult: a reply's fields as a limit's result; retry_after_ms
// is 0 when admitted, Never when a denial replies -1.
func TestLimitResult(t *testing.T) {
	lim := limitspec.GCRA{Burst: 5, Rate: 1, Period: time.Second}
	tests := []struct {
		name  string
		reply kit.Reply
		want  limitspec.LimitResult
	}{
		{"admitted", kit.Reply{Allowed: true, Limit: 5, Remaining: 4, RetryAfterMs: -1, ResetAfterMs: 1000, DelayMs: 250, Tier: 2},
			limitspec.LimitResult{Allowed: true, Quota: 5, Remaining: 4, ResetAfter: time.Second, Delay: 250 * time.Millisecond, Tier: 2}},
		{"denied, for a while", kit.Reply{Limit: 5, RetryAfterMs: 1500, ResetAfterMs: 5000},
			limitspec.LimitResult{Quota: 5, RetryAfter: 1500 * time.Millisecond, ResetAfter: 5 * time.Second}},
		{"denied, never", kit.Reply{Limit: 5, RetryAfterMs: -1, ResetAfterMs: 5000},
			limitspec.LimitResult{Quota: 5, RetryAfter: limitspec.Never, ResetAfter: 5 * time.Second}},
	}
	for _, tt := range tests {
		tt.want.Name, tt.want.Limit = "burst", lim
		if got := LimitResult("burst", lim, tt.reply); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
	res := Result(kit.Reply{Allowed: false, RetryAfterMs: 700, DelayMs: 0}, 1, []limitspec.LimitResult{{}, {}})
	if res.Allowed || res.RetryAfter != 700*time.Millisecond || res.Binding != 1 || len(res.Limits) != 2 || res.Side != limitspec.Primary {
		t.Errorf("Result = %+v, want denied, retry 700ms, binding 1, two limits, primary", res)
	}
}

// TestRefusals: kit.NotA and CheckRule refuse with errors matching
// ErrBadInput that say why.
func TestRefusals(t *testing.T) {
	var nilGCRA *limitspec.GCRA
	p, err := limitspec.BurstQuotaPolicy(3)
	if err != nil {
		t.Fatal(err)
	}
	lim := limitspec.GCRA{Burst: 1, Rate: 1, Period: time.Second}
	tests := []struct {
		name string
		err  error
		want string // "" for no error
	}{
		{"kit.NotA nil", kit.NotA("gcra", nil), "gcra: no limit (a nil <nil>)"},
		{"kit.NotA typed nil", kit.NotA("gcra", nilGCRA), "gcra: no limit (a nil *limitspec.GCRA)"},
		{"kit.NotA another type", kit.NotA("gcra", limitspec.FixedWindow{}), "gcra: limitspec.FixedWindow is not a limit of gcra"},
		{"a limit", CheckRule(limitspec.Request{Limit: lim}), ""},
		{"a policy", CheckRule(limitspec.Request{Policy: p}), ""},
		{"a policy and a typed nil limit", CheckRule(limitspec.Request{Policy: p, Limit: nilGCRA}), ""},
		{"neither", CheckRule(limitspec.Request{Key: "k"}), "a request needs a Limit or a Policy (none was given)"},
		{"a typed nil limit", CheckRule(limitspec.Request{Key: "k", Limit: nilGCRA}), "a request needs a Limit or a Policy (none was given)"},
		{"both", CheckRule(limitspec.Request{Limit: lim, Policy: p}), "a request names a Limit or a Policy, not both"},
		{"a zero policy", CheckRule(limitspec.Request{Policy: &limitspec.Policy{}}), "a policy needs a name and limits: make it with limitspec.NewPolicy"},
	}
	for _, tt := range tests {
		switch {
		case tt.want == "" && tt.err != nil:
			t.Errorf("%s: %v, want no error", tt.name, tt.err)
		case tt.want == "":
		case tt.err == nil || tt.err.Error() != tt.want || !errors.Is(tt.err, limitspec.ErrBadInput):
			t.Errorf("%s: %v, want %q matching ErrBadInput", tt.name, tt.err, tt.want)
		}
	}
}

// TestPolicyKeys: each limit's hash tag is its identity's value or its
// constant; identities that are missing, unknown, empty or begin with '}'
// are refused.
func TestPolicyKeys(t *testing.T) {
	p, err := limitspec.UserGlobalPolicy(100) // user: identity user; global: constant "global"
	if err != nil {
		t.Fatal(err)
	}
	keys, err := PolicyKeys(p, map[string]string{"user": "alice"})
	if want := []string{"alice", "global"}; err != nil || !slices.Equal(keys, want) {
		t.Errorf("PolicyKeys = %v, %v; want %v", keys, err, want)
	}
	for _, tt := range []struct {
		ids  map[string]string
		want string
	}{
		{nil, "user_global: missing identity user"},
		{map[string]string{"user": "alice", "ip": "10.0.0.1"}, `user_global: unknown identity "ip"`},
		{map[string]string{"user": ""}, "user_global: identity user must not be empty"},
		{map[string]string{"user": "}x"}, "user_global: identity user must not begin with '}'"},
	} {
		_, err := PolicyKeys(p, tt.ids)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, limitspec.ErrBadInput) {
			t.Errorf("PolicyKeys(%v) = %v, want an ErrBadInput starting %q", tt.ids, err, tt.want)
		}
	}
}
