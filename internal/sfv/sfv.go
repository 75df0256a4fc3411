// Package sfv writes the Structured Field values (RFC 9651) of the
// RateLimit header fields, as package httplimit and the rate limit
// service (module rls) send them: Integers, Strings and waits in whole
// seconds, integer arithmetic only.
package sfv

import (
	"strconv"
	"strings"
	"time"
)

// IntMax is the largest Integer a Structured Field holds (RFC 9651,
// section 3.3.1); larger values are sent as it.
const IntMax = 999_999_999_999_999

// Int formats n as a Structured Field Integer, clamped to [0, IntMax].
func Int(n int64) string {
	return strconv.FormatInt(min(max(n, 0), IntMax), 10)
}

// Seconds is d in whole seconds, rounded up; 0 for d ≤ 0. No overflow
// for any Duration (limitspec.Never included).
func Seconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return s
}

// String formats s as a Structured Field String (RFC 9651, section
// 3.3.3): quoted, '"' and '\' escaped; a byte outside printable ASCII,
// which a String cannot hold, becomes '?'.
func String(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
