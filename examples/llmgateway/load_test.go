package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/fallback"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/internal/redistest"
	"github.com/limitspec/limitspec/redislimit"
)

// The load test's traffic: clients per API key, each sending requests
// one after the other and, after a 429, waiting a little (not what
// Retry-After says: a hold counts whole until its end, two minutes); and
// the model's reply times.
const (
	clientsPerKey = 25
	minReply      = 20 * time.Millisecond
	maxReply      = 200 * time.Millisecond
	minBackoff    = 20 * time.Millisecond
	maxBackoff    = 60 * time.Millisecond
)

// tenant is an API key and the max_tokens its requests ask for.
type tenant struct {
	key                  string
	minTokens, maxTokens int64
}

// tenants are the load test's API keys: acme asks for long answers, so
// that its tokens bind; globex for short ones, so that its slots (and,
// in a long run, its requests) bind.
var tenants = []tenant{
	{key: "sk-acme", minTokens: 500, maxTokens: 2000},
	{key: "sk-globex", minTokens: 20, maxTokens: 200},
}

// scenario is what happens to Redis and to the host during a run of the
// load test.
type scenario struct {
	name string
	// kill kills Redis after 30% of the run and starts it again at 50%;
	// persistent has it write every change to its append-only file first
	// (appendfsync always), so that it starts again with everything it
	// had, where it otherwise starts empty. freeze stops it (SIGSTOP)
	// instead, and resumes it at 50%, with the calls that waited for it.
	kill, persistent, freeze bool
	// busyLoops are the processes that spin on the CPU beside the run.
	busyLoops int
}

// scenarios are the load test's runs: the outage Redis's users fear most,
// an empty restart; a restart from the append-only file; a Redis that
// stops answering and then runs what waited for it; and no outage at all
// on a host whose CPUs are busy, where the fallback must not admit more
// than the limits.
var scenarios = []scenario{
	{name: "killed, restarted empty", kill: true},
	{name: "killed, restarted with its data", kill: true, persistent: true},
	{name: "frozen, resumed", freeze: true},
	{name: "healthy Redis, busy host", busyLoops: 2},
}

// TestLoad sends the HTTP gateway (server.go) 25 clients of each of two
// API keys for 20 s (5 s with -short), through a real HTTP server, on
// its production limiter: package fallback over package redislimit on a
// redis-server of its own, and package goimpl in process while Redis is
// away, in each of the scenarios. The test counts on the handler's side,
// never trusting the limiter's figures, the requests of each key inside
// the model handler at once, the tokens the model used and the requests
// it answered, and holds them to the bounds docs/semantics.md gives
// (inFlightBound, tokenBound, requestBound); on the client's side, that
// every answer is a 200, a 429 with a Retry-After of a positive number
// of seconds, or a 503 with one for a reserve that failed while the
// fallback's breaker was still closed, which the fallback denies
// (httplimit's answer to a fallback failing closed; the fallback in Mode
// Local decides every other request, and httplimit answers a limiter's
// error with a 503 without it); and, once the run is over, what Redis
// counts (checkRedis).
func TestLoad(t *testing.T) {
	length := 20 * time.Second
	if testing.Short() {
		length = 5 * time.Second
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			lt := newLoadTest(t, sc)
			stop := busyLoops(t, sc.busyLoops)
			lt.run(length)
			stop()
			lt.gateway.Close() // waits for the handlers, and so for their commits
			for _, tn := range tenants {
				lt.ledgers[tn.key].check(t, tn.key)
			}
			lt.checkRedis(t)
			if sc.outage() {
				t.Logf("Redis down for %v (gone at +%v, answering again at +%v)",
					lt.restartedAt.Sub(lt.killedAt).Round(time.Millisecond), lt.since(lt.killedAt), lt.since(lt.restartedAt))
				if !lt.localAsked.Load() {
					t.Error("the fallback never asked the local limiter to reserve: the outage was not exercised")
				}
			}
			t.Logf("the fallback's breaker: %s; %+v", lt.breaker(), lt.lim.Stats())
		})
	}
}

// busyLoops starts n processes that spin on the CPU, each a copy of the
// test binary (TestMain spins when busyLoopEnv is set), and returns the
// function that kills them (also called when the test ends).
func busyLoops(t *testing.T, n int) (stop func()) {
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
		cmds = nil
	}
	t.Cleanup(stop)
	for range n {
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), busyLoopEnv+"=1")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	return stop
}

