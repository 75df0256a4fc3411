// Package adapter serves docs/protocol.md, verify -exec's line protocol,
// for the adapters of the peers: it reads the requests, hands the
// decisions and resets to a Peer, and writes the replies.
package adapter

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/limitspec/limitspec/conformance"
)

// Hello is the handshake's reply, as verify reads it.
type Hello = conformance.ExecHello

// Request is a decide or reset request, as verify writes it.
type Request = conformance.ExecRequest

// Reply is a decision's fields, or an error (Error its class).
type Reply map[string]any

// Refuse is the reply of a refusal of class class.
func Refuse(class, format string, args ...any) Reply {
	return Reply{"error": class, "message": fmt.Sprintf(format, args...)}
}

// Peer is a peer limiter behind the protocol.
type Peer interface {
	Hello() Hello
	// Begin drops all state.
	Begin()
	// Decide decides r; Reset deletes the state of r's key and limit.
	Decide(r Request, g GCRA) Reply
	Reset(r Request, g GCRA) Reply
}

// GCRA is a gcra limit's parameters (docs/semantics.md): burst requests
// at once, rate per period_ms; Cost is the request's cost. A peer takes
// integers only, so a value that is no integer is refused by Serve
// before the peer sees it, as the peer's typed callers could not pass
// it.
type GCRA struct {
	Burst, Rate, PeriodMs, Cost int64
}

// Serve answers the requests of in on out until in ends. A panic of the
// peer is replied as an error of class PANIC.
func Serve(p Peer, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var r Request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("request %s: %v", sc.Bytes(), err)
		}
		if err := enc.Encode(answer(p, r)); err != nil {
			return err
		}
	}
	return sc.Err()
}

func answer(p Peer, r Request) (rep any) {
	defer func() {
		if e := recover(); e != nil {
			rep = Refuse("PANIC", "%v", e)
		}
	}()
	switch r.Op {
	case "hello":
		return p.Hello()
	case "begin":
		p.Begin()
		return Reply{}
	}
	g, refused := gcra(r)
	if refused != nil {
		return refused
	}
	if r.Op == "reset" {
		return p.Reset(r, g)
	}
	return p.Decide(r, g)
}

// gcra reads r's parameters and cost as integers.
func gcra(r Request) (GCRA, Reply) {
	var g GCRA
	for _, f := range []struct {
		name string
		n    json.Number
		into *int64
	}{{"burst", r.Params["burst"], &g.Burst}, {"rate", r.Params["rate"], &g.Rate},
		{"period_ms", r.Params["period_ms"], &g.PeriodMs}, {"cost", r.Cost, &g.Cost}} {
		if f.n == "" {
			continue // absent: 0, as the peer's zero value
		}
		v, err := f.n.Int64()
		if err != nil {
			return g, Refuse("BADINPUT", "%s must be an integer, got %s", f.name, f.n)
		}
		*f.into = v
	}
	return g, nil
}

// Ms is d in whole ms, rounded up as the contract rounds waits; a
// negative d is -1.
func Ms(d time.Duration) int64 {
	if d < 0 {
		return -1
	}
	if d > math.MaxInt64-time.Millisecond {
		return int64(d / time.Millisecond)
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}
