package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/kit"
	"github.com/redis/go-redis/v9"
)

// partsSubject is a script whose instructions per decision the parts
// figure splits.
type partsSubject struct {
	real *redisDecider
	// reply is Lua that returns a constant reply of the real script's
	// shape.
	reply string
	// timed says that ARGV[1] is now_ms (see replayLua).
	timed bool
	// unchecked is the real script without its checks of the common
	// call (withoutChecks): ours; "" for a peer.
	unchecked string
}

// partsCases are the algorithms of the parts figure: limitspec's limit,
// the largest cost it admits at once (its reply's limit), and its
// hand-written peer with a constant reply of the peer's shape.
var partsCases = []struct {
	lim       limitspec.Limit
	most      int64
	peer      func() *redisDecider
	peerReply string
	peerTimed bool
}{
	{gcraLimit, gcraLimit.Burst, redisRateDecider, "return {1, 0, '-1', '0'}", false},
	{fixedWindowLimit, fixedWindowLimit.Limit, incrDecider, "return 1", false},
	{slidingLogLimit, slidingLogLimit.Limit, zcardDecider, "return 1", true},
}

// partsSubjects are the scripts of the parts figure: for each of
// partsCases, limitspec's script (EVALSHA, the caller's clock) and its
// peer.
func partsSubjects() ([]partsSubject, error) {
	var out []partsSubject
	for _, c := range partsCases {
		d, err := limitspecDecider(c.lim, false, byEvalSHA)
		if err != nil {
			return nil, err
		}
		s, _ := kit.LookupScripts(c.lim.Algorithm())
		unchecked, err := withoutChecks(s)
		if err != nil {
			return nil, err
		}
		out = append(out,
			partsSubject{real: d, reply: fmt.Sprintf("return {1, %d, 0, -1, 0, 0, 0}", c.most), timed: true, unchecked: unchecked},
			partsSubject{real: c.peer(), reply: c.peerReply, timed: c.peerTimed})
	}
	return out, nil
}

// instructionParts splits the instructions redis-server runs per
// admitted decision of each of partsSubjects into its parts (see
// partsOf).
func instructionParts(ctx context.Context, c *callgrindServer, o instrOptions) (Table, error) {
	subjects, err := partsSubjects()
	if err != nil {
		return Table{}, err
	}
	t := Table{
		Title: titleInstructionParts,
		Notes: []string{"Each script's instructions per admitted decision, as in the instructions figure (limitspec's by EVALSHA, on the caller's clock; redis_rate's script reads the server's TIME, counted among its commands), split by counting other scripts called with the same KEYS and ARGV in the same way. " +
			"Calling a script: a script that only returns a constant reply of the real one's shape (limitspec's {1, limit, 0, -1, 0, 0, 0}; redis_rate's {1, 0, '-1', '0'}; the INCR and ZCARD scripts' 1): reading, parsing and answering the call, finding the script and running Lua at all. " +
			"Its commands: the same script running first the commands one real call on an existing key ran, as MONITOR shows them, with the same arguments (the call's keys and arguments passed on as KEYS[i] and ARGV[i], what the script computed as constants, but a value that begins with now_ms's digits, written ARGV[1] .. the rest, so that a sorted set's member is new at each call as the real one is), checked to run the same commands as the real script on the same call; less calling. " +
			"Argument checks (limitspec's scripts alone): the real script less the same script whose check of the common call (from repeat to until true) is replaced by plain assignments of what it reads (x = ARGV[i] + 0 for an integer, force = ARGV[3] == '1', a string as given, checked = true), checked to reply as the real script on the same calls. " +
			"The rest: the script's own Lua beyond these: the real script (limitspec's, without its checks) less its commands and calling. " +
			o.method()},
		Columns: []Column{{"calling a script", Lower}, {"its commands", Lower}, {"argument checks", Lower}, {"the rest", Lower}, {"total", Lower}},
	}
	for _, s := range subjects {
		parts, err := c.partsOf(ctx, s, o)
		if err != nil {
			return Table{}, fmt.Errorf("%s: %w", s.real.Name, err)
		}
		t.Rows = append(t.Rows, Row{Group: s.real.Group, Name: s.real.Name, Ours: s.real.Ours, Values: parts})
	}
	return t, nil
}

// partsOf counts s's instructions per decision and its parts: calling,
// commands, checks (NaN for a peer), the rest and the total; see
// instructionParts' notes. The replay of the commands must run those the
// real script ran on the same call, as replayLua writes them (so that
// what each call was given is read from its own ARGV).
func (c *callgrindServer) partsOf(ctx context.Context, s partsSubject, o instrOptions) ([]float64, error) {
	total, err := c.count(ctx, s.real, o)
	if err != nil {
		return nil, err
	}
	ran, err := c.monitorNext(ctx, s.real, o)
	if err != nil {
		return nil, err
	}
	replay := replayLua(ran, s.timed)
	commands := s.real.running("its commands", replay+s.reply)
	replayed, err := c.count(ctx, commands, o)
	if err != nil {
		return nil, err
	}
	if again, err := c.monitorNext(ctx, commands, o); err != nil || replayLua(again, s.timed) != replay {
		return nil, fmt.Errorf("the replay of its commands ran %q, not %q (%v)", again.Ran, ran.Ran, err)
	}
	calling, err := c.count(ctx, s.real.running("a constant reply", s.reply), o)
	if err != nil {
		return nil, err
	}
	checks, rest := math.NaN(), total-replayed
	if s.unchecked != "" {
		unchecked := s.real.running("without its checks", s.unchecked)
		if err := sameReplies(ctx, c.rdb, s.real, unchecked, o); err != nil {
			return nil, err
		}
		n, err := c.count(ctx, unchecked, o)
		if err != nil {
			return nil, err
		}
		checks, rest = total-n, n-replayed
	}
	return []float64{calling, replayed - calling, checks, rest, total}, nil
}