// busyLoopEnv, set in its environment, makes the test binary spin on
// the CPU until killed, running no test.
const busyLoopEnv = "LLMGATEWAY_BUSY_LOOP"

func TestMain(m *testing.M) {
	if os.Getenv(busyLoopEnv) != "" {
		for {
		}
	}
	os.Exit(m.Run())
}

// loadTest is the gateway under load, and what it saw.
type loadTest struct {
	sc      scenario
	srv     *redistest.Server
	rdb     *redis.Client
	lim     *fallback.Limiter
	gateway *httptest.Server
	ledgers map[string]*ledger // by API key
	// dead is set once Redis is killed or frozen (its first run can
	// admit nothing more until it is back), restarting before it is
	// started or resumed (it may admit from then on), localAsked when
	// the fallback first asks the local limiter to reserve.
	dead, restarting, localAsked   atomic.Bool
	startAt, killedAt, restartedAt time.Time
	mu                             sync.Mutex
	changes                        []string // the breaker's, with their times
}

// newLoadTest starts Redis and the gateway on its production limiter.
func newLoadTest(t *testing.T, sc scenario) *loadTest {
	var args []string
	if sc.persistent {
		args = []string{"--appendonly", "yes", "--appendfsync", "always"}
	}
	lt := &loadTest{sc: sc, srv: redistest.StartServer(t, args...), ledgers: map[string]*ledger{}}
	for _, tn := range tenants {
		lt.ledgers[tn.key] = newLedger()
	}
	rdb, err := redisClient(lt.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	lt.rdb = rdb
	t.Cleanup(func() { rdb.Close() })
	local, err := goimpl.New(goimpl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	lt.lim, err = productionLimiter(t.Context(), rdb, "", watchedLocal{local, &lt.localAsked},
		fallback.Options{Logger: slog.New(slog.DiscardHandler), OnStateChange: lt.breakerChanged})
	if err != nil {
		t.Fatal(err)
	}
	h, err := newServer(lt.lim, pro, lt.observed(simulatedModel(minReply, maxReply)))
	if err != nil {
		t.Fatal(err)
	}
	lt.gateway = httptest.NewServer(lt.arrivals(h))
	t.Cleanup(lt.gateway.Close)
	return lt
}

// checkRedis checks, once the run is over and every request has
// committed, what Redis counts of each key, read by a redislimit
// limiter of its own: after calls of the fallback (peeks) have let it
// send Redis what Redis is owed (the commits and releases that failed,
// the local charges), no slot is held there, and, unless Redis forgot
// (an empty restart), its requests of the day equal the requests the
// model served: every local admission was paid back, none twice.
func (lt *loadTest) checkRedis(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	policy, err := llmPolicy(pro)
	if err != nil {
		t.Fatal(err)
	}
	peek := func(key string) limitspec.Request {
		return limitspec.Request{Policy: policy, IDs: map[string]string{"api_key": key}, Peek: true}
	}
	// A release owed for a reserve whose outcome was unknown is due a
	// second after it failed: peeks for up to 5 s.
	for try := 0; try < 250 && lt.lim.Stats().SettlesOwed > 0 || try == 0; try++ {
		for _, tn := range tenants {
			if _, err := lt.lim.Limit(ctx, peek(tn.key)); err != nil {
				t.Fatalf("a peek through the fallback: %v", err)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := lt.lim.Stats().SettlesOwed; n > 0 {
		t.Errorf("the fallback still owes Redis %d commits or releases", n)
	}
	remote, err := redislimit.New(ctx, lt.rdb, redislimit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range tenants {
		res, err := remote.Limit(ctx, peek(tn.key))
		if err != nil {
			t.Fatalf("a peek on Redis: %v", err)
		}
		left := map[string]int64{}
		for _, l := range res.Limits {
			left[l.Name] = l.Remaining
		}
		l := lt.ledgers[tn.key]
		served, counted := int64(len(l.served)), pro.daily-left["daily"]
		t.Logf("%s: Redis counts %d requests of the day for %d served; %d slots free of %d", tn.key, counted, served, left["slots"], pro.slots)
		if left["slots"] != pro.slots {
			t.Errorf("%s: Redis holds %d slots of the key's, whose requests have all committed", tn.key, pro.slots-left["slots"])
		}
		if (lt.sc.sameRedis() || !lt.sc.outage()) && counted != served {
			t.Errorf("%s: Redis counts %d requests of the day, the model served %d", tn.key, counted, served)
		}
	}
}

// watchedLocal is the local limiter, noting when it is first asked to
// reserve: before then, it has admitted nothing.
type watchedLocal struct {
	*goimpl.Limiter
	asked *atomic.Bool
}

// Hold notes a reserve, then runs h on the local limiter.
func (w watchedLocal) Hold(ctx context.Context, req limitspec.Request, h limitspec.Hold) (limitspec.Result, error) {
	if h.Op == limitspec.Reserve {
		w.asked.Store(true)
	}
	return w.Limiter.Hold(ctx, req, h)
}

// run sends the traffic for length, killing Redis and starting it again
// meanwhile if the scenario says so, and returns once every client has
// had its last answer.
func (lt *loadTest) run(length time.Duration) {
	lt.startAt = time.Now()
	end := lt.startAt.Add(length)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clientsPerKey * len(tenants)}}
	defer hc.CloseIdleConnections()
	var wg sync.WaitGroup
	for _, tn := range tenants {
		for range clientsPerKey {
			wg.Go(func() { lt.client(hc, tn, end) })
		}
	}
	if lt.sc.outage() {
		time.Sleep(time.Until(lt.startAt.Add(length * 3 / 10)))
		lt.stop()
		lt.dead.Store(true)
		lt.killedAt = time.Now()
		time.Sleep(time.Until(lt.startAt.Add(length / 2)))
		lt.restarting.Store(true)
		lt.back()
		lt.restartedAt = time.Now()
	}
	wg.Wait()
}

// outage reports whether Redis goes away in the scenario; sameRedis
// whether it comes back with what it had.
func (sc scenario) outage() bool    { return sc.kill || sc.freeze }
func (sc scenario) sameRedis() bool { return sc.persistent || sc.freeze }

// stop kills or freezes Redis, as the scenario says; back starts or
// resumes it.
func (lt *loadTest) stop() {
	if lt.sc.freeze {
		lt.srv.Pause()
		return
	}
	lt.srv.Kill()
}

func (lt *loadTest) back() {
	if lt.sc.freeze {
		lt.srv.Resume()
		return
	}
	lt.srv.Restart()
}

// client sends tn's requests until end.
func (lt *loadTest) client(hc *http.Client, tn tenant, end time.Time) {
	l := lt.ledgers[tn.key]
	for time.Now().Before(end) {
		a, err := lt.send(hc, tn)
		l.answered(a, err)
		if a.status != http.StatusOK {
			time.Sleep(minBackoff + rand.N(maxBackoff-minBackoff))
		}
	}
}

// answer is what a client got.
type answer struct {
	status     int
	retryAfter string
	body       []byte
}

// send sends a request of tn, of a random max_tokens.
func (lt *loadTest) send(hc *http.Client, tn tenant) (answer, error) {
	req, err := http.NewRequest(http.MethodPost, lt.gateway.URL+"/v1/completions", nil)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set(apiKeyHeader, tn.key)
	req.Header.Set(maxTokensHeader, strconv.FormatInt(tn.minTokens+rand.Int64N(tn.maxTokens-tn.minTokens+1), 10))
	resp, err := hc.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: body}, err
}

// visit is a request as it arrived at the gateway, before the
// middleware: its API key, and whether Redis's first run was alive then.
type visit struct {
	key        string
	firstAlive bool
}

type visitKey struct{}

// arrivals notes each request's visit, in its context, for the model.
func (lt *loadTest) arrivals(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := &visit{key: r.Header.Get(apiKeyHeader), firstAlive: !lt.dead.Load()}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), visitKey{}, v)))
	})
}

