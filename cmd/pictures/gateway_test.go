package main

import (
	"slices"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
)

// TestGatewaySeries holds the gateway's picture to arithmetic worked by
// hand. The bucket holds 1000 tokens and gains 1000/60 a second up to
// 1000; a call's remaining is the bucket's tokens less the tokens held,
// rounded down, and a reserve of 400 is admitted when that is at least
// 400. At 0 s and 1 s call-1 and call-2 reserve 400 each: 1000 − 800 =
// 200 remain, so call-3's reserve at 2 s is denied. call-1 commits 120 at
// 4 s: the bucket holds 880, less call-2's 400 held, 480. call-4 reserves
// at 5 s: 880 + 1000/60 = 896.7, less 800 held, 96. call-2 commits 380
// at 7 s: 880 + 3 × 1000/60 − 380 = 550, less call-4's 400, 150. call-5
// reserves at 9 s: 550 + 33.3 − 400 = 183 < 400: denied. call-4 releases
// at 10 s, spending nothing: 600, nothing held. call-6 holds from 12 s
// and commits 200 at 17 s: 600 + 7 × 1000/60 − 200 = 516.7; call-7 holds
// from 20 s (566.7 − 400 = 166), so call-8 at 24 s finds 633.3 − 400 =
// 233 < 400: denied.
func TestGatewaySeries(t *testing.T) {
	samples, events, err := gateway(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		at              time.Duration
		held, remaining int64
	}{
		{0, 400, 600},
		{1 * time.Second, 800, 200}, // right after the first two reserves: 1000 − 800
		{2 * time.Second, 800, 200},
		{4 * time.Second, 400, 480},
		{5 * time.Second, 800, 96},
		{7 * time.Second, 400, 150},
		{9 * time.Second, 400, 183},
		{10 * time.Second, 0, 600},
		{24 * time.Second, 400, 233},
	} {
		if got, ok := after(samples, tt.at); !ok || got.held != tt.held || got.remaining != tt.remaining {
			t.Errorf("at %v: held %d, remaining %d; want %d and %d", tt.at, got.held, got.remaining, tt.held, tt.remaining)
		}
	}
	var denied []string
	ended := 0
	for _, e := range events {
		switch {
		case e.op == limitspec.Reserve && !e.allowed:
			denied = append(denied, e.id)
		case e.op != limitspec.Reserve:
			ended++
		}
	}
	if want := []string{"call-3", "call-5", "call-8"}; !slices.Equal(denied, want) {
		t.Errorf("denied %v; want %v", denied, want)
	}
	if admitted := len(gatewayCalls) - len(denied); ended != admitted {
		t.Errorf("%d holds ended of %d admitted", ended, admitted)
	}
	for _, s := range samples {
		if s.held < 0 || s.remaining < 0 || s.held+s.remaining > gatewayLimit.Capacity {
			t.Errorf("at %v: held %d and remaining %d do not fit in %d", s.at, s.held, s.remaining, gatewayLimit.Capacity)
		}
	}
}

// after is the last sample at time at: the state after every call then.
func after(samples []sample, at time.Duration) (sample, bool) {
	for i := len(samples) - 1; i >= 0; i-- {
		if samples[i].at == at {
			return samples[i], true
		}
	}
	return sample{}, false
}
