package goimpl

import (
	"slices"
	"sort"
	"strconv"
)

// Helpers of the generated code for collections: sorted sets and lists.

// joinEntry is the member of a sorted-set entry, as the Lua script writes
// it: its fields in decimal joined by ":", the second zero-padded to pad
// digits when pad > 0, so that entries of one score sort by it.
func joinEntry(pad int, vals ...int64) string {
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

// runDiff is (a - b) modulo mod, in [0, mod): the sum of the entries
// between two running sums kept modulo mod.
func runDiff(a, b, mod int64) int64 {
	d := (a - b) % mod
	if d < 0 {
		d += mod
	}
	return d
}

// insertAt inserts x into list at index i.
func insertAt[T any](list []T, i int, x T) []T { return slices.Insert(list, i, x) }

// paramOr reads an optional parameter from m, dflt when absent, and checks
// its domain.
func paramOr(m map[string]int64, name string, dflt, lo, hi int64, refused string) (int64, error) {
	v, ok := m[name]
	if !ok {
		v = dflt
	}
	return v, checkParam(v, lo, hi, refused)
}

// searchEntries is the smallest i in [0, n) at which f(i) is true, n if
// none, for an f that is false and then true: the binary search by which a
// sorted set's entries within a score range are found.
func searchEntries(n int, f func(int) bool) int { return sort.Search(n, f) }