// monitorNext monitors (monitor) the decision of d after the last one
// count sends, on the state count left.
func (c *callgrindServer) monitorNext(ctx context.Context, d *redisDecider, o instrOptions) (monitoredCall, error) {
	i := o.Keys + o.Decisions
	return monitor(ctx, c.addr, c.rdb, d, ids(o.Keys)[i%o.Keys], fixedClock(i))
}

// running is d calling the script src in its place: the same KEYS and
// ARGV, by EVALSHA of src.
func (d *redisDecider) running(what, src string) *redisDecider {
	sha := redis.NewScript(src).Hash()
	out := *d
	out.Name = d.Name + ", " + what
	out.load = loader(src)
	out.queue = func(ctx context.Context, p redis.Pipeliner, id string, now time.Time) *redis.Cmd {
		return d.queue(ctx, otherScript{p, sha}, id, now)
	}
	return &out
}

// otherScript is a pipeline whose EVALSHA calls the script of sha,
// whichever SHA1 it is given.
type otherScript struct {
	redis.Pipeliner
	sha string
}

// EvalSha queues EVALSHA of o.sha with keys and args.
func (o otherScript) EvalSha(ctx context.Context, _ string, keys []string, args ...any) *redis.Cmd {
	return o.Pipeliner.EvalSha(ctx, o.sha, keys, args...)
}

// withoutChecks is s's decision script whose check of the common call,
// the block from the line "repeat" to the line "until true", is
// replaced by plain assignments of the locals it sets, declared on the
// line before "local checked = false": now, cost and force, then s's
// Inputs and Params, in ARGV's order. An integer is ARGV[i] + 0, force
// ARGV[3] == '1', an input the string given; checked is true, so that
// the exact checks do not run either. The key's tail, which the block
// builds to compare with the key, is a local of the block that no later
// line can read: it is not built.
func withoutChecks(s *kit.Scripts) (string, error) {
	lines := strings.Split(s.Decide.Source, "\n")
	from, to := slices.Index(lines, "repeat"), slices.Index(lines, "until true")
	if from < 2 || to < from || lines[from-1] != "local checked = false" {
		return "", fmt.Errorf("%s: no check of the common call (repeat ... until true after local checked = false)", s.ID.Name)
	}
	names := strings.Split(strings.TrimPrefix(lines[from-2], "local "), ", ")
	want := append([]string{"now", "cost", "force"}, s.Inputs...)
	for _, p := range s.Params {
		want = append(want, p.Name)
	}
	if !slices.Equal(names, want) {
		return "", fmt.Errorf("%s: the check sets %q, not %q", s.ID.Name, names, want)
	}
	var set []string
	for i, n := range names {
		switch {
		case n == "force":
			set = append(set, fmt.Sprintf("force = ARGV[%d] == '1'", i+1))
		case i >= 3 && i < 3+len(s.Inputs):
			set = append(set, fmt.Sprintf("%s = ARGV[%d]", n, i+1))
		default:
			set = append(set, fmt.Sprintf("%s = ARGV[%d] + 0", n, i+1))
		}
	}
	set = append(set, "checked = true")
	out := slices.Concat(lines[:from], set, lines[to+1:])
	return strings.Join(out, "\n"), nil
}

// sameReplies checks that b replies as a does: each from a fresh Lua
// state, five decisions on each of up to 50 keys, at fixedClock.
func sameReplies(ctx context.Context, rdb *redis.Client, a, b *redisDecider, o instrOptions) error {
	keys := ids(min(o.Keys, 50))
	var got [2][]string
	for i, d := range []*redisDecider{a, b} {
		if err := freshLua(ctx, rdb); err != nil {
			return err
		}
		if err := d.load(ctx, rdb); err != nil {
			return err
		}
		var err error
		if got[i], err = replies(ctx, rdb, d, keys, 5*len(keys)); err != nil {
			return err
		}
	}
	for i := range got[0] {
		if got[0][i] != got[1][i] {
			return fmt.Errorf("%s replied %s where %s replied %s", b.Name, got[1][i], a.Name, got[0][i])
		}
	}
	return nil
}

// replies sends n decisions by d, decision i of keys[i % len(keys)] at
// fixedClock(i), and returns each reply as text.
func replies(ctx context.Context, rdb *redis.Client, d *redisDecider, keys []string, n int) ([]string, error) {
	p := rdb.Pipeline()
	cmds := make([]*redis.Cmd, n)
	for i := range cmds {
		cmds[i] = d.queue(ctx, p, keys[i%len(keys)], fixedClock(i))
	}
	if _, err := p.Exec(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", d.Name, err)
	}
	out := make([]string, n)
	for i, c := range cmds {
		out[i] = fmt.Sprint(c.Val())
	}
	return out, nil
}
