package kit

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strconv"

	"github.com/limitspec/limitspec/exact"
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

// The aggregates of the generated decisions over a sorted set's entries,
// which are sorted by score, cut by the decision to the score range of a
// where clause: each computes an aggregate of the range, as the Lua
// script does by index (gen's index.go). v, r and the accessor runs read
// an entry; d is the value when no entry counts.

// Last is v of the last entry of src, or d if there is none.
func Last[E, V any](src []E, v func(*E) V, d V) V {
	if n := len(src); n > 0 {
		return v(&src[n-1])
	}
	return d
}

// CountSum is the sum of k over the entries of src, at most most.
func CountSum[E any](src []E, k, most int64) int64 { return min(int64(len(src))*k, most) }

// CountReach is r of the entry at which the sum of k over the entries of
// src reaches need, or d if it never does.
func CountReach[E, V any](src []E, k, need int64, r func(*E) V, d V) V {
	if i := max(0, exact.CeilDiv(max(0, need), k)-1); i < int64(len(src)) {
		return r(&src[i])
	}
	return d
}

// RunSum is the sum of the values that the running sums of src add, at
// most most: the difference of the running sums of its last entry and
// of the one before its first. runs returns an entry's running sum,
// kept modulo mod, and the value it adds.
func RunSum[E any](src []E, runs func(*E) (run, v int64), mod, most int64) int64 {
	n := len(src)
	if n == 0 {
		return 0
	}
	first, v := runs(&src[0])
	last, _ := runs(&src[n-1])
	return min(RunDiff(last, first-v, mod), most)
}

// RunReach is r of the first entry of src at which the sum of the values
// that the running sums add, at most most, reaches need (a binary search
// over the running sums), or d if none does.
func RunReach[E, V any](src []E, runs func(*E) (run, v int64), need, mod, most int64, r func(*E) V, d V) V {
	n := len(src)
	if n == 0 {
		return d
	}
	first, v := runs(&src[0])
	base := first - v
	upto := func(i int) int64 {
		run, _ := runs(&src[i])
		return min(RunDiff(run, base, mod), most)
	}
	if upto(n-1) < need {
		return d
	}
	return r(&src[sort.Search(n, func(i int) bool { return upto(i) >= need })])
}

// When is f() if c, else d: an aggregate computed only where its value
// is used.
func When[T any](c bool, f func() T, d T) T {
	if c {
		return f()
	}
	return d
}
