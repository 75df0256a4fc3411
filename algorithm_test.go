package limitspec_test

import (
	"testing"

	"github.com/limitspec/limitspec"
)

// TestParseAlgorithm: ParseAlgorithm reads back what Algorithm.String
// writes, for the catalogue's algorithms and a user's.
func TestParseAlgorithm(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want limitspec.Algorithm
	}{
		{"gcra", limitspec.Algorithm{Library: limitspec.Catalogue, Name: "gcra"}},
		{"quota.daily_quota", limitspec.Algorithm{Library: "quota", Name: "daily_quota"}},
	} {
		got := limitspec.ParseAlgorithm(tt.s)
		if got != tt.want || got.String() != tt.s {
			t.Errorf("ParseAlgorithm(%q) = %+v (String %q), want %+v", tt.s, got, got.String(), tt.want)
		}
	}
}
