package httplimit

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/limitspec/limitspec"
)

// sfIntMax is the largest Integer a Structured Field holds (RFC 9651,
// section 3.3.1); larger values are sent as it.
const sfIntMax = 999_999_999_999_999

// ceilSeconds is d in whole seconds, rounded up; 0 for d ≤ 0. Integer
// arithmetic only, and no overflow for goimpl.Never.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return s
}

// sfInt formats n as a Structured Field Integer, clamped to [0, sfIntMax].
func sfInt(n int64) string {
	return strconv.FormatInt(min(max(n, 0), sfIntMax), 10)
}

// sfString formats s as a Structured Field String (RFC 9651, section
// 3.3.3): quoted, '"' and '\' escaped; a byte outside printable ASCII,
// which a String cannot hold, becomes '?'.
func sfString(s string) string {
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

// setHeaders sets the RateLimit-Policy and RateLimit fields of res's
// limits, in order, and with Options.LegacyHeaders the X-RateLimit-*
// fields of the binding limit; a result without limits sets none.
func (m *Middleware) setHeaders(h http.Header, res limitspec.Result) {
	if len(res.Limits) == 0 {
		return
	}
	policies := make([]string, len(res.Limits))
	limits := make([]string, len(res.Limits))
	for i, q := range res.Limits {
		name := sfString(m.quotaName(q.Name))
		policies[i] = name + ";q=" + sfInt(q.Limit)
		if w := ceilSeconds(q.Window); w > 0 {
			policies[i] += ";w=" + sfInt(w)
		}
		limits[i] = name + ";r=" + sfInt(q.Remaining) + ";t=" + sfInt(ceilSeconds(q.ResetAfter()))
	}
	h.Set("RateLimit-Policy", strings.Join(policies, ", "))
	h.Set("RateLimit", strings.Join(limits, ", "))
	if m.opts.LegacyHeaders {
		h.Set("X-RateLimit-Limit", sfInt(res.Limit))
		h.Set("X-RateLimit-Remaining", sfInt(res.Remaining))
		h.Set("X-RateLimit-Reset", sfInt(ceilSeconds(res.ResetAfter())))
	}
}

// quotaName is a quota's name in the header fields.
func (m *Middleware) quotaName(name string) string {
	if m.opts.QuotaName != nil {
		return m.opts.QuotaName(name)
	}
	return name
}