// observed is m, counting in its key's ledger the requests inside it and
// the tokens each used, with the limiters that may have admitted it
// (mayAdmit).
func (lt *loadTest) observed(m model) model {
	return func(ctx context.Context, maxTokens int64) (int64, error) {
		v := ctx.Value(visitKey{}).(*visit)
		l := lt.ledgers[v.key]
		may := lt.mayAdmit(v)
		at := l.enter(may)
		used, err := m(ctx, maxTokens)
		l.leave(serving{at: at, used: used, may: may})
		return used, err
	}
}

// mayAdmit is the limiters that may have admitted the request of v,
// which has just entered the handler:
//
//   - Redis's first run, if it was alive when the request arrived; and
//     after a restart from its data, or a freeze, which it continues,
//     if it has been started or resumed since;
//   - Redis's second run, started empty, if it has been started by now;
//   - the local limiter, if the fallback has asked it to reserve by now
//     and Redis went away. On a healthy Redis, the fallback and Redis
//     together are one limiter ("The fallback's bound": L, with one
//     process that heard Redis's last word, which a flip of the breaker
//     on a busy host does not change).
func (lt *loadTest) mayAdmit(v *visit) admitters {
	restarted := lt.restarting.Load()
	return admitters{
		first:  v.firstAlive || lt.sc.sameRedis() && restarted,
		second: !lt.sc.sameRedis() && restarted,
		local:  lt.sc.outage() && lt.localAsked.Load(),
	}
}

