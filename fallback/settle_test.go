package fallback_test

import (
	"context"
	"slices"
	"sync/atomic"
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

// TestFaultLostReserveReleased: job a's reserve runs on Redis, which
// holds a slot for it, and its reply is lost (the connection cut after
// it): the fallback cannot know, and decides the reserve without Redis.
// While the breaker is closed, it is denied, in mode Local as in mode
// FailClosed (other calls reach Redis meanwhile: a local hold would
// count beside what they hold there); as the half-open breaker's probe,
// in mode Local, it is held by the local limiter. Either way no holder
// will end Redis's hold, which would refuse the tenant its slot until
// the hold's end (a minute): a release of a is owed to Redis
// (Stats.SettlesOwed) and sent after a call Redis answers, once a second
// has passed (a reserve that timed out may still be on its way to run).
// Redis then holds nothing; the local hold's commit, which Redis answers
// NOHOLD, ends it on the local limiter and charges its request there,
// which Redis is told before its next decision: Redis counts it once.
func TestFaultLostReserveReleased(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		mode  fallback.Mode
		probe bool
	}{{"local, closed", fallback.Local, false}, {"fail-closed", fallback.FailClosed, false}, {"local, the probe", fallback.Local, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lostReserve(t, tc.mode, tc.probe)
		})
	}
}

// lostReserve is TestFaultLostReserveReleased in mode, the lost reserve
// the half-open breaker's probe when probe is set.
func lostReserve(t *testing.T, mode fallback.Mode, probe bool) {
	srv := redistest.StartServer(t)
	proxy := faultproxy.Start(t, srv.Addr())
	const openFor = 50 * time.Millisecond
	lim := onRedis(t, proxy.Addr(), fallback.Options{Timeout: time.Second, Mode: mode, Failures: 1, OpenFor: openFor})
	p, err := limitspec.NewPolicy("jobs",
		limitspec.PolicyLimit{Name: "slots", Limit: limitspec.Concurrency{Limit: 3}, Identity: "tenant"},
		limitspec.PolicyLimit{Name: "hour", Limit: limitspec.FixedWindow{Limit: 100, Window: time.Hour}, Identity: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	req := limitspec.Request{Policy: p.WithHolds(), IDs: map[string]string{"tenant": "acme"}, Now: hourStart()}
	peek := req
	peek.Peek = true
	// Redis learns the script first: the call whose reply is cut must
	// run, not be answered NOSCRIPT.
	for _, h := range []limitspec.Hold{{Op: limitspec.Reserve, ID: "warm", For: time.Minute}, {Op: limitspec.Release, ID: "warm"}} {
		if _, err := lim.Hold(t.Context(), req, h); err != nil {
			t.Fatalf("%v warm: %v", h.Op, err)
		}
	}
	if probe { // the breaker opened by a refused call
		proxy.Refuse(true)
		if res, err := lim.Limit(t.Context(), peek); err != nil || lim.Stats().State != fallback.Open {
			t.Fatalf("a call Redis refuses: %+v, %v; %+v; want the breaker open", res, err, lim.Stats())
		}
		proxy.Refuse(false)
		time.Sleep(openFor)
	}
	// Every reply to a reserve is cut: redislimit's retries by the
	// hold's id, within the Timeout, are lost too.
	var cut atomic.Int64
	proxy.CutAfterReply(func(_ string, args []string) bool {
		return slices.Contains(args, "reserve") && cut.Add(1) > 0
	})
	before := lim.Stats()
	res, err := lim.Hold(t.Context(), req, limitspec.Hold{Op: limitspec.Reserve, ID: "a", For: time.Minute})
	proxy.CutAfterReply(nil)
	if err != nil || res.Allowed != probe || res.Side == limitspec.Primary || cut.Load() == 0 {
		t.Fatalf("the reserve whose replies were lost (%d cut): %+v, %v; want decided without Redis, allowed %v", cut.Load(), res, err, probe)
	}
	if st := lim.Stats(); st.PrimarySlow != before.PrimarySlow+1 || st.SettlesOwed != 1 {
		t.Fatalf("after the lost reply: %d slow failures (%d before), %d owed; want one more, and 1 owed (a's release)", st.PrimarySlow, before.PrimarySlow, st.SettlesOwed)
	}
	primaryPeek := func(what string) {
		t.Helper()
		if !waitFor(5*time.Second, func() bool {
			res, err := lim.Limit(t.Context(), peek)
			return err == nil && res.Side == limitspec.Primary && lim.Stats().SettlesOwed == 0
		}) {
			t.Fatalf("%s: Redis never answered a peek, or was not sent what it is owed: %+v", what, lim.Stats())
		}
	}
	failed := time.Now()
	if slots, _ := left(t, srv.Addr(), req); slots != 2 {
		t.Errorf("Redis, at once: %d slots free; want 2 (a's hold, its release not due for a second)", slots)
	}
	primaryPeek("after the lost reply")
	if slots, _ := left(t, srv.Addr(), req); slots != 3 || time.Since(failed) < time.Second {
		t.Errorf("Redis, %v after: %d slots free; want 3 (a's hold released), a second after", time.Since(failed), slots)
	}
	if st := lim.Stats(); st.SettlesOwed != 0 || st.SettlesReplayed != 1 {
		t.Errorf("after the call that follows: %d owed, %d replayed; want 0, 1", st.SettlesOwed, st.SettlesReplayed)
	}
	if !probe {
		return
	}
	commit := req
	commit.Cost = 1
	if res, err := lim.Hold(t.Context(), commit, limitspec.Hold{Op: limitspec.Commit, ID: "a"}); err != nil || res.Side != limitspec.Fallback {
		t.Fatalf("a's commit: %+v, %v; want the local limiter's (Redis holds nothing)", res, err)
	}
	primaryPeek("after the commit")
	if slots, hour := left(t, srv.Addr(), req); slots != 3 || hour != 99 {
		t.Errorf("Redis, after a's commit: %d slots free, %d of the hour left; want 3, 99 (a's request, counted once)", slots, hour)
	}
}

// left is what Redis at addr has left of req's policy, of slots and
// hour.
func left(t *testing.T, addr string, req limitspec.Request) (slots, hour int64) {
	t.Helper()
	res := onRedisAlone(t, addr, req)
	return res.Limits[0].Remaining, res.Limits[1].Remaining
}
