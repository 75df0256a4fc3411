package standin

import (
	"errors"
	"strings"
)

// The errors, with Redis's own texts (Redis 7.0), but for errUnsupported,
// which Redis never gives.
var (
	errWrongType  = errors.New("WRONGTYPE Operation against a key holding the wrong kind of value")
	errNotInt     = errors.New("ERR value is not an integer or out of range")
	errNotFloat   = errors.New("ERR value is not a valid float")
	errRange      = errors.New("ERR min or max is not a float")
	errSyntax     = errors.New("ERR syntax error")
	errSetExpire  = errors.New("ERR invalid expire time in 'set' command")
	errLimitAlone = errors.New("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
)

// errArity is the error of a command given too few or too many
// arguments.
func errArity(cmd string) error {
	return errors.New("ERR wrong number of arguments for '" + strings.ToLower(cmd) + "' command")
}

// errUnknown is the error of a command the stand-in does not have.
func errUnknown(cmd string) error {
	return errors.New("ERR unknown command '" + cmd + "'")
}

// errUnsupported is the error of an option of a supported command that
// the stand-in does not implement (Redis would accept it).
func errUnsupported(cmd, option string) error {
	return errors.New("ERR the stand-in does not support " + cmd + " " + strings.ToUpper(option))
}
