package adapter

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestMs(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int64
	}{{-1, -1}, {0, 0}, {1, 1}, {time.Millisecond, 1}, {time.Millisecond + 1, 2}, {142857143, 143}} {
		if got := Ms(c.d); got != c.want {
			t.Errorf("Ms(%d) = %d, want %d", c.d, got, c.want)
		}
	}
}

// counter admits every request and counts them; it panics on a cost of 13.
type counter struct{ n int }

func (c *counter) Hello() Hello {
	return Hello{Protocol: 1, Name: "counter", Algorithms: []string{"gcra"}, Fields: []string{"allowed"}}
}
func (c *counter) Begin() { c.n = 0 }
func (c *counter) Decide(r Request, g GCRA) Reply {
	if g.Cost == 13 {
		panic("unlucky")
	}
	c.n++
	return Reply{"allowed": true, "n": c.n}
}
func (c *counter) Reset(r Request, g GCRA) Reply { return Reply{} }

// TestServe: one reply line per request; integers only; a panic is an
// error reply, not the adapter's end.
func TestServe(t *testing.T) {
	in := strings.Join([]string{
		`{"op":"hello","protocol":1}`,
		`{"op":"begin","vector":"v"}`,
		`{"op":"decide","algorithm":"gcra","params":{"burst":3,"rate":7,"period_ms":1000},"key":"k","t_ms":1,"cost":1,"force":false}`,
		`{"op":"decide","algorithm":"gcra","params":{"burst":2.5,"rate":7,"period_ms":1000},"key":"k","t_ms":1,"cost":1,"force":false}`,
		`{"op":"decide","algorithm":"gcra","params":{"burst":3,"rate":7,"period_ms":1000},"key":"k","t_ms":1,"cost":13,"force":false}`,
		`{"op":"reset","algorithm":"gcra","params":{"burst":3,"rate":7,"period_ms":1000},"key":"k","t_ms":1,"cost":1,"force":false}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := Serve(&counter{}, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := `{"protocol":1,"name":"counter","algorithms":["gcra"],"fields":["allowed"]}
{}
{"allowed":true,"n":1}
{"error":"BADINPUT","message":"burst must be an integer, got 2.5"}
{"error":"PANIC","message":"unlucky"}
{}
`
	if out.String() != want {
		t.Errorf("replies:\n%s\nwant:\n%s", out.String(), want)
	}
}