// breakerChanged notes a change of the fallback's breaker, and when.
func (lt *loadTest) breakerChanged(from, to fallback.State) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.changes = append(lt.changes, fmt.Sprintf("%v at +%v", to, lt.since(time.Now())))
}

// breaker is the breaker's changes, in order.
func (lt *loadTest) breaker() string {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return strings.Join(lt.changes, ", ")
}

// since is t as an offset from the run's start.
func (lt *loadTest) since(t time.Time) time.Duration {
	return t.Sub(lt.startAt).Round(time.Millisecond)
}

// admitters are the limiters that may have admitted a request: Redis's
// first run, its second (started empty), the local limiter.
type admitters struct{ first, second, local bool }

// or is the limiters that may have admitted a or b.
func (a admitters) or(b admitters) admitters {
	return admitters{a.first || b.first, a.second || b.second, a.local || b.local}
}

// count is the number of them.
func (a admitters) count() int64 {
	var n int64
	for _, b := range []bool{a.first, a.second, a.local} {
		if b {
			n++
		}
	}
	return n
}

// inFlightBound is the most requests of a key that may be inside the
// model handler at once, when may says which limiters may have admitted
// those in it (docs/semantics.md). A request holds its slot from its
// reserve to its commit, after the handler has returned; no hold ends
// by itself within the run (holdFor, two minutes, is longer). So:
//
//   - each run of Redis admits a reserve only while fewer than the slots
//     are held on it ("Holds": "a reserve of 1 acquires one while fewer
//     than n are held"): at most the slots of the requests it admitted
//     are in the handler at once. Its first run held them when it was
//     killed, and they may still be running while the local limiter and
//     its second run admit others: "Holds the primary kept when it went
//     away keep counting there until each ends". Its second run, started
//     empty, knows nothing of them ("Redis restarted empty": "what Redis
//     forgot: up to L more in the window of the restart");
//   - the local limiter holds at most the process's share of the slots,
//     all of them with one process ("Holds behind the fallback": "a limit
//     admits at most L on the primary (its holds included) plus L shared
//     by the processes locally"). Its holds stay until they end: a commit
//     the fallback sends to Redis once it is back finds no hold there
//     (NOHOLD) and is not told to the local limiter.
//
// So the bound is the slots times the limiters that may have admitted a
// request in the handler: 4 before the kill (8 if a slow Redis call let
// the local limiter decide), 8 while Redis is away, 12 when requests of
// both runs and the local limiter's overlap, the row "Redis down behind
// fallback, with holds" plus "Redis restarted empty".
func inFlightBound(may admitters) int64 { return may.count() * pro.slots }

