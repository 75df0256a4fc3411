package linearize

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Workload is how the clients of Run call: Clients goroutines, client c
// calling for the identity value Values[c % len(Values)] (Values must not
// be empty), each making up to Calls calls, for at most Duration (0: no
// limit), pausing up to Pause between two.
// Each draws its calls from a generator seeded with Seed and its number:
//
//   - 20% decisions of cost 0 to 2;
//   - 30% reserves of 1 or 2 for 50 to 549 ms, of a new id of the
//     client's own or of one of a few ids the value's clients share
//     (reused: a retry, or BADINPUT when it holds another amount), 1 in
//     30 of cost 0 (BADINPUT);
//   - 22% commits of 0 to 3 and 13% releases, of an id the client's
//     reserve got (most), of one it ended already (sent again, half of
//     those as the call that ended it), or of a shared one;
//   - 15% renews for 50 to 549 ms, of an id it holds or a shared one.
type Workload struct {
	Clients  int
	Values   []string
	Calls    int
	Duration time.Duration
	Pause    time.Duration
	Seed     uint64
}

// Run runs w's clients on r until each has made its calls, Duration has
// passed or ctx is done.
func (w Workload) Run(ctx context.Context, r *Recorder) {
	if w.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.Duration)
		defer cancel()
	}
	var wg sync.WaitGroup
	for c := range w.Clients {
		wg.Go(func() {
			cl := &client{n: c, value: w.Values[c%len(w.Values)], rng: rand.New(rand.NewPCG(w.Seed, uint64(c)))}
			for range w.Calls {
				if ctx.Err() != nil {
					return
				}
				in := cl.next()
				cl.saw(in, r.Do(context.Background(), c, in))
				if w.Pause > 0 {
					time.Sleep(time.Duration(cl.rng.Int64N(int64(w.Pause))))
				}
			}
		})
	}
	wg.Wait()
}

// client is one client of a Workload: the ids its reserves got and has
// not ended, and the commits and releases that ended its holds.
type client struct {
	n     int
	value string
	rng   *rand.Rand
	made  int
	held  []string
	ended []ending
}

// ending is a commit or release that took effect.
type ending struct {
	id, op string
	cost   int64
}

// next draws the client's next call (its Now is the Recorder's).
func (c *client) next() Input {
	in := Input{Value: c.value}
	switch p := c.rng.IntN(100); {
	case p < 20:
		in.Op, in.Cost = Decide, c.rng.Int64N(3)
	case p < 50:
		in.Op, in.ID, in.Cost, in.HoldMs = Reserve, c.newID(), 1+c.rng.Int64N(2), 50+c.rng.Int64N(500)
		if c.rng.IntN(30) == 0 {
			in.Cost = 0
		}
	case p < 85:
		in.Op, in.Cost = Commit, c.rng.Int64N(4)
		if p >= 72 {
			in.Op, in.Cost = Release, 0
		}
		var again *ending
		in.ID, again = c.endID()
		if again != nil && c.rng.IntN(2) == 0 { // sent again as it was
			in.Op, in.Cost = again.op, again.cost
		}
	default:
		in.Op, in.ID, in.HoldMs = Renew, c.heldID(), 50+c.rng.Int64N(500)
	}
	return in
}

// saw notes the outcome of in: a reserve admitted holds its id, a commit
// or release that took effect ends it, and NOHOLD says it holds nothing.
func (c *client) saw(in Input, out Output) {
	switch {
	case out.Class == NoHold:
		c.held = slices.DeleteFunc(c.held, func(id string) bool { return id == in.ID })
	case out.Class != OK:
	case in.Op == Reserve && out.Allowed:
		c.held = append(c.held, in.ID)
	case in.Op == Commit || in.Op == Release:
		c.ended = append(c.ended, ending{id: in.ID, op: in.Op, cost: in.Cost})
	}
}

// newID is an id for a reserve: a shared one 1 time in 4, else a new
// one of the client's.
func (c *client) newID() string {
	if c.rng.IntN(4) == 0 {
		return c.sharedID()
	}
	c.made++
	return fmt.Sprintf("c%d-%d", c.n, c.made)
}

// endID is an id for a commit or release: one the client holds (taken
// off its list), most times; one it ended (and how), or a shared one,
// else.
func (c *client) endID() (string, *ending) {
	switch p := c.rng.IntN(10); {
	case p < 7 && len(c.held) > 0:
		i := c.rng.IntN(len(c.held))
		id := c.held[i]
		c.held = append(c.held[:i], c.held[i+1:]...)
		return id, nil
	case p < 9 && len(c.ended) > 0:
		e := c.ended[c.rng.IntN(len(c.ended))]
		return e.id, &e
	}
	return c.sharedID(), nil
}

// heldID is an id for a renew: one the client holds, or a shared one.
func (c *client) heldID() string {
	if len(c.held) > 0 && c.rng.IntN(4) != 0 {
		return c.held[c.rng.IntN(len(c.held))]
	}
	return c.sharedID()
}

// sharedID is one of the few ids the clients of a value share.
func (c *client) sharedID() string { return fmt.Sprintf("s%d", c.rng.IntN(5)) }
