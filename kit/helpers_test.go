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

// TestAggregates checks the aggregates over a sorted set's entries on
// entries worked by hand: scores 10, 20, 20, 30, values 1, 2, 1, 2, their
// running sums modulo 8 after an earlier 5 (6, 0, 1, 3: wrapped).
func TestAggregates(t *testing.T) {
	type entry struct{ score, v, run int64 }
	es := []entry{{10, 1, 6}, {20, 2, 0}, {20, 1, 1}, {30, 2, 3}}
	runs := func(e *entry) (int64, int64) { return e.run, e.v }
	score := func(e *entry) int64 { return e.score }
	tests := []struct {
		name      string
		got, want int64
	}{
		{"Last of all", Last(es, score, -1), 30},
		{"Last of none", Last(es[:0], score, -1), -1},
		{"CountSum", CountSum(es, 2, 100), 8},
		{"CountSum at most", CountSum(es, 2, 5), 5},
		{"CountReach of the third", CountReach(es, 1, 3, score, -1), 20},
		{"CountReach of a need below 1", CountReach(es, 1, 0, score, -1), 10},
		{"CountReach past the entries", CountReach(es, 2, 9, score, -1), -1},
		{"RunSum of all", RunSum(es, runs, 8, 100), 6},
		{"RunSum after 10", RunSum(es[1:], runs, 8, 100), 5},
		{"RunSum at most", RunSum(es[1:], runs, 8, 4), 4},
		{"RunSum of none", RunSum(es[:0], runs, 8, 100), 0},
		{"RunReach of 3", RunReach(es, runs, 3, 8, 100, score, -1), 20},
		{"RunReach of 5", RunReach(es, runs, 5, 8, 100, score, -1), 30},
		{"RunReach of a need below 1", RunReach(es, runs, 0, 8, 100, score, -1), 10},
		{"RunReach of 5 after 10", RunReach(es[1:], runs, 5, 8, 100, score, -1), 30},
		{"RunReach of 4 within 20", RunReach(es[:3], runs, 4, 8, 100, score, -1), 20},
		{"RunReach past the sum", RunReach(es[:3], runs, 5, 8, 100, score, -1), -1},
		{"When true", When(true, func() int64 { return 7 }, 3), 7},
		{"When false", When(false, func() int64 { panic("computed") }, 3), 3},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}