// tokenBound is the most tokens the requests of a key that entered the
// handler within a window of d (on the wall clock, in whole ms, as the
// limiters read it) may have used, when k limiters may have admitted
// them. A limiter's token bucket admits a reserve of max_tokens only
// when what it has charged and not refilled, plus what is held, plus
// max_tokens fits in its capacity; it holds them until the commit, after
// the handler, and charges the tokens used, at most max_tokens. So at
// the last reserve it admitted of the requests that entered within [t1,
// t2], each of the others was still held (whole) or committed at or
// after t1 (its tokens used charged, less at most the refill since t1):
// their tokens used are at most the capacity plus the refill over t2 −
// t1. That is L for a bucket over a window ("L is a limit's quota over
// one of its windows (for a GCRA or a bucket, its burst at one
// instant)", plus what refills over it), per limiter: up to 3 L over a
// window of the outage, as for the slots. No hold ends by itself within
// the run, which would give back what it held without charging it. A ms
// more: the local limiter reads the wall clock by the monotonic one
// between its readings.
//
// The tokens used are what the bucket bounds, and what the key is billed
// for. The max_tokens reserved are not bounded: a commit gives back what
// its answer did not take, which later reserves may hold again.
func tokenBound(k int64, d time.Duration) int64 {
	ms := d.Milliseconds() + 1
	perMinute := time.Minute.Milliseconds()
	return k * (pro.tokens + (pro.tokens*ms+perMinute-1)/perMinute)
}

// requestBound is the most requests of a key that may have entered the
// handler within a minute of the fixed window (aligned to the epoch),
// when k limiters may have admitted them. A limiter's window admits a
// reserve only when the requests it has counted in the minute, plus those
// held, plus 1, are at most its limit; a commit counts the request in the
// minute it comes, after the handler. So the requests that entered in a
// minute were counted in it or still held at its last admission: at most
// the limit L per limiter ("L is a limit's quota over one of its
// windows").
func requestBound(k int64) int64 { return k * pro.requests }

// ledger is what the handler and the clients of one API key saw.
type ledger struct {
	mu sync.Mutex
	// inFlight are the requests inside the model handler, first and
	// second those of them that Redis's first and second runs may have
	// admitted.
	inFlight, first, second int64
	mostInFlight, boundThen int64 // the most in flight at once, and its bound then
	served                  []serving
	statuses                map[int]int
	deniedBy                map[string]int
	// over are the in-flight counts past their bound, badRetry the 429s
	// without a positive Retry-After, failures the other answers and the
	// requests that got none.
	over, badRetry, failures samples
}

// samples counts events, keeping the first few.
type samples struct {
	n     int
	first []string
}

// add counts an event, keeping it if it is among the first few.
func (s *samples) add(format string, args ...any) {
	if s.n++; len(s.first) < 5 {
		s.first = append(s.first, fmt.Sprintf(format, args...))
	}
}

// newLedger returns an empty ledger.
func newLedger() *ledger { return &ledger{statuses: map[int]int{}, deniedBy: map[string]int{}} }

// serving is a request the model answered: when it entered the handler,
// the tokens it used, and the limiters that may have admitted it.
type serving struct {
	at   time.Time
	used int64
	may  admitters
}

// enter counts a request entering the handler, admitted by one of may,
// and returns the time.
func (l *ledger) enter(may admitters) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight++
	if may.first {
		l.first++
	}
	if may.second {
		l.second++
	}
	// The local limiter may have admitted a request in the handler only
	// if it was asked before it entered, and the flag stays set.
	bound := inFlightBound(admitters{first: l.first > 0, second: l.second > 0, local: may.local})
	if l.inFlight > l.mostInFlight {
		l.mostInFlight, l.boundThen = l.inFlight, bound
	}
	if l.inFlight > bound {
		l.over.add("%d in flight, bound %d", l.inFlight, bound)
	}
	return time.Now()
}

// leave counts s leaving the handler.
func (l *ledger) leave(s serving) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
	if s.may.first {
		l.first--
	}
	if s.may.second {
		l.second--
	}
	l.served = append(l.served, s)
}

// answered counts what a client got.
func (l *ledger) answered(a answer, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err != nil:
		l.failures.add("%v", err)
		return
	case a.status == http.StatusTooManyRequests:
		if n, err := strconv.Atoi(a.retryAfter); err != nil || n < 1 {
			l.badRetry.add("Retry-After %q: %s", a.retryAfter, a.body)
		}
		var p struct {
			Violated []string `json:"violated-policies"`
		}
		json.Unmarshal(a.body, &p)
		for _, name := range p.Violated {
			l.deniedBy[name]++
		}
	case a.status == http.StatusServiceUnavailable && bytes.Contains(a.body, []byte("temporary-reduced-capacity")):
		// a reserve that failed while the breaker was closed: denied by
		// the fallback failing closed, to be tried again
		if n, err := strconv.Atoi(a.retryAfter); err != nil || n < 1 {
			l.badRetry.add("Retry-After %q: %s", a.retryAfter, a.body)
		}
	case a.status != http.StatusOK:
		l.failures.add("%d: %s", a.status, a.body)
	}
	l.statuses[a.status]++
}

