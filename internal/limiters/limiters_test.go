package limiters_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limiters"
)

// plain decides nothing and implements neither Checker nor Resetter.
type plain struct{}

func (plain) Limit(context.Context, limitspec.Request) (limitspec.Result, error) {
	return limitspec.Result{}, nil
}

// checking answers Check with its verdict and counts its resets.
type checking struct {
	plain
	verdict error
	resets  int
}

func (c *checking) Check(limitspec.Request) error { return c.verdict }

func (c *checking) Reset(context.Context, limitspec.Request) error {
	c.resets++
	return nil
}

func TestCheck(t *testing.T) {
	refused := errors.New("refused by the limiter")
	valid := limitspec.FixedWindow{Limit: 10, Window: time.Second}
	invalid := limitspec.FixedWindow{Limit: 0, Window: time.Second}
	tests := []struct {
		name    string
		l       limitspec.Limiter
		limit   limitspec.Limit
		want    error // nil, refused, or limitspec.ErrBadInput
		wantNil bool
	}{
		{"no Checker, a valid limit", plain{}, valid, nil, true},
		{"no Checker, an invalid limit: Validate's error", plain{}, invalid, limitspec.ErrBadInput, false},
		{"no Checker, no limit (a policy)", plain{}, nil, nil, true},
		{"a Checker's verdict, whatever the limit", &checking{verdict: refused}, valid, refused, false},
		{"a Checker that accepts", &checking{}, invalid, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := limiters.Check(tt.l, limitspec.Request{Key: "k", Limit: tt.limit})
			if tt.wantNil != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("Check: %v; want %v", err, tt.want)
			}
		})
	}
}

// TestOutage: what a fallback decides around, and what it must not.
func TestOutage(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{&limitspec.InputError{Msg: "gcra: cost must be ..."}, false},
		{fmt.Errorf("redislimit: %w", limitspec.ErrMisconfigured), false},
		{fmt.Errorf("redislimit: %w: EOF", limitspec.ErrUnavailable), true},
		{context.DeadlineExceeded, true},
		{fmt.Errorf("%w: WRONGTYPE", limitspec.ErrBadState), true},
	}
	for _, tt := range tests {
		if got := limiters.Outage(tt.err); got != tt.want {
			t.Errorf("Outage(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestKeyInfix: a policy's limit's keys carry its name, not its
// policy's.
func TestKeyInfix(t *testing.T) {
	p, err := limitspec.UserGlobalPolicy(100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, pl := range p.Limits() {
		got = append(got, limiters.KeyInfix(pl))
	}
	if want := []string{":user", ":global"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("KeyInfix of %s's limits = %q, want %q", p.Name(), got, want)
	}
}

// TestIDs: the ids of one IDs follow each other under its label and
// prefix; two IDs of one label share none.
func TestIDs(t *testing.T) {
	a, b := limiters.NewIDs("fallback-payment"), limiters.NewIDs("fallback-payment")
	first, second := a.Next(), a.Next()
	prefix, n, ok := strings.Cut(first[len("fallback-payment:"):], ":")
	if !strings.HasPrefix(first, "fallback-payment:") || !ok || len(prefix) != 16 || n != "1" {
		t.Errorf("first id %q; want fallback-payment:<16 hex digits>:1", first)
	}
	if want := first[:len(first)-1] + "2"; second != want {
		t.Errorf("second id %q; want %q", second, want)
	}
	if other := b.Next(); other == first {
		t.Errorf("two IDs made the same id %q", other)
	}
}
