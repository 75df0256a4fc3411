package goimpl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitspec/limitspec"
)

// TestRequestIDRacing: 64 goroutines send one request of one id at once,
// on a window of 10: the request is charged once, and every goroutine
// gets its one result (9 remaining); then 64 goroutines, each with an id
// of its own, admit the 9 left.
func TestRequestIDRacing(t *testing.T) {
	l, err := New(Options{NoSweeper: true})
	if err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(1_700_000_000_000)
	req := limitspec.Request{Key: "k", Limit: limitspec.FixedWindow{Limit: 10, Window: time.Minute}, Cost: 1, Now: now}
	race := func(id func(i int) string) (admitted, nine int64) {
		var wg sync.WaitGroup
		var a, n atomic.Int64
		for i := range 64 {
			wg.Go(func() {
				r := req
				r.ID = id(i)
				res, err := l.Limit(context.Background(), r)
				if err != nil {
					t.Errorf("request %d: %v", i, err)
					return
				}
				if res.Allowed {
					a.Add(1)
				}
				if res.Limits[0].Remaining == 9 {
					n.Add(1)
				}
			})
		}
		wg.Wait()
		return a.Load(), n.Load()
	}
	if admitted, nine := race(func(int) string { return "once" }); admitted != 64 || nine != 64 {
		t.Errorf("64 requests of one id: %d admitted, %d with 9 remaining; want the one admission, 64 times", admitted, nine)
	}
	if admitted, _ := race(func(i int) string { return fmt.Sprint("other-", i) }); admitted != 9 {
		t.Errorf("64 requests of 64 ids: %d admitted; want the 9 left", admitted)
	}
}

// TestRequestIDRefusals: an id of 129 bytes, and a retry with another
// cost, are refused as bad input; the refused retry changes nothing.
func TestRequestIDRefusals(t *testing.T) {
	l, err := New(Options{NoSweeper: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := limitspec.Request{Key: "k", Limit: limitspec.GCRA{Burst: 3, Rate: 1, Period: time.Second}, Cost: 1,
		Now: time.UnixMilli(1_700_000_000_000), ID: strings.Repeat("x", 129)}
	if _, err := l.Limit(ctx, req); !errors.Is(err, limitspec.ErrBadInput) || !strings.Contains(err.Error(), "gcra: request id must be 1 to 128 bytes, got 129") {
		t.Errorf("an id of 129 bytes: %v; want ErrBadInput", err)
	}
	req.ID = "r"
	first, err := l.Limit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	req.Cost = 2
	if _, err := l.Limit(ctx, req); !errors.Is(err, limitspec.ErrBadInput) || !strings.Contains(err.Error(), "cost:force:limits 1:0:0") {
		t.Errorf("a retry of cost 2: %v; want ErrBadInput naming the request's", err)
	}
	req.Cost, req.ID, req.Peek = 0, "", true
	peek, err := l.Limit(ctx, req)
	if err != nil || peek.Limits[0].Remaining != first.Limits[0].Remaining {
		t.Errorf("peek after the refused retry: %+v, %v; want remaining %d", peek, err, first.Limits[0].Remaining)
	}
}

// TestRequestsForgotten: the results of requests past any retry's reach
// (REQUEST_MS plus the margin) are dropped as others are recorded, so
// that memory follows the ids of the last two minutes.
func TestRequestsForgotten(t *testing.T) {
	l, err := New(Options{NoSweeper: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lim := limitspec.FixedWindow{Limit: 1_000_000, Window: time.Minute}
	t0 := int64(1_700_000_000_000)
	for i := range 20_000 {
		now := time.UnixMilli(t0 + int64(i)*100) // 2,000 s in all
		if _, err := l.Limit(ctx, limitspec.Request{Key: "k", Limit: lim, Cost: 1, Now: now, ID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	kept := 0
	for i := range l.requests.shards {
		kept += len(l.requests.shards[i].byID)
	}
	// 1,200 ids within the last two minutes, and up to twice that
	// recorded since each shard's last sweep
	if kept > 4*1200 {
		t.Errorf("%d requests kept; want those of the last two minutes, give or take a sweep", kept)
	}
}
