package oracle

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"
)

// TestGCRAIsTokenBucket: the contract says gcra with burst B, rate R,
// period P decides exactly as token_bucket with capacity B, refill R per P.
// The two models here are written independently (a TAT against a token
// level), so agreeing on random traces is a real check of both.
func TestGCRAIsTokenBucket(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := 0; trial < 200; trial++ {
		b, r, p := rng.Int63n(20)+1, rng.Int63n(50)+1, rng.Int63n(5000)+1
		g, err := New("gcra", map[string]int64{"burst": b, "rate": r, "period_ms": p})
		if err != nil {
			t.Fatal(err)
		}
		tb, err := New("token_bucket", map[string]int64{"capacity": b, "refill_tokens": r, "refill_ms": p})
		if err != nil {
			t.Fatal(err)
		}
		now := int64(1700000000000)
		for i := 0; i < 300; i++ {
			now += rng.Int63n(p/2+2) - rng.Int63n(3)*int64(rng.Intn(2))
			key, cost := []string{"a", "b"}[rng.Intn(2)], rng.Int63n(b+2)
			x, errX := g.Decide(key, now, cost, nil)
			y, errY := tb.Decide(key, now, cost, nil)
			if x != y || errX != nil || errY != nil {
				t.Fatalf("burst %d rate %d period %d, step %d (t %d, %s, cost %d): gcra %+v %v, token_bucket %+v %v",
					b, r, p, i, now, key, cost, x, errX, y, errY)
			}
		}
	}
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name   string
		alg    string
		params map[string]int64
	}{
		{"unknown algorithm", "sliding_door", map[string]int64{}},
		{"missing", "gcra", map[string]int64{"burst": 1, "rate": 1}},
		{"unknown parameter", "fixed_window", map[string]int64{"limit": 1, "window_ms": 1, "x": 1}},
		{"below", "fixed_window", map[string]int64{"limit": 0, "window_ms": 1}},
		{"above", "token_bucket", map[string]int64{"capacity": 1, "refill_tokens": 1e12 + 1, "refill_ms": 1}},
		{"joint", "gcra", map[string]int64{"burst": 1e6, "rate": 1, "period_ms": 1e9 + 1}},
	}
	for _, tt := range tests {
		if _, err := New(tt.alg, tt.params); !errors.Is(err, ErrBadInput) {
			t.Errorf("%s: New = %v, want ErrBadInput", tt.name, err)
		}
	}
	if _, err := New("gcra", map[string]int64{"burst": 1e6, "rate": 9999, "period_ms": 1e9}); !errors.Is(err, ErrBadInput) {
		t.Errorf("more than 10^11 ms from empty to full: New = %v, want ErrBadInput", err)
	}
	m, err := New("gcra", map[string]int64{"burst": 1e6, "rate": 1e4, "period_ms": 1e9})
	if err != nil {
		t.Fatalf("the joint bound itself is allowed: %v", err)
	}
	for _, c := range []struct {
		key       string
		now, cost int64
	}{{"", 0, 1}, {"k", -1, 1}, {"k", 1<<45 + 1, 1}, {"k", 0, -1}, {"k", 0, 1 << 53}} {
		if _, err := m.Decide(c.key, c.now, c.cost, nil); !errors.Is(err, ErrBadInput) {
			t.Errorf("Decide(%q, %d, %d) = %v, want ErrBadInput", c.key, c.now, c.cost, err)
		}
	}
}

// TestClass checks the classes of docs/semantics.md, "Errors": a refused
// parameter, key or cost is BADINPUT; a wrong type, reported by the
// caller, WRONGTYPE.
func TestClass(t *testing.T) {
	_, badParam := New("gcra", map[string]int64{"burst": 0, "rate": 1, "period_ms": 1000})
	m, err := New("gcra", map[string]int64{"burst": 1, "rate": 1, "period_ms": 1000})
	if err != nil {
		t.Fatal(err)
	}
	_, badCost := m.Decide("k", 1000, -1, nil)
	_, badKey := m.Decide("", 1000, 1, nil)
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, ""}, {badParam, "BADINPUT"}, {badCost, "BADINPUT"}, {badKey, "BADINPUT"},
		{ErrWrongType, "WRONGTYPE"}, {fmt.Errorf("planted: %w", ErrWrongType), "WRONGTYPE"},
	} {
		if got := Class(tt.err); got != tt.want {
			t.Errorf("Class(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
