// Package refusal is how every constructor of the module refuses a
// configuration it cannot work with: one error class,
// limitspec.ErrMisconfigured, and one message, naming the package and
// what is wrong ("lease: misconfigured: Options.Size must be in ...").
// It knows only the contract, package limitspec, so that the adapters
// (fallback, lease, denials, httplimit) may import it.
package refusal

import (
	"fmt"

	"github.com/limitspec/limitspec"
)

// Config is pkg's refusal of its configuration, what is wrong said by
// format and args: an error reading "pkg: misconfigured: what", matching
// limitspec.ErrMisconfigured and every error that format wraps with %w.
func Config(pkg, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %w", pkg, limitspec.ErrMisconfigured, fmt.Errorf(format, args...))
}
