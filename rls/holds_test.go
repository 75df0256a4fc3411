package rls_test

import (
	"context"
	"testing"

	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/limitspec/limitspec/rls"
)

// llmConfig is an LLM gateway's limits per tenant: tokens a minute and
// calls in flight, both kept by holds.
const llmConfig = `
domain: llm
descriptors:
  - key: tenant
    descriptors:
      - key: unit
        value: tokens
        rate_limit: {unit: minute, requests_per_unit: 1000, holds: true}
      - key: unit
        value: slots
        rate_limit: {algorithm: concurrency, params: {limit: 2}, holds: true}
  - key: plain
    rate_limit: {unit: minute, requests_per_unit: 5}
`

// llm is a request of the tenant acme's tokens and slots, with the
// hold entries op and id (none when op is empty), costing tokens and
// slots.
func llm(op, id string, tokens, slots uint64) *pb.RateLimitRequest {
	var extra []string
	if op != "" {
		extra = []string{rls.HoldEntry, op, rls.HoldIDEntry, id}
	}
	t := costly(desc(append([]string{"tenant", "acme", "unit", "tokens"}, extra...)...), tokens)
	s := costly(desc(append([]string{"tenant", "acme", "unit", "slots"}, extra...)...), slots)
	return &pb.RateLimitRequest{Domain: "llm", Descriptors: []*rlv3.RateLimitDescriptor{t, s}}
}

// TestReserveCommit: a gateway reserves a call's tokens and a slot
// before the call and commits what it spent after, through descriptor
// entries; a reserve that would overdraw is refused and holds nothing;
// a commit charges what it says; a release charges nothing.
func TestReserveCommit(t *testing.T) {
	for _, tg := range targets()[:2] {
		t.Run(tg.name, func(t *testing.T) {
			c := newService(t, tg.new(t, newClock()), loadYAML(t, llmConfig), rls.Options{})
			run(t, c, []step{
				{llm("reserve", "j1", 600, 1), ok, []status{{ok, 400}, {ok, 1}}},
				{llm("reserve", "j2", 600, 1), over, []status{{over, 400}, {ok, 1}}},
				{llm("commit", "j1", 250, 0), ok, []status{{ok, 750}, {ok, 2}}},
				{llm("reserve", "j2", 600, 1), ok, []status{{ok, 150}, {ok, 1}}},
				{llm("release", "j2", 0, 0), ok, []status{{ok, 750}, {ok, 2}}},
				{llm("", "", 100, 0), ok, []status{{ok, 650}, {ok, 2}}},
			})
			_, err := c.ShouldRateLimit(context.Background(), llm("commit", "j2", 10, 0))
			if grpcstatus.Code(err) != codes.NotFound {
				t.Errorf("a commit of a released hold: %v, want NotFound", err)
			}
			run(t, c, []step{
				{llm("", "", 0, 0), ok, []status{{ok, 650}, {ok, 2}}},
				// a commit of nothing spent frees the slot, charging nothing
				{llm("reserve", "j3", 100, 1), ok, []status{{ok, 550}, {ok, 1}}},
				{llm("commit", "j3", 0, 0), ok, []status{{ok, 650}, {ok, 2}}},
			})
		})
	}
}

// TestHoldRefusals: a hold on a limit without holds, an unknown op, an
// op without its id, or ops that disagree are refused, holding nothing.
func TestHoldRefusals(t *testing.T) {
	c := newService(t, targets()[0].new(t, newClock()), loadYAML(t, llmConfig), rls.Options{})
	onPlain := &pb.RateLimitRequest{Domain: "llm", Descriptors: []*rlv3.RateLimitDescriptor{desc("plain", "x", rls.HoldEntry, "reserve", rls.HoldIDEntry, "j")}}
	badOp := llm("borrow", "j", 1, 1)
	noID := llm("reserve", "", 1, 1)
	disagree := llm("reserve", "j", 1, 1)
	disagree.Descriptors[1].Entries[len(disagree.Descriptors[1].Entries)-1].Value = "k"
	for name, req := range map[string]*pb.RateLimitRequest{"on a plain limit": onPlain, "unknown op": badOp, "no id": noID, "ids disagree": disagree} {
		if _, err := c.ShouldRateLimit(context.Background(), req); grpcstatus.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}
	run(t, c, []step{{llm("", "", 0, 0), ok, []status{{ok, 1000}, {ok, 2}}}})
}

// TestSlots: a descriptor of calls in flight (concurrency) reserves a
// slot per call and frees it at the commit, on every target, the
// Cluster included; there, a hold over descriptors of different values
// (different hash tags) is refused, holding nothing.
func TestSlots(t *testing.T) {
	slot := func(op, id string) *pb.RateLimitRequest {
		d := costly(desc("tenant", "acme", "unit", "slots", rls.HoldEntry, op, rls.HoldIDEntry, id), 1)
		if op == "commit" {
			d.HitsAddend = nil
			d = costly(d, 0)
		}
		return &pb.RateLimitRequest{Domain: "llm", Descriptors: []*rlv3.RateLimitDescriptor{d}}
	}
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			c := newService(t, tg.new(t, newClock()), loadYAML(t, llmConfig), rls.Options{})
			run(t, c, []step{
				{slot("reserve", "a"), ok, []status{{ok, 1}}},
				{slot("reserve", "b"), ok, []status{{ok, 0}}},
				{slot("reserve", "c"), over, []status{{over, 0}}},
				{slot("commit", "a"), ok, []status{{ok, 1}}},
				{slot("reserve", "c"), ok, []status{{ok, 0}}},
			})
			if tg.name != "cluster" {
				return
			}
			_, err := c.ShouldRateLimit(context.Background(), llm("reserve", "d", 10, 1))
			if grpcstatus.Code(err) != codes.InvalidArgument {
				t.Errorf("a hold over two hash tags on a Cluster: %v, want InvalidArgument", err)
			}
			run(t, c, []step{{llm("", "", 0, 0), ok, []status{{ok, 1000}, {ok, 0}}}})
		})
	}
}
