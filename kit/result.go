package kit

import (
	"fmt"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limiters"
)

// BadInput is an error matching limitspec.ErrBadInput with the message
// format makes.
func BadInput(format string, args ...any) error {
	return &limitspec.InputError{Msg: fmt.Sprintf(format, args...)}
}

// NotA refuses lim, given for the algorithm alg: nil, or a limit of
// another type.
func NotA(alg string, lim limitspec.Limit) error {
	if limiters.IsNil(lim) {
		return BadInput("%s: no limit (a nil %T)", alg, lim)
	}
	return BadInput("%s: %T is not a limit of %s", alg, lim, alg)
}

// MsgInFlight refuses the decision of an in-flight limit
// (limitspec.InFlight: its decision writes nothing) alone or in a policy
// without holds, where it would admit every request: the text the
// scripts give after "<algorithm>: " (docs/semantics.md, "Holds").
const MsgInFlight = "an in-flight limit counts only the holds of a holding policy: " +
	"decided alone, or in a policy without holds, it writes nothing and would admit every request"
