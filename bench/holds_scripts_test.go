package main

import (
	"strings"
	"testing"
)

// replyOf is ints as go-redis reads an array of integers.
func replyOf(ints ...int64) []any {
	out := make([]any, len(ints))
	for i, v := range ints {
		out[i] = v
	}
	return out
}

// TestPolicyAdmits checks policyAdmits on replies written by hand (those
// of docs/scripts.md, "Policies" and "Holds"): admitted only when every
// limit's allowed is 1, whatever the binding index says.
func TestPolicyAdmits(t *testing.T) {
	for _, c := range []struct {
		name  string
		reply []any
		want  bool
	}{
		{"one limit, admitted", replyOf(1, 1, 16, 15, -1, 2000, 0, 0), true},
		{"one limit, denied", replyOf(1, 0, 16, 0, 1000, 2000, 0, 0), false},
		{"two limits, both admit, the second binds", replyOf(2, 1, 2, 1, -1, 1000, 0, 0, 1, 3, 0, -1, 86400000, 0, 0), true},
		{"two limits, the first denies and binds", replyOf(1, 0, 2, 0, 1000, 2000, 0, 0, 1, 3, 1, -1, 86400000, 0, 0), false},
		{"two limits, the second denies and binds", replyOf(2, 1, 2, 2, -1, 0, 0, 0, 0, 3, 0, 86397000, 86399000, 0, 0), false},
		{"two limits, the second denies, the first binds", replyOf(1, 1, 2, 0, -1, 2000, 0, 0, 0, 3, 0, 1000, 2000, 0, 0), false},
		{"a slot reserved beside a minute", replyOf(1, 1, 1, 0, -1, 30000, 0, 0, 1, 100, 99, -1, 30000, 0, 0), true},
	} {
		got, err := policyAdmits(c.reply)
		if err != nil || got != c.want {
			t.Errorf("%s: policyAdmits(%v) = %v, %v; want %v", c.name, c.reply, got, err, c.want)
		}
	}
}

// TestPolicyAdmitsRefuses checks that a reply that is no policy's is an
// error, not a decision.
func TestPolicyAdmitsRefuses(t *testing.T) {
	for _, c := range []struct {
		name  string
		reply any
		want  string
	}{
		{"not an array", "OK", "want 1 + 7×n integers"},
		{"empty", replyOf(), "want 1 + 7×n integers"},
		{"a limit's own 7 integers", replyOf(1, 16, 15, -1, 2000, 0, 0), "want 1 + 7×n integers"},
		{"a limit and a field more", replyOf(1, 1, 16, 15, -1, 2000, 0, 0, 0), "want 1 + 7×n integers"},
		{"a binding index of 0", replyOf(0, 1, 16, 15, -1, 2000, 0, 0), "binding index 0 of 1 limits"},
		{"a binding index past the limits", replyOf(3, 1, 2, 1, -1, 1000, 0, 0, 1, 3, 0, -1, 86400000, 0, 0), "binding index 3 of 2 limits"},
		{"an allowed of 2", replyOf(1, 2, 16, 15, -1, 2000, 0, 0), "allowed 2"},
		{"a string", []any{int64(1), "1", int64(16), int64(15), int64(-1), int64(2000), int64(0), int64(0)}, "want integers"},
	} {
		got, err := policyAdmits(c.reply)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: policyAdmits(%v) = %v, %v; want an error with %q", c.name, c.reply, got, err, c.want)
		}
	}
}
