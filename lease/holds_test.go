package lease_test

import (
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/lease"
)

// heldPolicy is a holding policy of 100 an hour per user.
func heldPolicy(t *testing.T) *limitspec.Policy {
	t.Helper()
	p, err := limitspec.NewPolicy("api", limitspec.PolicyLimit{Name: "hour", Limit: limitspec.FixedWindow{Limit: 100, Window: time.Hour}, Identity: "user"})
	if err != nil {
		t.Fatal(err)
	}
	return p.WithHolds()
}

// TestHeldLeaseGivesBack: a lease of 10 of a holding policy is a hold on
// the primary, which counts it whole (90 left) while 3 of it are spent;
// when the lease ends, by its time or by Close, the 3 are committed and
// the 7 given back: the primary counts 3, and an idle process holds
// nothing of the limit.
func TestHeldLeaseGivesBack(t *testing.T) {
	for _, tc := range []struct {
		name  string
		end   func(*lease.Limiter)
		lasts time.Duration
	}{
		{"close", func(l *lease.Limiter) { l.Close() }, time.Minute},
		{"time", func(*lease.Limiter) {}, time.Second}, // long beside the three requests, even on a busy machine
	} {
		t.Run(tc.name, func(t *testing.T) {
			primary, _ := goimpl.New(goimpl.Options{})
			defer primary.Close()
			lim, err := lease.New(primary, lease.Options{Size: 10, For: tc.lasts})
			if err != nil {
				t.Fatal(err)
			}
			req := limitspec.Request{Policy: heldPolicy(t), IDs: map[string]string{"user": "alice"}, Cost: 1}
			for range 3 {
				if res, err := lim.Limit(t.Context(), req); err != nil || !res.Allowed {
					t.Fatalf("%+v, %v", res, err)
				}
			}
			peek := req
			peek.Cost, peek.Peek = 0, true
			if res, _ := primary.Limit(t.Context(), peek); res.Limits[0].Remaining != 90 {
				t.Errorf("the lease held: the primary has %d left; want 90", res.Limits[0].Remaining)
			}
			tc.end(lim)
			deadline := time.Now().Add(5 * time.Second)
			for lim.Stats().Returned != 7 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if res, _ := primary.Limit(t.Context(), peek); res.Limits[0].Remaining != 97 || lim.Stats().Returned != 7 || lim.Stats().Lapsed != 0 {
				t.Errorf("the lease ended: the primary has %d left, %+v; want 97, 7 returned, none lapsed", res.Limits[0].Remaining, lim.Stats())
			}
		})
	}
}