// window is a span of time, what the requests that entered the handler
// within it took (tokens, or requests), the number of limiters that may
// have admitted them, and the bound of what they may take.
type window struct {
	from, to         time.Time
	amount, k, bound int64
}

// length is the window's, as the limiters count time: the difference
// of its ends on the wall clock, in whole ms.
func (w window) length() time.Duration {
	return time.Duration(w.to.UnixMilli()-w.from.UnixMilli()) * time.Millisecond
}

// share orders windows by how close they came to their bounds.
func (w window) share() float64 { return float64(w.amount) / float64(max(w.bound, 1)) }

// String is what the window took, and its bound.
func (w window) String() string {
	return fmt.Sprintf("%d (bound %d, limiters %d, over %v)", w.amount, w.bound, w.k, w.length())
}

// check holds l to the bounds, and logs what it counted.
func (l *ledger) check(t *testing.T, key string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	slices.SortFunc(l.served, func(a, b serving) int { return a.at.Compare(b.at) })
	closest, minute, over := tokenWindows(l.served)
	minutes := requestWindows(l.served)
	for _, w := range minutes {
		if w.amount > w.bound {
			over = append(over, w)
		}
	}
	for _, f := range []struct {
		what string
		s    samples
	}{
		{"times more requests in flight than their bound", l.over},
		{"429s without a positive Retry-After", l.badRetry},
		{"answers neither 200 nor 429, or no answers", l.failures},
	} {
		if f.s.n > 0 {
			t.Errorf("%s: %d %s; the first: %s", key, f.s.n, f.what, strings.Join(f.s.first, "; "))
		}
	}
	for _, w := range over {
		t.Errorf("%s: the requests that entered the handler from %s took %v", key, w.from.Format("15:04:05.000"), w)
	}
	if len(l.served) == 0 {
		t.Errorf("%s: no request served", key)
	}
	t.Logf("%s: %d served, %d denied (429s by limit %v), %d other answers or none\n"+
		"\t503s while the breaker was closed: %d\n"+
		"\tin flight at once: at most %d (bound then %d)\n"+
		"\ttokens used: the most within a minute %v; the closest to its bound %v\n"+
		"\trequests per minute of the window: %v",
		key, l.statuses[http.StatusOK], l.statuses[http.StatusTooManyRequests], l.deniedBy, l.failures.n,
		l.statuses[http.StatusServiceUnavailable], l.mostInFlight, l.boundThen, minute, closest, minutes)
}

// tokenWindows scans the windows between the entries of served (sorted
// by entry): it returns the window closest to its bound, the one of the
// most tokens within a minute, and those past their bounds.
func tokenWindows(served []serving) (closest, minute window, over []window) {
	for i := range served {
		var w window
		var may admitters
		for j := i; j < len(served); j++ {
			may = may.or(served[j].may)
			w = window{from: served[i].at, to: served[j].at, amount: w.amount + served[j].used, k: may.count()}
			w.bound = tokenBound(w.k, w.length())
			if w.amount > w.bound && len(over) < 10 {
				over = append(over, w)
			}
			if w.share() > closest.share() {
				closest = w
			}
			if w.length() <= time.Minute && w.amount > minute.amount {
				minute = w
			}
		}
	}
	return closest, minute, over
}

// requestWindows counts the requests of served (sorted by entry) that
// entered the handler in each minute of the requests limit's window.
func requestWindows(served []serving) []window {
	var ws []window
	var may admitters
	for _, s := range served {
		from := s.at.Truncate(time.Minute)
		if len(ws) == 0 || !ws[len(ws)-1].from.Equal(from) {
			ws, may = append(ws, window{from: from, to: from.Add(time.Minute)}), admitters{}
		}
		w := &ws[len(ws)-1]
		may = may.or(s.may)
		w.amount++
		w.k = may.count()
		w.bound = requestBound(w.k)
	}
	return ws
}
