package redislimit_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/redislimit"
)

// TestPlansShareByName: on Redis as in process, two plans built as two
// policies (free, pro), each with a per-IP limit named per_ip (5 an
// hour) and its own per-user limit, count one IP once: 20 requests
// from that IP, alternately a new free user and one pro user, admit 5
// in all; with the per-IP limits named apart, 5 in each plan. The keys
// say why: the per-IP state is {10.0.0.1}:per_ip:fw:3600000 for both.
func TestPlansShareByName(t *testing.T) {
	_, rdb := newClient(t)
	lim := newLimiter(t, rdb, redislimit.Options{})
	plan := func(name, ipLimit string, perUser int64) *limitspec.Policy {
		p, err := limitspec.NewPolicy(name,
			limitspec.PolicyLimit{Name: ipLimit, Limit: limitspec.FixedWindow{Limit: 5, Window: time.Hour}, Identity: "ip"},
			limitspec.PolicyLimit{Name: "per_user", Limit: limitspec.FixedWindow{Limit: perUser, Window: time.Hour}, Identity: "user"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for i, tc := range []struct {
		name      string
		free, pro *limitspec.Policy
		want      int
		ipKeys    []string
	}{
		{"one limit name", plan("free", "per_ip", 3), plan("pro", "per_ip", 100), 5, []string{"{10.0.0.0}:per_ip:fw:3600000"}},
		{"limits named apart", plan("free", "free_ip", 3), plan("pro", "pro_ip", 100), 10,
			[]string{"{10.0.0.1}:free_ip:fw:3600000", "{10.0.0.1}:pro_ip:fw:3600000"}},
	} {
		ip := "10.0.0." + strconv.Itoa(i)
		admitted := 0
		for n := range 20 {
			req := limitspec.Request{Policy: tc.free, IDs: map[string]string{"ip": ip, "user": "f" + strconv.Itoa(n)}, Cost: 1, Now: at(0)}
			if n%2 == 1 {
				req.Policy, req.IDs["user"] = tc.pro, "p"
			}
			res, err := lim.Limit(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Allowed {
				admitted++
			}
		}
		if admitted != tc.want {
			t.Errorf("%s: one IP admitted %d across the two plans; want %d", tc.name, admitted, tc.want)
		}
		for _, k := range tc.ipKeys {
			if n := rdb.Exists(t.Context(), k).Val(); n != 1 {
				t.Errorf("%s: the IP's state %s does not exist", tc.name, k)
			}
		}
	}
}

// TestStateNamesTheKey: a typed limit's State is the key its scripts
// write after the hash tag, for every algorithm (the scripts check the
// key against the parameters themselves), and a policy's limit keeps it
// under the limit's name.
func TestStateNamesTheKey(t *testing.T) {
	_, rdb := newClient(t)
	lim := newLimiter(t, rdb, redislimit.Options{})
	limits := []limitspec.Limit{
		limitspec.FixedWindow{Limit: 10, Window: time.Minute},
		limitspec.SlidingWindow{Limit: 10, Window: time.Minute},
		limitspec.SlidingLog{Limit: 10, Window: time.Minute},
		limitspec.BucketWindow{Limit: 10, Window: time.Minute, Bucket: time.Second, Limit2: 20, Window2: 2 * time.Minute},
		limitspec.MetaWindow{Limit: 10, Window: time.Minute},
		limitspec.TokenBucket{Capacity: 10, RefillTokens: 3, Refill: time.Second},
		limitspec.GCRA{Burst: 10, Rate: 3, Period: time.Second},
		limitspec.LeakyBucket{Capacity: 10, Rate: 3, Period: time.Second},
	}
	for i, l := range limits {
		key := "st" + strconv.Itoa(i)
		if _, err := lim.Limit(t.Context(), limitspec.Request{Key: key, Limit: l, Cost: 1, Now: at(0)}); err != nil {
			t.Fatal(err)
		}
		p, err := limitspec.NewPolicy("plan", limitspec.PolicyLimit{Name: "per_user", Limit: l, Identity: "user"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lim.Limit(t.Context(), limitspec.Request{Policy: p, IDs: map[string]string{"user": key}, Cost: 1, Now: at(0)}); err != nil {
			t.Fatal(err)
		}
		state := l.(limitspec.StateNamer).State()
		got := rdb.Keys(t.Context(), "{"+key+"}*").Val()
		want := []string{"{" + key + "}:" + state, "{" + key + "}:per_user:" + state}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: Redis holds %v; want %v", l.Algorithm(), got, want)
		}
	}
	if s := (limitspec.GCRA{Burst: 0, Rate: 3, Period: time.Second}).State(); s != "" {
		t.Errorf("an invalid limit's State is %q; want \"\"", s)
	}
}
