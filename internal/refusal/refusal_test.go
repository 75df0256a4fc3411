package refusal

import (
	"errors"
	"testing"

	"github.com/limitspec/limitspec"
)

// TestConfig: a refusal reads "pkg: misconfigured: what", matches
// ErrMisconfigured, and matches what it wraps, and nothing else.
func TestConfig(t *testing.T) {
	cause := &limitspec.InputError{Msg: "gcra: parameter rate must be an integer in [1, 1000000000000], got 0"}
	for _, tt := range []struct {
		name     string
		err      error
		msg      string
		matches  []error
		excludes []error
	}{
		{"plain", Config("lease", "Options.Size must be in [1, 2^53−1], got %d", 0),
			"lease: misconfigured: Options.Size must be in [1, 2^53−1], got 0",
			[]error{limitspec.ErrMisconfigured}, []error{limitspec.ErrBadInput}},
		{"wrapping", Config("httplimit", "Options: %w", cause),
			"httplimit: misconfigured: Options: gcra: parameter rate must be an integer in [1, 1000000000000], got 0",
			[]error{limitspec.ErrMisconfigured, limitspec.ErrBadInput, cause}, []error{limitspec.ErrUnavailable}},
	} {
		if got := tt.err.Error(); got != tt.msg {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.msg)
		}
		for _, target := range tt.matches {
			if !errors.Is(tt.err, target) {
				t.Errorf("%s: does not match %v", tt.name, target)
			}
		}
		for _, target := range tt.excludes {
			if errors.Is(tt.err, target) {
				t.Errorf("%s: matches %v", tt.name, target)
			}
		}
	}
}
