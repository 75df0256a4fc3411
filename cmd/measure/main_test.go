package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/lua"
)

// TestMeasure runs the measurement on a throwaway Redis and checks that
// every algorithm and limit gets a row with a memory figure, and that an
// admitted decision writes while a denied one only reads.
func TestMeasure(t *testing.T) {
	var out bytes.Buffer
	if err := run(redistest.Start(t), &out); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| algorithm") || strings.HasPrefix(line, "| ---") {
			continue
		}
		rows++
		cells := strings.Split(line, " | ")
		if cells[2] == "0" || !strings.Contains(cells[4], "HSET 1") || strings.Contains(cells[5], "HSET") {
			t.Errorf("implausible row: %s", line)
		}
	}
	if want := len(lua.Scripts) * len(Limits); rows != want {
		t.Errorf("%d rows, want %d:\n%s", rows, want, out.String())
	}
	t.Log("\n" + out.String())
}
