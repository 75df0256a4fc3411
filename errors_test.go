package limitspec_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/limitspec/limitspec"
)

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
		if got := limitspec.Outage(tt.err); got != tt.want {
			t.Errorf("Outage(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
