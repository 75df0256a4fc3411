package httplimit

import "strings"

// forwardedFor returns the for= value of each element of one Forwarded
// field line (RFC 7239, section 4), unquoted, in order; "" for an element
// without one or that does not parse (a pair without "=", an unterminated
// or misplaced quote, for= twice), so that the walk stops there.
func forwardedFor(line string) []string {
	var out []string
	for _, elem := range splitQuoted(line, ',') {
		out = append(out, elementFor(elem))
	}
	return out
}

// elementFor is the unquoted for= value of one forwarded-element, or "".
func elementFor(elem string) string {
	var found string
	seen := false
	for _, pair := range splitQuoted(elem, ';') {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue // forwarded-element allows empty pairs
		}
		name, value, ok := strings.Cut(pair, "=")
		if !ok {
			return ""
		}
		if !strings.EqualFold(strings.TrimSpace(name), "for") {
			continue
		}
		v, ok := unquote(strings.TrimSpace(value))
		if !ok || seen {
			return ""
		}
		found, seen = v, true
	}
	return found
}

// unquote returns a token as it is, or a quoted-string's content with its
// quoted-pairs resolved; ok is false for a malformed quoted string.
func unquote(v string) (string, bool) {
	if !strings.HasPrefix(v, `"`) {
		return v, !strings.ContainsAny(v, "\"\\")
	}
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			if i+1 >= len(v) {
				return "", false
			}
			i++
			b.WriteByte(v[i])
		case '"':
			return b.String(), i == len(v)-1
		default:
			b.WriteByte(c)
		}
	}
	return "", false // unterminated
}

// splitQuoted splits s at sep outside quoted strings (with their
// backslash escapes).
func splitQuoted(s string, sep byte) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
