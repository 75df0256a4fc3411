package limitcall

import (
	"fmt"
	"slices"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/kit"
)

// holdOps are the operations of a holding policy (docs/semantics.md,
// "Holds"), as the holds script names them.
var holdOps = []string{"decide", "reserve", "commit", "release", "renew"}

// CheckHoldOp refuses an operation on a holding policy's holds as the
// holds script does, in its order: op, then id (none for a decision, 1
// to idMax bytes otherwise), then holdMs (1 to msMax for reserve and
// renew, else 0), then the costs the op takes (at least 1 on every
// limit to reserve, 0 to release or renew).
func CheckHoldOp(policy, op, id string, costs []int64, holdMs, idMax, msMax int64) error {
	timed := op == "reserve" || op == "renew"
	switch {
	case !slices.Contains(holdOps, op):
		return kit.BadInput("%s: op must be decide, reserve, commit, release or renew, got %s", policy, Clip(op))
	case op == "decide" && id != "":
		return kit.BadInput("%s: a decide takes no id, got %s", policy, Clip(id))
	case op != "decide" && (len(id) < 1 || int64(len(id)) > idMax):
		return kit.BadInput("%s: id must be 1 to %d bytes, got %d", policy, idMax, len(id))
	case timed && (holdMs < 1 || holdMs > msMax):
		return kit.BadInput("%s: hold_ms must be an integer in [1, %d] for %s, got %d", policy, msMax, op, holdMs)
	case !timed && holdMs != 0:
		return kit.BadInput("%s: hold_ms must be 0 for %s, got %d", policy, op, holdMs)
	}
	for _, c := range costs {
		switch {
		case op == "reserve" && c < 1:
			return kit.BadInput("%s: a reserve holds at least 1, got cost 0", policy)
		case (op == "release" || op == "renew") && c != 0:
			return kit.BadInput("%s: cost must be 0 for %s, got %d", policy, op, c)
		}
	}
	return nil
}

// Costs is req's cost for each limit of its policy p, in order, written
// into buf (grown as needed) and checked: a unit of req.Costs that no
// limit counts, then a cost outside [0, COST_MAX], refused as the
// scripts refuse them (docs/semantics.md, "Units").
func Costs(p *limitspec.Policy, req limitspec.Request, buf []int64) ([]int64, error) {
	costs, err := p.Costs(req, buf)
	if err != nil {
		return costs, err
	}
	for _, c := range costs {
		if c < 0 || c > kit.CostMax {
			return costs, kit.BadInput("%s: cost must be an integer in [0, %d], got %d", p.Name(), int64(kit.CostMax), c)
		}
	}
	return costs, nil
}

// CheckLimitCosts refuses amounts by unit on a request of a single limit,
// which counts its Cost (docs/semantics.md, "Units").
func CheckLimitCosts(req limitspec.Request) error {
	if len(req.Costs) > 0 && req.Policy == nil {
		return kit.BadInput("Costs name the units of a policy's limits; a Limit counts Cost")
	}
	return nil
}

// CheckHolding refuses an operation on holds whose request names no
// holding policy (a Limit, or a policy made without
// limitspec.Policy.WithHolds).
func CheckHolding(p *limitspec.Policy) error {
	switch {
	case p == nil:
		return kit.BadInput("holds are kept by a holding policy: give Request.Policy, made with Policy.WithHolds (a single limit is a policy of one)")
	case !p.Holds():
		return kit.BadInput("%s: holds are kept by a holding policy: make it with Policy.WithHolds", p.Name())
	}
	return nil
}

// NoHold is the refusal of a commit, release or renew of an id that
// holds nothing live on any limit of policy, nor ended anything within
// reach by that operation, with the holds script's message.
func NoHold(policy, id string) error {
	return NoHoldError(fmt.Sprintf("%s: id %s holds nothing: it never held, its hold ended, or another operation ended it", policy, Clip(id)))
}

// NoHoldError is an error of message msg matching limitspec.ErrNoHold.
func NoHoldError(msg string) error { return &noHoldError{msg} }

type noHoldError struct{ msg string }

func (e *noHoldError) Error() string { return e.msg }

// Is reports whether target is limitspec.ErrNoHold.
func (e *noHoldError) Is(target error) bool { return target == limitspec.ErrNoHold }

// Clip is s cut to 32 bytes, for an error message, as the scripts cut it.
func Clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

// HeldOtherwise is the refusal of a reserve of id, which holds held on
// limit where the call asks for want, with the holds script's message.
func HeldOtherwise(policy, id, limit string, held, want int64) error {
	return kit.BadInput("%s: id %s holds %d on %s, not %d", policy, Clip(id), held, limit, want)
}

// HeldPartly is the refusal of a reserve of id, which holds on the limit
// heldOn but not on notOn, with the holds script's message.
func HeldPartly(policy, id, heldOn, notOn string) error {
	return kit.BadInput("%s: id %s holds on %s but nothing on %s: a hold id names one call's hold", policy, Clip(id), heldOn, notOn)
}
