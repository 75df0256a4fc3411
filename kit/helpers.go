package kit

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strconv"
)

// The helpers of the generated decisions in Go.

// Field returns a stored field clamped into [lo, hi], or dflt when the
// key is not live, as the scripts read a field.
func Field(live bool, v, dflt, lo, hi int64) int64 {
	if !live {
		return dflt
	}
	return min(max(v, lo), hi)
}

// Pick is the conditional value: a if c, else b.
func Pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// CeilDiv is ceil(a / b) for a >= 0, b >= 1, a + b within int64.
func CeilDiv(a, b int64) int64 { return (a + b - 1) / b }

// JoinEntry is the member of a sorted-set entry, as the Lua script writes
// it: its fields in decimal joined by ":", the second zero-padded to pad
// digits when pad > 0, so that entries of one score sort by it.
func JoinEntry(pad int, vals ...int64) string {
	var b []byte
	for i, v := range vals {
		if i > 0 {
			b = append(b, ':')
		}
		d := strconv.AppendInt(nil, v, 10)
		if i == 1 {
			for n := len(d); n < pad; n++ {
				b = append(b, '0')
			}
		}
		b = append(b, d...)
	}
	return string(b)
}

// RunDiff is (a - b) modulo mod, in [0, mod): the sum of the entries
// between two running sums kept modulo mod.
func RunDiff(a, b, mod int64) int64 {
	d := (a - b) % mod
	if d < 0 {
		d += mod
	}
	return d
}

// InsertAt inserts x into list at index i.
func InsertAt[T any](list []T, i int, x T) []T { return slices.Insert(list, i, x) }

// SearchEntries is the smallest i in [0, n) at which f(i) is true, n if
// none, for an f that is false and then true: the binary search by which
// a sorted set's entries within a score range are found.
func SearchEntries(n int, f func(int) bool) int { return sort.Search(n, f) }

// MaxKeyBytes is the longest key, or identity value, that the limiters
// store as it is. A longer one is stored as its StoredKey, so that a
// client's key (an API key of 500 KB, say) never becomes a Redis key
// name or a map key of that size.
const MaxKeyBytes = 256

// StoredKey is key as the limiters store it: itself, up to MaxKeyBytes
// (or when it starts with '}', which every limiter refuses); a longer key
// is stored as "sha256:" and the 64 hex digits of its SHA-256 (71 bytes).
// Two keys share a state only if they are equal or their SHA-256 are.
func StoredKey(key string) string {
	if len(key) <= MaxKeyBytes || key[0] == '}' {
		return key // in a line its callers inline
	}
	return hashedKey(key)
}

// hashedKey is StoredKey of a key longer than MaxKeyBytes.
func hashedKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}
