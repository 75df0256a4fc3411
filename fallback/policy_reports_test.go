package fallback_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
)

// TestFailoverStartsEachLimitFromItsOwnReport: a policy of a per-IP
// limit (1,010 a minute) and a tenant's (1,000 a minute, 100,000 a
// day). Tenant A has spent 2,001 of its day, and 1 of its minute, when
// the primary fails. Each limit starts from what the primary last said
// of it, so that A is admitted the 999 its minute has left (starting
// every limit from the most used, 2,001, refused it all), and tenant B,
// never seen, behind A's IP, starts with its own limits full and is
// admitted the 10 the IP has left (it was refused too).
func TestFailoverStartsEachLimitFromItsOwnReport(t *testing.T) {
	policy, err := limitspec.NewPolicy("plan",
		limitspec.PolicyLimit{Name: "ip_rate", Identity: "ip", Limit: limitspec.FixedWindow{Limit: 1010, Window: time.Minute}},
		limitspec.PolicyLimit{Name: "tenant_rate", Identity: "tenant", Limit: limitspec.FixedWindow{Limit: 1000, Window: time.Minute}},
		limitspec.PolicyLimit{Name: "tenant_daily", Identity: "tenant", Limit: limitspec.FixedWindow{Limit: 100_000, Window: 24 * time.Hour}},
	)
	if err != nil {
		t.Fatal(err)
	}
	store, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	local, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	primary := &switchable{Limiter: store}
	lim, err := fallback.New(primary, local, fallback.Options{Failures: 1000, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	start := hourStart()
	decide := func(tenant string, minute int, cost int64, n int, side limitspec.Side) (admitted int) {
		req := limitspec.Request{Policy: policy, IDs: map[string]string{"ip": "10.0.0.1", "tenant": tenant},
			Cost: cost, Now: start.Add(time.Duration(minute) * time.Minute)}
		for range n {
			res, err := lim.Limit(t.Context(), req)
			if err != nil || res.Side != side {
				t.Fatalf("%v, side %v; want a decision by %v", err, res.Side, side)
			}
			if res.Allowed {
				admitted++
			}
		}
		return admitted
	}
	byPrimary := decide("a", 0, 1000, 1, limitspec.Primary) + decide("a", 1, 1000, 1, limitspec.Primary) + decide("a", 2, 1, 1, limitspec.Primary)
	primary.down.Store(true)
	a, b := decide("a", 2, 1, 1200, limitspec.Fallback), decide("b", 2, 1, 20, limitspec.Fallback)
	if byPrimary != 3 || a != 999 || b != 10 {
		t.Errorf("admitted %d by the primary, then locally %d for tenant a and %d for tenant b; want 3, 999 and 10", byPrimary, a, b)
	}
}

// TestFailoverBurstQuota: the README's BurstQuotaPolicy(1000) (a burst of
// 5, 10 a second, and 1,000 a day per user), 100 requests admitted by the
// primary 100 ms apart, then the primary fails: the next request, 100 ms
// later, finds the burst as the primary left it (1 used of 5, less what
// 100 ms refilled) and is admitted; every limit starting from the most
// used, 100 of the day, refused it.
func TestFailoverBurstQuota(t *testing.T) {
	policy, err := limitspec.BurstQuotaPolicy(1000)
	if err != nil {
		t.Fatal(err)
	}
	store, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	local, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	primary := &switchable{Limiter: store}
	lim, err := fallback.New(primary, local, fallback.Options{Failures: 1000, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	start := hourStart()
	decide := func(i int) limitspec.Result {
		res, err := lim.Limit(t.Context(), limitspec.Request{Policy: policy, IDs: map[string]string{"user": "alice"},
			Cost: 1, Now: start.Add(time.Duration(i) * 100 * time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for i := range 100 {
		if res := decide(i); !res.Allowed || res.Side != limitspec.Primary {
			t.Fatalf("request %d: %+v; want admitted by the primary", i, res)
		}
	}
	primary.down.Store(true)
	if res := decide(100); !res.Allowed || res.Side != limitspec.Fallback {
		t.Errorf("the first request after the failover: allowed %v by %v; want admitted by the fallback", res.Allowed, res.Side)
	}
}

// TestFailoverPlansShareTheIP: two plans, each a policy (free, pro), with
// a per-IP limit named alike (100 a minute) and per-user limits of their
// own. The primary admits 60 requests of free users and 20 of a pro user
// from one IP, then fails: the IP's state, shared by the plans, starts
// once from the primary's last word on it (80 used), whichever plan's
// request comes first, and the IP is admitted the 20 it has left across
// both plans. (A report per plan started it twice, the second start
// erasing what the first plan had admitted since.)
func TestFailoverPlansShareTheIP(t *testing.T) {
	plan := func(name string, perUser int64) *limitspec.Policy {
		p, err := limitspec.NewPolicy(name,
			limitspec.PolicyLimit{Name: "per_ip", Identity: "ip", Limit: limitspec.FixedWindow{Limit: 100, Window: time.Minute}},
			limitspec.PolicyLimit{Name: "per_user", Identity: "user", Limit: limitspec.FixedWindow{Limit: perUser, Window: time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	free, pro := plan("free", 5), plan("pro", 1000)
	store, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	local, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	primary := &switchable{Limiter: store}
	lim, err := fallback.New(primary, local, fallback.Options{Failures: 1000, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	now := hourStart()
	admitted := map[limitspec.Side]int{}
	decide := func(p *limitspec.Policy, user string) {
		res, err := lim.Limit(t.Context(), limitspec.Request{Policy: p, IDs: map[string]string{"ip": "10.0.0.1", "user": user}, Cost: 1, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if res.Allowed {
			admitted[res.Side]++
		}
	}
	for i := range 60 {
		decide(free, "f"+strconv.Itoa(i))
	}
	for range 20 {
		decide(pro, "p")
	}
	primary.down.Store(true)
	for i := range 50 {
		decide(free, "g"+strconv.Itoa(i))
		decide(pro, "p")
	}
	if admitted[limitspec.Primary] != 80 || admitted[limitspec.Fallback] != 20 {
		t.Errorf("the IP was admitted %d by the primary and %d locally; want 80 and 20", admitted[limitspec.Primary], admitted[limitspec.Fallback])
	}
}
