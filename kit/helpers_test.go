package kit

import (
	"slices"
	"strings"
	"testing"
)

// TestHelpers checks the arithmetic the generated decisions are built
// on, on values worked by hand.
func TestHelpers(t *testing.T) {
	tests := []struct {
		name      string
		got, want int64
	}{
		{"Field of a key not live is the default", Field(false, 7, 3, 0, 10), 3},
		{"Field within range", Field(true, 7, 3, 0, 10), 7},
		{"Field clamped up", Field(true, -4, 3, 0, 10), 0},
		{"Field clamped down", Field(true, 25, 3, 0, 10), 10},
		{"Field at its ends", Field(true, 10, 3, -10, 10), 10},
		{"RunDiff forward", RunDiff(7, 3, 10), 4},
		{"RunDiff across the modulus", RunDiff(3, 7, 10), 6},
		{"RunDiff of equal sums", RunDiff(5, 5, 10), 0},
		{"SearchEntries: the first true", int64(SearchEntries(10, func(i int) bool { return i >= 4 })), 4},
		{"SearchEntries: none true", int64(SearchEntries(10, func(int) bool { return false })), 10},
		{"SearchEntries: all true", int64(SearchEntries(10, func(int) bool { return true })), 0},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

// TestJoinEntry: members are the fields in decimal joined by ":", the
// second zero-padded to pad digits (so that members of one score sort as
// their second field).
func TestJoinEntry(t *testing.T) {
	tests := []struct {
		pad  int
		vals []int64
		want string
	}{
		{6, []int64{1700000000000, 12, 3, 45}, "1700000000000:000012:3:45"},
		{6, []int64{5, 1234567, 1}, "5:1234567:1"}, // wider than pad: as is
		{0, []int64{5, 12, 1}, "5:12:1"},
		{3, []int64{5}, "5"},
		{3, []int64{0, 0}, "0:000"},
		{3, nil, ""},
	}
	for _, tt := range tests {
		if got := JoinEntry(tt.pad, tt.vals...); got != tt.want {
			t.Errorf("JoinEntry(%d, %v) = %q, want %q", tt.pad, tt.vals, got, tt.want)
		}
	}
	// Padded members of one score sort as their second field.
	a, b := JoinEntry(6, 9, 2, 1), JoinEntry(6, 9, 10, 1)
	if a >= b {
		t.Errorf("%q sorts after %q", a, b)
	}
}

// TestInsertAt: an element goes in at its index, into nil too.
func TestInsertAt(t *testing.T) {
	got := InsertAt([]int{1, 2, 4}, 2, 3)
	if want := []int{1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("InsertAt = %v, want %v", got, want)
	}
	if got := InsertAt([]int(nil), 0, 7); !slices.Equal(got, []int{7}) {
		t.Errorf("InsertAt into nil = %v, want [7]", got)
	}
}

// TestStoredKey: keys up to MaxKeyBytes are stored as they are; a longer
// one as its SHA-256 (the digest below is sha256sum's of 257 "a"s); a
// key starting with '}' is left for the limiters to refuse.
func TestStoredKey(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"alice", "alice"},
		{strings.Repeat("a", 256), strings.Repeat("a", 256)},
		{strings.Repeat("a", 257), "sha256:e8d95cc2b4bc198c54b40bd214df958afb65f5e73d2c2eafe0593cf5c635c1f0"},
		{"}" + strings.Repeat("a", 300), "}" + strings.Repeat("a", 300)},
	} {
		if got := StoredKey(tc.key); got != tc.want {
			t.Errorf("StoredKey(%d bytes) = %.80q; want %.80q", len(tc.key), got, tc.want)
		}
	}
}
