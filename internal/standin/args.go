package standin

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The parsing of arguments, as Redis parses them.

// parseInt parses an integer argument as Redis's string2ll does: an
// optional '-' and digits, without '+', spaces, leading zeros or "-0".
func parseInt(s string) (int64, error) {
	if s == "0" {
		return 0, nil
	}
	d := strings.TrimPrefix(s, "-")
	if d == "" || d[0] < '1' || d[0] > '9' {
		return 0, errNotInt
	}
	for i := 1; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, errNotInt
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errNotInt
	}
	return n, nil
}

// parseIndexes parses two integers: the start and stop of LRANGE, LTRIM,
// ZRANGE and ZREMRANGEBYRANK, LIMIT's offset and count.
func parseIndexes(start, stop string) (from, to int64, err error) {
	from, err1 := parseInt(start)
	to, err2 := parseInt(stop)
	if err1 != nil || err2 != nil {
		return 0, 0, errNotInt
	}
	return from, to, nil
}

// span applies Redis's index rules to a sequence of n elements: negative
// indexes count from the end; ok is false for an empty range.
func span(start, stop int64, n int) (from, to int, ok bool) {
	l := int64(n)
	if start < 0 {
		start += l
	}
	if stop < 0 {
		stop += l
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= l {
		return 0, 0, false
	}
	if stop >= l {
		stop = l - 1
	}
	return int(start), int(stop), true
}

// strtod parses the whole of s as C's strtod would a number with nothing
// after it: decimal or hexadecimal (0x, with or without a 'p' exponent),
// inf, infinity or nan in any case, with an optional sign. overflow and
// underflow report a result that strtod gives with ERANGE (±Inf, 0).
func strtod(s string) (f float64, ok, overflow, underflow bool) {
	if strings.ContainsRune(s, '_') { // Go's ParseFloat allows some; C none
		return 0, false, false, false
	}
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	hex := len(body) > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')
	mant := body
	if hex {
		mant = body[2:]
		if i := strings.IndexAny(mant, "pP"); i >= 0 {
			mant = mant[:i]
		} else {
			s += "p0" // Go requires the binary exponent; C does not
		}
	} else if i := strings.IndexAny(mant, "eE"); i >= 0 {
		mant = mant[:i]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
			return f, true, true, false
		}
		return 0, false, false, false
	}
	if f == 0 && !math.IsNaN(f) {
		nonzero := "123456789"
		if hex {
			nonzero += "abcdefABCDEF"
		}
		underflow = strings.ContainsAny(mant, nonzero)
	}
	return f, true, false, underflow
}

// parseScore parses a ZADD score as Redis's string2d: the whole string, no
// leading space, neither NaN nor out of range.
func parseScore(s string) (float64, error) {
	if s == "" || isSpace(s[0]) {
		return 0, errNotFloat
	}
	f, ok, over, under := strtod(s)
	if !ok || over || under || math.IsNaN(f) {
		return 0, errNotFloat
	}
	return f + 0, nil // Redis keeps a small set's integral scores as integers: -0 becomes 0
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// scoreRange is a score interval, each end inclusive or exclusive.
type scoreRange struct {
	min, max     float64
	minEx, maxEx bool
}

func (r scoreRange) has(x float64) bool {
	return (x > r.min || !r.minEx && x == r.min) && (x < r.max || !r.maxEx && x == r.max)
}

// parseRange parses min and max as Redis's zslParseRange: a leading '('
// makes an end exclusive; then strtod, which skips leading spaces, reads
// "" as 0 and out-of-range values as ±Inf or 0; NaN is refused.
func parseRange(min, max string) (scoreRange, error) {
	var r scoreRange
	var ok1, ok2 bool
	r.min, r.minEx, ok1 = parseBound(min)
	r.max, r.maxEx, ok2 = parseBound(max)
	if !ok1 || !ok2 {
		return r, errRange
	}
	return r, nil
}

func parseBound(s string) (f float64, ex, ok bool) {
	if strings.HasPrefix(s, "(") {
		s, ex = s[1:], true
	}
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	if t == "" { // no conversion: strtod's end is s itself
		return 0, ex, s == ""
	}
	f, ok, _, _ = strtod(t)
	if !ok || math.IsNaN(f) {
		return 0, ex, false
	}
	return f, ex, true
}

// rangeOptions are the options that follow ZRANGE's and ZRANGEBYSCORE's
// first three arguments.
type rangeOptions struct {
	withScores bool
	// offset and count are LIMIT's; count is -1 without one, as Redis's
	// own "no LIMIT".
	offset, count int64
	// other is the first of the options named in parseRangeOptions's
	// call, "" if none was given.
	other string
}

// parseRangeOptions parses WITHSCORES, LIMIT offset count, and the
// options others (their names in upper case) in any case and order, as
// Redis does: an unknown option, or LIMIT without two arguments, is a
// syntax error; LIMIT's arguments must be integers.
func parseRangeOptions(a []string, others ...string) (rangeOptions, error) {
	o := rangeOptions{count: -1}
	for i := 0; i < len(a); i++ {
		switch opt := strings.ToUpper(a[i]); {
		case opt == "WITHSCORES":
			o.withScores = true
		case opt == "LIMIT" && len(a)-i-1 >= 2:
			off, n, err := parseIndexes(a[i+1], a[i+2])
			if err != nil {
				return o, err
			}
			o.offset, o.count = off, n
			i += 2
		case slices.Contains(others, opt):
			if o.other == "" {
				o.other = opt
			}
		default:
			return o, errSyntax
		}
	}
	return o, nil
}

// formatScore renders a score as Redis 7.0's RESP2 double reply does:
// printf's %.17g, and inf or -inf.
func formatScore(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 17, 64) // the same text as C's %.17g
}
