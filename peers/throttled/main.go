// Command throttled is github.com/throttled/throttled/v2's GCRA behind
// verify -exec's line protocol (docs/protocol.md), as the gcra of
// docs/semantics.md. Its store is throttled's own memstore, whose clock
// is set to each request's time (MemStore.SetTimeNow): the GCRA reads
// "now" from the store (GetWithTime).
//
// throttled admits MaxBurst+1 requests at once, MaxRate apart once
// spent: burst is MaxBurst+1 and the rate PerDuration(rate, period_ms).
// Limits of one key and one rate and period share the stored TAT, so a
// change of burst alone keeps the state, as the contract says. A
// decision is RateLimitCtx(key, cost); its fields: allowed is not
// limited, limit, remaining, retry_after_ms and reset_after_ms are
// RateLimitResult's Limit, Remaining, RetryAfter and ResetAfter (the
// durations rounded up to whole ms; a negative one is -1). throttled has
// no forced call: a forced step is replied an error of class
// UNSUPPORTED.
//
//	go run ./cmd/verify -exec 'cd peers && go run ./throttled'
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/limitspec/limitspec/peers/adapter"
	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"
)

type peer struct {
	store *memstore.MemStore
	now   time.Time
	gen   map[string]int // a reset moves a key's state to a new name: the stores have no delete
}

func (p *peer) Hello() adapter.Hello {
	return adapter.Hello{Protocol: 1, Name: "throttled", Algorithms: []string{"gcra"},
		Fields: []string{"allowed", "limit", "remaining", "retry_after_ms", "reset_after_ms"}}
}

func (p *peer) Begin() {
	st, err := memstore.New(1 << 16)
	if err != nil {
		panic(err)
	}
	st.SetTimeNow(func() time.Time { return p.now })
	p.store, p.gen = st, map[string]int{}
}

// state names the store's key of r's key and limit: its state is
// measured in rate and period, as throttled's TAT is in its interval.
func state(r adapter.Request, g adapter.GCRA) string {
	return fmt.Sprintf("%s:gcra:%d:%d", r.Key, g.Rate, g.PeriodMs)
}

func (p *peer) Reset(r adapter.Request, g adapter.GCRA) adapter.Reply {
	p.gen[state(r, g)]++
	return adapter.Reply{}
}

func (p *peer) Decide(r adapter.Request, g adapter.GCRA) adapter.Reply {
	if r.Force {
		return adapter.Refuse("UNSUPPORTED", "throttled has no forced call")
	}
	quota := throttled.RateQuota{MaxRate: throttled.PerDuration(int(g.Rate), time.Duration(g.PeriodMs)*time.Millisecond),
		MaxBurst: int(g.Burst) - 1}
	rl, err := throttled.NewGCRARateLimiterCtx(throttled.WrapStoreWithContext(p.store), quota)
	if err != nil {
		return adapter.Refuse("BADINPUT", "%v", err)
	}
	p.now = time.UnixMilli(r.TMs)
	key := fmt.Sprintf("%s#%d", state(r, g), p.gen[state(r, g)])
	limited, res, err := rl.RateLimitCtx(context.Background(), key, int(g.Cost))
	if err != nil {
		return adapter.Refuse("ERROR", "%v", err)
	}
	return adapter.Reply{"allowed": !limited, "limit": res.Limit, "remaining": res.Remaining,
		"retry_after_ms": adapter.Ms(res.RetryAfter), "reset_after_ms": adapter.Ms(res.ResetAfter)}
}

func main() {
	p := &peer{}
	p.Begin()
	if err := adapter.Serve(p, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "throttled:", err)
		os.Exit(1)
	}
}
