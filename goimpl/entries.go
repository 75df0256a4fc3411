package goimpl

import (
	"slices"
	"sort"
	"strconv"
)

// Helpers of the generated code for collections: sorted sets, lists and
// hashes with entries.

// joinInts is the member of a sorted-set entry: its fields in decimal,
// joined by ":", as the Lua script writes it.
func joinInts(vals ...int64) string {
	var b []byte
	for i, v := range vals {
		if i > 0 {
			b = append(b, ':')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return string(b)
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
