package standin

import "strings"

// replyError is an error reply: its text is what a script sees in the
// err field of the table redis.pcall returns.
type replyError string

func (e replyError) Error() string { return string(e) }

// The errors, with Redis's own texts (Redis 7.0).
const (
	errWrongType  replyError = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNotInt     replyError = "ERR value is not an integer or out of range"
	errNotFloat   replyError = "ERR value is not a valid float"
	errRange      replyError = "ERR min or max is not a float"
	errSyntax     replyError = "ERR syntax error"
	errLimitAlone replyError = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
)

// errExpire is the error of SET PX or PSETEX given a time of 0 ms or less.
func errExpire(cmd string) error {
	return replyError("ERR invalid expire time in '" + strings.ToLower(cmd) + "' command")
}

// errArity is the error of a command given too few or too many
// arguments.
func errArity(cmd string) error {
	return replyError("ERR wrong number of arguments for '" + strings.ToLower(cmd) + "' command")
}

// errUnknown is the error of a command the stand-in does not have.
func errUnknown(cmd string) error {
	return replyError("ERR unknown command '" + cmd + "'")
}

// errUnsupported is the error of an option of a supported command that
// the stand-in does not implement, where Redis would accept it: the one
// error Redis never gives.
func errUnsupported(cmd, option string) error {
	return replyError("ERR the stand-in does not support " + cmd + " " + strings.ToUpper(option))
}
