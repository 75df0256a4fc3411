package main

import (
	"fmt"
	"io"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limitcall"
	"github.com/limitspec/limitspec/kit"
	"github.com/redis/go-redis/v9"
)

// The policy comparison: ip_user's limits (10 per second, 120 per
// minute, 240 per hour, each per IP and per user) as the ip_user policy,
// one atomic call, against the same six fixed windows called one by one
// and pipelined. Each of policyPairs (IP, user) pairs gets policyRounds
// admitted requests, one a second.
const (
	policyPairs  = 200
	policyRounds = 100
)

// policyWay is one way of deciding the six limits, and what it cost.
type policyWay struct {
	label      string
	roundTrips int
	atomic     string
	usec       float64 // Redis-side CPU per request, every EVALSHA summed
	wall       float64 // client time per request, µs, requests one after another
	bytes      int64   // memory of one pair's keys
}

// measurePolicy decides policyRounds requests for each pair in each way
// and reports each way's costs.
func (m *measurer) measurePolicy() ([]*policyWay, error) {
	p, err := limitspec.IPUserPolicy()
	if err != nil {
		return nil, err
	}
	fw, _ := lookup("fixed_window")
	composed, err := limitcall.Composed(p)
	if err != nil {
		return nil, err
	}
	if err := m.rdb.ScriptLoad(m.ctx, composed.Source).Err(); err != nil {
		return nil, fmt.Errorf("SCRIPT LOAD %s: %v", composed.Name, err)
	}
	m.composed = composed
	ways := []*policyWay{
		{label: "policy " + p.Name() + " (its script, as redislimit composes it): one EVALSHA", roundTrips: 1, atomic: "yes: all or nothing"},
		{label: "six fixed_window EVALSHAs, one after another", roundTrips: 6, atomic: "no: earlier limits consume when a later one denies"},
		{label: "six fixed_window EVALSHAs, pipelined", roundTrips: 1, atomic: "no: earlier limits consume when a later one denies"},
	}
	for i, w := range ways {
		ids := func(pair int) map[string]string {
			return map[string]string{"ip": fmt.Sprintf("%d:ip%d", i, pair), "user": fmt.Sprintf("%d:user%d", i, pair)}
		}
		before, err := commandStats(m.ctx, m.rdb)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		for round := range policyRounds {
			for pair := range policyPairs {
				if err := m.decideWay(i, p, fw, ids(pair), now0+int64(round)*1000); err != nil {
					return nil, fmt.Errorf("%s: %v", w.label, err)
				}
			}
		}
		n := float64(policyRounds * policyPairs)
		w.wall = float64(time.Since(start).Microseconds()) / n
		after, err := commandStats(m.ctx, m.rdb)
		if err != nil {
			return nil, err
		}
		w.usec = float64(after["evalsha"].usec-before["evalsha"].usec) / n
		keys, _, _ := policyCall(p, m.prefix, ids(0), 0)
		if i > 0 {
			keys = separateKeys(m.prefix, p, fw, ids(0))
		}
		for _, k := range keys {
			b, err := m.rdb.MemoryUsage(m.ctx, k, 0).Result()
			if err != nil {
				return nil, fmt.Errorf("MEMORY USAGE %s: %v", k, err)
			}
			w.bytes += b
		}
	}
	return ways, nil
}

// separateKeys are the keys of the six limits called one by one: each
// limit's fixed_window key for identity value + ":" + limit name.
func separateKeys(prefix string, p *limitspec.Policy, fw script, ids map[string]string) []string {
	var out []string
	for _, l := range p.Limits() {
		out = append(out, keyNames(fw, prefix+ids[l.Identity]+":"+l.Name, limitParams(fw, l))...)
	}
	return out
}

// limitParams are a policy's limit's parameters by name, s being its
// algorithm's script.
func limitParams(s script, l limitspec.PolicyLimit) map[string]int64 {
	args, err := s.scripts.Args(l.Limit)
	if err != nil {
		panic(err) // the limits of a policy are valid
	}
	out := map[string]int64{}
	for i, v := range args {
		out[s.Params[i]] = v
	}
	return out
}

// decideWay decides one admitted request of one pair in way i; a denial
// is an error, since the load stays within every limit.
func (m *measurer) decideWay(i int, p *limitspec.Policy, fw script, ids map[string]string, t int64) error {
	if i == 0 {
		keys, _, err := policyCall(p, m.prefix, ids, t)
		if err != nil {
			return err
		}
		reply, err := m.rdb.EvalSha(m.ctx, m.composed.SHA1, keys, t, 1, kit.ForceArg(false)).Result()
		if err != nil || policyAllowed(reply) != 1 {
			return fmt.Errorf("reply %v, %v", reply, err)
		}
		return nil
	}
	pipe := m.rdb.Pipeline()
	for _, l := range p.Limits() {
		v := limitParams(fw, l)
		argv := []any{t, 1, kit.ForceArg(false)}
		for _, name := range fw.Params {
			argv = append(argv, v[name])
		}
		key := keyNames(fw, m.prefix+ids[l.Identity]+":"+l.Name, v)
		if i == 1 {
			reply, err := m.rdb.EvalSha(m.ctx, fw.SHA1, key, argv...).Result()
			if err != nil || allowed(reply) != 1 {
				return fmt.Errorf("reply %v, %v", reply, err)
			}
			continue
		}
		pipe.EvalSha(m.ctx, fw.SHA1, key, argv...)
	}
	if i == 1 {
		return nil
	}
	cmds, err := pipe.Exec(m.ctx)
	if err != nil {
		return err
	}
	for _, c := range cmds {
		if reply := c.(*redis.Cmd).Val(); allowed(reply) != 1 {
			return fmt.Errorf("reply %v", reply)
		}
	}
	return nil
}

// printPolicy writes the comparison table.
func printPolicy(w io.Writer, ways []*policyWay) {
	fmt.Fprintf(w, "\nThe limits of ip_user (10 per second, 120 per minute, 240 per hour, per IP and per user: six fixed windows) decided as one policy and as six calls. "+
		"Load: %d (IP, user) pairs, %d admitted requests each, one a second; requests one after another from one client on the same host. "+
		"Time: Redis-side CPU per request (EVALSHA usec in INFO commandstats, every call of the request summed); client time per request, round trips included.\n\n", policyPairs, policyRounds)
	fmt.Fprintln(w, "| way | round trips | atomic | time per request (µs, Redis-side CPU) | client time per request (µs) | bytes per (IP, user) pair (MEMORY USAGE) |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
	for _, x := range ways {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %d |\n", x.label, x.roundTrips, x.atomic, micros(x.usec), micros(x.wall), x.bytes)
	}
}

// policyAllowed is 1 when a policy's reply (the binding index, then each
// limit's seven integers) admits: every limit's allowed is 1; else 0, or
// -1 when the reply is not a policy's.
func policyAllowed(reply any) int64 {
	a, ok := reply.([]any)
	if !ok || len(a) < 8 || (len(a)-1)%7 != 0 {
		return -1
	}
	for i := 1; i < len(a); i += 7 {
		if x, _ := a[i].(int64); x != 1 {
			return 0
		}
	}
	return 1
}
