package gen

import "fmt"

// The texts of refused input, the same in every target. Each target puts
// the algorithm name and ": " in front; Lua also the BADINPUT code.

const msgKeyEmpty = "key must not be empty"

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
