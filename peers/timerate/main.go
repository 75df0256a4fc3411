// Command timerate is golang.org/x/time/rate behind verify -exec's line
// protocol (docs/protocol.md), as the gcra of docs/semantics.md: a
// rate.Limiter per key and per rate and period, with
// rate.Limit(rate·1000/period_ms) events per second and burst burst (a
// change of burst alone is SetBurstAt on the same limiter), given each
// request's time (ReserveN(t, n)).
//
// A decision is ReserveN(t, cost): admitted when the reservation is OK
// and its delay is 0; otherwise denied, the delay (rounded up to whole
// ms) is retry_after_ms (-1 when the reservation is not OK: cost above
// burst), and the reservation is cancelled (CancelAt(t)). A forced call
// keeps the reservation, delay and all: the closest the peer has.
// limit is Burst(); remaining is TokensAt(t) after the decision, rounded
// down (0 when negative).
//
//	go run ./cmd/verify -exec 'cd peers && go run ./timerate'
package main

import (
	"fmt"
	"math"
	"os"
	"time"

	"github.com/limitspec/limitspec/peers/adapter"
	"golang.org/x/time/rate"
)

type limiters map[string]*rate.Limiter

func (l *limiters) Hello() adapter.Hello {
	return adapter.Hello{Protocol: 1, Name: "x/time/rate", Algorithms: []string{"gcra"},
		Fields: []string{"allowed", "limit", "remaining", "retry_after_ms"}}
}

func (l *limiters) Begin() { *l = limiters{} }

// state names a key's limiter: its state is measured in rate and period.
func state(r adapter.Request, g adapter.GCRA) string {
	return fmt.Sprintf("%s\x00%d\x00%d", r.Key, g.Rate, g.PeriodMs)
}

func (l *limiters) Reset(r adapter.Request, g adapter.GCRA) adapter.Reply {
	delete(*l, state(r, g))
	return adapter.Reply{}
}

func (l *limiters) Decide(r adapter.Request, g adapter.GCRA) adapter.Reply {
	t := time.UnixMilli(r.TMs)
	lim, ok := (*l)[state(r, g)]
	if !ok {
		lim = rate.NewLimiter(rate.Limit(float64(g.Rate)*1000/float64(g.PeriodMs)), int(g.Burst))
		(*l)[state(r, g)] = lim
	} else if lim.Burst() != int(g.Burst) {
		lim.SetBurstAt(t, int(g.Burst))
	}
	res := lim.ReserveN(t, int(g.Cost))
	delay := res.DelayFrom(t)
	allowed := res.OK() && delay == 0
	retry := int64(-1)
	if !allowed && res.OK() {
		retry = adapter.Ms(delay)
		if !r.Force {
			res.CancelAt(t)
		}
	}
	return adapter.Reply{"allowed": allowed, "limit": lim.Burst(),
		"remaining": int64(math.Max(0, math.Floor(lim.TokensAt(t)))), "retry_after_ms": retry}
}

func main() {
	l := limiters{}
	if err := adapter.Serve(&l, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "timerate:", err)
		os.Exit(1)
	}
}
