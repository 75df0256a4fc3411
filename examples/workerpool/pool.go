package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/limitspec/limitspec"
)

// The first part: tenant acme's jobs, shared by workers.
const (
	poolTenant = "acme"
	workers    = 8
	jobCount   = 20
	// jobHold is a job's hold: far longer than a job takes, so that it
	// ends by itself only when its worker has gone.
	jobHold = 10 * time.Second
)

// job is a job of the first part; it fails when fails is set.
type job struct {
	id    string
	fails bool
}

// jobs are the first part's: job-01 to job-20, of which those numbered
// by a multiple of 7 fail.
func jobs() []job {
	out := make([]job, jobCount)
	for i := range out {
		out[i] = job{id: fmt.Sprintf("job-%02d", i+1), fails: (i+1)%7 == 0}
	}
	return out
}

// poolReport is what the first part counted.
type poolReport struct {
	// maxInFlight is the most jobs in flight at once: each counted from
	// its admitted reserve until just before its commit or release.
	maxInFlight         int
	committed, released int
	failed              []string // the failed jobs' ids
	// after is a peek at the tenant's limits once every job has ended.
	after limitspec.Result
}

// pool is the first part's shared state.
type pool struct {
	lim    holdingLimiter
	policy *limitspec.Policy

	mu       sync.Mutex
	inFlight int
	report   poolReport
	// freed is closed, and replaced, when a job's hold ends: the workers
	// waiting for a slot try again.
	freed chan struct{}
	// full is closed when the jobs in flight first fill the slots.
	full chan struct{}
}

// runPool has the workers take every job, prints what they counted to
// out, and returns it.
func runPool(ctx context.Context, lim holdingLimiter, policy *limitspec.Policy, out io.Writer) (poolReport, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &pool{lim: lim, policy: policy, freed: make(chan struct{}), full: make(chan struct{})}
	queue := make(chan job)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			if errs[w] = p.worker(ctx, queue); errs[w] != nil {
				cancel()
			}
		})
	}
feed:
	for _, j := range jobs() {
		select {
		case queue <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return p.report, err
	}
	after, err := lim.Limit(ctx, request(policy, poolTenant, 0, start))
	if err != nil {
		return p.report, err
	}
	r := p.report
	r.after = after
	slices.Sort(r.failed) // in the order of their ids, not of their ends
	fmt.Fprintf(out, "tenant %s: %d jobs, %d workers; %d slots and %d jobs a minute\n", poolTenant, jobCount, workers, slots, perMinute)
	fmt.Fprintf(out, "  most jobs in flight at once: %d\n", r.maxInFlight)
	fmt.Fprintf(out, "  committed %d, released %d (failed: %s)\n", r.committed, r.released, strings.Join(r.failed, ", "))
	fmt.Fprintf(out, "  then: %s\n", remaining(after))
	return r, nil
}

// worker runs the jobs it takes from queue until it is closed.
func (p *pool) worker(ctx context.Context, queue <-chan job) error {
	for j := range queue {
		if err := p.run(ctx, j); err != nil {
			return fmt.Errorf("%s: %w", j.id, err)
		}
	}
	return nil
}

// run takes a slot for j, works it, and ends its hold: a commit of 1
// when it is done, a release when it failed.
func (p *pool) run(ctx context.Context, j job) error {
	if err := p.acquire(ctx, j.id); err != nil {
		return err
	}
	p.count(+1)
	err := p.work(ctx, j)
	p.count(-1) // before the hold ends, so the count never passes the slots held
	if err != nil && !errors.Is(err, errJobFailed) {
		return err
	}
	h, cost := limitspec.Hold{Op: limitspec.Commit, ID: j.id}, int64(1)
	if err != nil {
		h.Op, cost = limitspec.Release, 0
	}
	if _, err := p.lim.Hold(ctx, request(p.policy, poolTenant, cost, start), h); err != nil {
		return err
	}
	p.ended(j, h.Op)
	return nil
}

// acquire reserves a slot for id, waiting while none is free: until a
// job of this pool ends, or for as long as the limiter says (holds of
// other processes on the same Redis end by then; here every call is at
// start, so a job's end is what frees a slot).
func (p *pool) acquire(ctx context.Context, id string) error {
	for {
		p.mu.Lock()
		freed := p.freed
		p.mu.Unlock()
		res, err := p.lim.Hold(ctx, request(p.policy, poolTenant, 1, start),
			limitspec.Hold{Op: limitspec.Reserve, ID: id, For: jobHold})
		if err != nil || res.Allowed {
			return err
		}
		select {
		case <-freed:
		case <-time.After(res.RetryAfter):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// errJobFailed is a job's failure.
var errJobFailed = errors.New("job failed")

// work does j. It first waits until the jobs in flight fill the slots,
// so that every run shows the pool at its limit, whatever the scheduler
// does (for 5 s at most: a limiter that admitted fewer would show it in
// the count); then it works a moment. A job that could outlast its hold
// would renew it before its end (the second part shows it).
func (p *pool) work(ctx context.Context, j job) error {
	select {
	case <-p.full:
	case <-time.After(5 * time.Second):
	case <-ctx.Done():
		return ctx.Err()
	}
	time.Sleep(time.Millisecond)
	if j.fails {
		return errJobFailed
	}
	return nil
}

// count adds d to the jobs in flight, keeping their most.
func (p *pool) count(d int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inFlight += d
	if p.inFlight > p.report.maxInFlight {
		p.report.maxInFlight = p.inFlight
		if p.inFlight == slots {
			close(p.full)
		}
	}
}

// ended counts j, whose hold op ended, and wakes the waiting workers.
func (p *pool) ended(j job, op limitspec.HoldOp) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if op == limitspec.Commit {
		p.report.committed++
	} else {
		p.report.released++
		p.report.failed = append(p.report.failed, j.id)
	}
	close(p.freed)
	p.freed = make(chan struct{})
}
