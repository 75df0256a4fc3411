package fallback_test

import (
	"context"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/internal/faultproxy"
	"github.com/limitspec/limitspec/internal/redistest"
)

// TestFaultSettlesOwed: three jobs hold the 3 slots of a tenant on
// Redis; Redis then refuses connections, and two of them end: job a
// commits (1 request spent), job b releases. Neither can reach Redis,
// and the local limiter does not hold them: each call fails, and is
// kept (Stats.SettlesOwed). Redis back with its state (a process that
// restarted from its append-only file, or a network that healed), the
// first call Redis answers is followed by the two owed calls: a's and
// b's holds end, a's request is counted, and the tenant is not refused
// its slots until the holds' end (a minute): 2 are free, and a new job
// takes one.
func TestFaultSettlesOwed(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	proxy := faultproxy.Start(t, srv.Addr())
	lim := onRedis(t, proxy.Addr(), fallback.Options{Timeout: time.Second, OpenFor: 50 * time.Millisecond})
	p, err := limitspec.NewPolicy("jobs",
		limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: 3}, Identity: "tenant"},
		limitspec.PolicyLimit{Name: "hour", Limit: limitspec.FixedWindow{Limit: 100, Window: time.Hour}, Identity: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	req := limitspec.Request{Policy: p.WithHolds(), IDs: map[string]string{"tenant": "acme"}}
	hold := func(op limitspec.HoldOp, id string) (limitspec.Result, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		h := limitspec.Hold{Op: op, ID: id}
		if op == limitspec.Reserve {
			h.For = time.Minute
		}
		return lim.Hold(ctx, req, h)
	}
	left := func() (slots, hour int64, side limitspec.Side) {
		peek := req
		peek.Peek = true
		res, err := lim.Limit(t.Context(), peek)
		if err != nil {
			return -1, -1, res.Side
		}
		return res.Limits[0].Remaining, res.Limits[1].Remaining, res.Side
	}
	for _, id := range []string{"a", "b", "c"} {
		if res, err := hold(limitspec.Reserve, id); err != nil || !res.Allowed || res.Side != limitspec.Primary {
			t.Fatalf("job %s's reserve on Redis: %+v, %v", id, res, err)
		}
	}
	proxy.Refuse(true)
	for _, op := range []limitspec.HoldOp{limitspec.Commit, limitspec.Release} {
		if _, err := hold(op, map[limitspec.HoldOp]string{limitspec.Commit: "a", limitspec.Release: "b"}[op]); err == nil {
			t.Fatalf("a %v without Redis: no error", op)
		}
	}
	if st := lim.Stats(); st.SettlesOwed != 2 || st.SettlesReplayed != 0 {
		t.Fatalf("without Redis: %d commits and releases owed, %d replayed; want 2, 0", st.SettlesOwed, st.SettlesReplayed)
	}
	proxy.Refuse(false)
	deadline := time.Now().Add(10 * time.Second)
	for _, _, side := left(); side != limitspec.Primary; _, _, side = left() {
		if time.Now().After(deadline) {
			t.Fatal("Redis back, the breaker never let a call through")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if slots, hour, _ := left(); slots != 2 || hour != 98 {
		t.Errorf("Redis back: %d slots free and %d of the hour left; want 2 (c's held) and 98 (a's commit, c's hold)", slots, hour)
	}
	if st := lim.Stats(); st.SettlesOwed != 0 || st.SettlesReplayed != 2 || st.SettlesLost != 0 {
		t.Errorf("Redis back: %d owed, %d replayed, %d lost; want 0, 2, 0", st.SettlesOwed, st.SettlesReplayed, st.SettlesLost)
	}
	if res, err := hold(limitspec.Reserve, "d"); err != nil || !res.Allowed {
		t.Errorf("a new job's reserve, Redis back: %+v, %v; want admitted", res, err)
	}
}
