package gen

import (
	"fmt"
	"strings"
)

// The texts of refused input, the same in every target. Each target puts
// the algorithm name and ": " in front; Lua also the BADINPUT code.

const msgKeyEmpty = "key must not be empty"

// msgKeyBrace refuses a key whose first byte is "}": the hash tag of
// "{" + key + "}" would be empty, so Redis Cluster would hash each key of
// one call on its own and could put them in different slots.
const msgKeyBrace = "key must not begin with '}' (its hash tag would be empty)"

// msgArgCount is the refusal of a script called with too few or too many
// arguments; got follows.
func msgArgCount(names []string, required int) string {
	list := strings.Join(names[:required], " ")
	if required < len(names) {
		list += " [" + strings.Join(names[required:], " ") + "]"
		return fmt.Sprintf("expected %d to %d arguments (%s), got ", required, len(names), list)
	}
	return fmt.Sprintf("expected %d arguments (%s), got ", required, list)
}

func msgMissing(p *Param) string { return "missing parameter " + p.Name }

// msgParamPrefix is followed by the value given.
func msgParamPrefix(p *Param) string {
	return fmt.Sprintf("parameter %s must be an integer in [%d, %d], got ", p.Name, p.Min, p.Max)
}

// msgInputPrefix is followed by the value given.
func msgInputPrefix(in *Input) string {
	return fmt.Sprintf("%s must be an integer in [%d, %d], got ", in.Arg, in.Min, in.Max)
}

// msgStrPrefix is followed by the length given.
func msgStrPrefix(in *StrInput) string {
	return fmt.Sprintf("%s must be at most %d bytes, got ", in.Name, in.MaxLen)
}
