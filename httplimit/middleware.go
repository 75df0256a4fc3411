package httplimit

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/limiters"
	"github.com/limitspec/limitspec/internal/refusal"
)

// Rule is what a request is decided by: a Limit, counting the request's
// Key, or a Policy, counting its IDs. The zero Rule limits nothing.
type Rule struct {
	Limit limitspec.Limit
	// Name names a Limit's quota in the header fields and problems; its
	// algorithm's name ("gcra") when empty. A policy's quotas are named
	// by its limits.
	Name   string
	Policy *limitspec.Policy
}

// IsZero reports whether r limits nothing.
func (r Rule) IsZero() bool { return limiters.IsNil(r.Limit) && r.Policy == nil }

// Options configure a Middleware. The rule of a request is the one Select
// gives it, if not zero; else the rule of its route in Routes, if any;
// else Options' own Limit or Policy. A request with no rule is served
// without a decision. At least one of them must be set. OPTIONS and HEAD
// requests are served without a decision, before any rule is sought,
// unless DecideOptions and DecideHead say otherwise.
type Options struct {
	// Limit (named Name) or Policy decides every request that Routes and
	// Select leave to it.
	Limit  limitspec.Limit
	Name   string
	Policy *limitspec.Policy
	// Routes are the rules of routes, by the pattern of the ServeMux route
	// a request matched ("GET /items/{id}"), exactly as it was registered.
	// Mux is that ServeMux, which Routes need: a middleware around the
	// whole mux (m.Handler(mux)) runs before the mux routes, and asks Mux
	// which pattern it will route the request to (one inside the mux,
	// mux.Handle(pattern, m.Handler(h)), reads Request.Pattern). With Mux,
	// the KeyFuncs, Cost and Select see that pattern in Request.Pattern
	// (but no path values), so that Route works around the mux too.
	Routes map[string]Rule
	Mux    *http.ServeMux
	// Select gives a request's rule from anything about it (a plan looked
	// up by API key, say); a zero Rule leaves the request to Routes and
	// the default. An error refuses the request as a KeyFunc's does; a
	// rule the middleware could not have been built with (both a Limit
	// and a Policy, a limit the limiter refuses, a policy's identity
	// without its KeyFunc) is the server's mistake: 500.
	Select func(r *http.Request) (Rule, error)
	// DecideOptions and DecideHead decide OPTIONS and HEAD requests as
	// any other. Without them, a request of either method is served as
	// it is, before Select and Routes are asked: no decision, no header
	// fields, no OnDecision. A CORS preflight (OPTIONS) is the browser's
	// request, not the client's, and charging it would make each
	// cross-origin call cost two; a HEAD is usually a monitor's or a
	// cache's. But a ServeMux serves HEAD by the handler of a GET
	// pattern, which runs in full (the server drops the body): where a
	// HEAD costs what a GET does, and so could run it unlimited, set
	// DecideHead. The methods are compared exactly, as ServeMux does:
	// "head" is not HEAD, and is decided.
	DecideOptions, DecideHead bool
	// Key gives Request.Key, what a Limit counts; nil means RemoteIP.
	Key KeyFunc
	// IDs give Request.IDs, a policy's identity values by name (ip_user
	// takes "ip" and "user"); every identity of every policy in the
	// options needs one.
	IDs map[string]KeyFunc
	// Cost gives Request.Cost; nil means 1. A cost of 0, with every
	// amount of Costs 0, is a peek: the request is decided, charged
	// nothing, and served if the limits have room. (Beside an amount of
	// Costs that is not 0, a limit without a unit counts 1, as
	// limitspec.Request.Cost says: give it a unit to count 0.) An error
	// refuses the request as a KeyFunc's does.
	Cost func(r *http.Request) (int64, error)
	// Costs gives Request.Costs, a policy's amounts by unit beside Cost
	// (docs/semantics.md, "Units"): the tokens an LLM call may use, the
	// bytes of a body; nil gives none. A limit counts its unit's amount
	// when Costs gives one, else Cost. A rule of a single Limit takes
	// none (a Limit counts Cost). An error refuses the request as a
	// KeyFunc's does.
	Costs func(r *http.Request) (map[string]int64, error)
	// QuotaName gives the name a quota is sent under in the header
	// fields and the problem's violated-policies; nil keeps its name.
	QuotaName func(name string) string
	// Fields names the header fields and their parameters; the zero
	// value is Draft11.
	Fields Fields
	// LegacyHeaders adds X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset, of the binding limit (of all the middlewares on
	// the route, the one that leaves the least remaining; the outer one's
	// on a tie); the reset is in seconds from now (a delta, rounded up),
	// not an epoch time.
	LegacyHeaders bool
	// DryRun (shadow mode) decides and sends the header fields, but
	// never answers on its own: the handler runs for denied requests,
	// refused keys and limiter errors alike. OnDecision tells what would
	// have been denied.
	DryRun bool
	// FailOpen serves the request, without RateLimit fields, when the
	// limiter fails with an error other than ErrBadInput and
	// ErrMisconfigured (Redis unavailable, say) instead of answering 503.
	// Package fallback, which decides locally while Redis is away, is
	// usually the better answer.
	FailOpen bool
	// OnDecision, if set, is called once for every request decided,
	// before the handler runs or the refusal is written, with the
	// request as the KeyFuncs saw it (with Mux, its route's pattern) and
	// the limiter's result and error, or the zero Result and the *Error
	// of a KeyFunc, Cost or Select: for logs, metrics and dry runs
	// (res.Allowed false with a nil err is a denial). It runs on the
	// request's goroutine.
	OnDecision func(r *http.Request, res limitspec.Result, err error)
	// HoldFor is how long a request of a holding policy's rule holds its
	// cost (holds.go): its hold ends by itself then, if the handler has
	// not returned (a process that died); 0 means DefaultHoldFor. At most
	// a day.
	HoldFor time.Duration
	// InFlightRetryAfter caps the Retry-After of a request denied for
	// want of a slot (a limit in flight, limitspec.InFlight, such as
	// concurrency): the limiter's wait counts each hold until its end,
	// HoldFor, the longest a holder may take, while a slot frees as soon
	// as a handler returns, which no one can foresee; 0 means
	// DefaultInFlightRetryAfter. A wait of another limit that denies too,
	// and is longer, is sent as it is.
	InFlightRetryAfter time.Duration
}

// Middleware limits the requests of the handlers it wraps by one
// limitspec.Limiter; make one with New. It is safe for concurrent use.
type Middleware struct {
	l      limitspec.Limiter
	opts   Options
	rule   Rule
	key    KeyFunc
	ids    map[string]KeyFunc // Options.IDs, checked
	routes map[string]Rule    // Options.Routes, checked
	// holdFor is Options.HoldFor or its default; holdIDs name the holds;
	// inFlightRetry is Options.InFlightRetryAfter or its default.
	holdFor       time.Duration
	inFlightRetry time.Duration
	holdIDs       *limiters.IDs
	fields        Fields
}

// New returns a Middleware deciding by l with opts. It refuses, with an
// error that names the mistake, what could not work: a nil limiter
// (typed nil included) or KeyFunc, no rule at all, a rule with both or
// neither of a limit and a policy, a Name given to a policy's rule (its
// quotas are named by its limits), a Policy not made by
// limitspec.NewPolicy, a limit or policy the limiter cannot decide (its
// limitspec.Checker says so; a limiter without one, the limit's
// Validate), a policy's identity without its KeyFunc, Routes without
// Mux, a route's pattern no ServeMux would register (an empty one
// included), Fields with a name missing, malformed or of a field the
// middleware sets itself. Each refusal reads "httplimit: misconfigured:
// ..." and matches limitspec.ErrMisconfigured, as every constructor's
// does (and, for a limit its Validate refuses, the limit's error too).
func New(l limitspec.Limiter, opts Options) (*Middleware, error) {
	m, err := newMiddleware(l, opts)
	if err != nil {
		return nil, refusal.Config("httplimit", "%w", err)
	}
	return m, nil
}

func newMiddleware(l limitspec.Limiter, opts Options) (*Middleware, error) {
	if limiters.IsNil(l) {
		return nil, errors.New("no Limiter (a nil one was given)")
	}
	m := &Middleware{l: l, opts: opts, key: opts.Key, fields: opts.Fields,
		rule: Rule{Limit: opts.Limit, Name: opts.Name, Policy: opts.Policy},
		ids:  maps.Clone(opts.IDs), routes: maps.Clone(opts.Routes),
		holdFor: cmp.Or(opts.HoldFor, DefaultHoldFor), holdIDs: limiters.NewIDs("http"),
		inFlightRetry: cmp.Or(opts.InFlightRetryAfter, DefaultInFlightRetryAfter)}
	if m.holdFor < time.Millisecond || m.holdFor > 24*time.Hour {
		return nil, fmt.Errorf("Options.HoldFor must be in [1ms, 24h], got %v", opts.HoldFor)
	}
	if m.inFlightRetry < 0 {
		return nil, fmt.Errorf("Options.InFlightRetryAfter must not be negative, got %v", opts.InFlightRetryAfter)
	}
	if m.fields == (Fields{}) {
		m.fields = Draft11
	}
	if m.key == nil {
		m.key = RemoteIP
	}
	if err := m.fields.check(); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(m.ids)) {
		if m.ids[name] == nil {
			return nil, fmt.Errorf("identity %s: nil KeyFunc", name)
		}
	}
	if err := m.checkRules(); err != nil {
		return nil, err
	}
	return m, nil
}

// checkRules refuses options whose rules could not work.
func (m *Middleware) checkRules() error {
	o := m.opts
	if m.rule.IsZero() && len(m.routes) == 0 && o.Select == nil {
		return errors.New("no rule: give Options a Limit, a Policy, Routes or Select")
	}
	if len(m.routes) > 0 && o.Mux == nil {
		return errors.New("Routes need Mux, the ServeMux that routes the requests, to find a request's route when the middleware wraps it")
	}
	if !m.rule.IsZero() {
		if err := m.checkRule("Options", m.rule); err != nil {
			return err
		}
	}
	for _, pattern := range slices.Sorted(maps.Keys(m.routes)) {
		r := m.routes[pattern]
		if err := checkPattern(pattern); err != nil {
			return err
		}
		if r.IsZero() {
			return fmt.Errorf("the route %q has an empty rule: give it a Limit or a Policy", pattern)
		}
		if err := m.checkRule(fmt.Sprintf("the route %q", pattern), r); err != nil {
			return err
		}
	}
	return nil
}

// checkPattern refuses a route's pattern that no ServeMux would register,
// and so no request's Pattern could equal: it registers the pattern on a
// ServeMux of its own, whose Handle panics at one.
func checkPattern(pattern string) (err error) {
	if pattern == "" {
		return errors.New(`a route has an empty pattern: give the ServeMux pattern it is for ("GET /items/{id}")`)
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the route %q is not a ServeMux pattern: %v", pattern, v)
		}
	}()
	http.NewServeMux().Handle(pattern, http.NotFoundHandler())
	return nil
}

// inFlightAlone names the in-flight limit (limitspec.InFlight:
// concurrency) of r when r holds nothing: its Limit, or a limit of a
// policy without holds; "" when it has none.
func inFlightAlone(r Rule) string {
	switch pl, found := limiters.InFlightAlone(r.Limit, r.Policy); {
	case !found:
		return ""
	case pl.Name == "":
		return "the limit " + r.Limit.Algorithm().String()
	default:
		return fmt.Sprintf("the limit %s of the policy %s", pl.Name, r.Policy.Name())
	}
}

// checkRule refuses a rule the middleware or its limiter cannot decide.
func (m *Middleware) checkRule(what string, r Rule) error {
	req := limitspec.Request{Limit: r.Limit, Policy: r.Policy}
	switch {
	case !limiters.IsNil(r.Limit) && r.Policy != nil:
		return fmt.Errorf("%s: give a Limit or a Policy, not both", what)
	case r.Policy != nil && r.Name != "":
		return fmt.Errorf("%s: Name %q names a Limit's quota; a policy's quotas are named by its limits", what, r.Name)
	case r.Policy != nil && r.Policy.Name() == "":
		return fmt.Errorf("%s: the Policy is a zero one: make it with limitspec.NewPolicy", what)
	case holds(r) && !isHolder(m.l):
		return fmt.Errorf("%s: the policy %s holds: the Limiter must keep holds (limitspec.Holder), as goimpl's, redislimit's and fallback's do", what, r.Policy.Name())
	case inFlightAlone(r) != "":
		return fmt.Errorf("%s: %s counts requests in flight, which only the holds of a holding policy count "+
			"(limitspec.NewPolicy(...).WithHolds(): each request holds its slot until its handler returns); "+
			"without holds it writes nothing and would admit every request", what, inFlightAlone(r))
	}
	if err := limiters.Check(m.l, req); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if r.Policy == nil {
		return nil
	}
	for _, id := range r.Policy.Identities() {
		if m.ids[id] == nil {
			return fmt.Errorf("%s: the policy %s counts the identity %q: give its KeyFunc in Options.IDs", what, r.Policy.Name(), id)
		}
	}
	return nil
}

// Handler wraps next: each request (but OPTIONS and HEAD ones, unless
// Options.DecideOptions and DecideHead) is decided by the limiter, with
// the request's context, then served by next with the RateLimit fields
// set, or answered with a problem (429 when denied; see the package
// documentation). It panics, as ServeMux.Handle does, if next is nil.
func (m *Middleware) Handler(next http.Handler) http.Handler {
	if next == nil {
		panic("httplimit: Handler of a nil http.Handler")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.exempt(r) {
			next.ServeHTTP(w, r)
			return
		}
		in := m.routed(r)
		rule, err := m.ruleOf(in)
		if err == nil && rule.IsZero() {
			next.ServeHTTP(w, r)
			return
		}
		var res limitspec.Result
		var h *held
		if err == nil {
			res, h, err = m.decide(in, rule)
		}
		if m.opts.OnDecision != nil {
			m.opts.OnDecision(in, res, err)
		}
		switch {
		case err == nil:
			m.setHeaders(w.Header(), res)
			if !res.Allowed && !m.opts.DryRun {
				notServed(r)
				m.deny(w, res)
				return
			}
		case m.opts.DryRun || m.failOpen(err):
		default:
			notServed(r)
			fail(w, err)
			return
		}
		if h != nil && res.Allowed {
			m.serveHeld(w, r, next, h)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// exempt reports whether r is served without a decision: an OPTIONS or
// HEAD request that the options do not ask to decide.
func (m *Middleware) exempt(r *http.Request) bool {
	switch r.Method {
	case http.MethodOptions:
		return !m.opts.DecideOptions
	case http.MethodHead:
		return !m.opts.DecideHead
	}
	return false
}

// routed is r as the KeyFuncs, Cost and Select see it: with the pattern
// of the route Mux will choose, when r has none yet (the middleware wraps
// the mux). It is a shallow copy; the next handler gets r itself.
func (m *Middleware) routed(r *http.Request) *http.Request {
	if m.opts.Mux == nil || r.Pattern != "" {
		return r
	}
	_, pattern := m.opts.Mux.Handler(r)
	if pattern == "" {
		return r
	}
	c := new(http.Request)
	*c = *r
	c.Pattern = pattern
	return c
}

// ruleOf is the rule of r: Select's, its route's, or the default.
func (m *Middleware) ruleOf(r *http.Request) (Rule, error) {
	if m.opts.Select != nil {
		rule, err := m.opts.Select(r)
		if err != nil {
			return Rule{}, asError(err)
		}
		if !rule.IsZero() {
			if err := m.checkRule("Select's rule", rule); err != nil {
				return Rule{}, &Error{Status: http.StatusInternalServerError,
					Detail: "the request's rate limit could not be chosen", Err: err}
			}
			return rule, nil
		}
	}
	if rule, ok := m.routes[r.Pattern]; ok {
		return rule, nil
	}
	return m.rule, nil
}

// failOpen reports whether err lets the request through under FailOpen:
// a limiter's error other than ErrBadInput and ErrMisconfigured.
func (m *Middleware) failOpen(err error) bool {
	var e *Error
	return m.opts.FailOpen && !errors.As(err, &e) && limiters.Outage(err)
}

// identities are the values of p's identities for r (every rule was
// checked to have their KeyFuncs).
func (m *Middleware) identities(r *http.Request, p *limitspec.Policy) (map[string]string, error) {
	names := p.Identities()
	ids := make(map[string]string, len(names))
	for _, name := range names {
		v, err := m.ids[name](r)
		if err != nil {
			return nil, asError(err)
		}
		ids[name] = v
	}
	return ids, nil
}

// decide builds the limitspec.Request of r under rule and decides it:
// for a holding policy's rule, by a reserve, whose hold it returns.
func (m *Middleware) decide(r *http.Request, rule Rule) (limitspec.Result, *held, error) {
	req, err := m.request(r, rule)
	if err != nil {
		return limitspec.Result{}, nil, err
	}
	if holds(rule) {
		return m.reserve(r.Context(), req)
	}
	res, err := m.l.Limit(r.Context(), req)
	if err == nil && rule.Name != "" && rule.Policy == nil {
		for i := range res.Limits {
			res.Limits[i].Name = rule.Name
		}
	}
	return res, nil, err
}

// request is the limitspec.Request of r under rule.
func (m *Middleware) request(r *http.Request, rule Rule) (limitspec.Request, error) {
	req := limitspec.Request{Limit: rule.Limit, Policy: rule.Policy, Cost: 1}
	var err error
	if rule.Policy == nil {
		if req.Key, err = m.key(r); err != nil {
			return req, asError(err)
		}
	} else if req.IDs, err = m.identities(r, rule.Policy); err != nil {
		return req, err
	}
	if m.opts.Cost != nil {
		if req.Cost, err = m.opts.Cost(r); err != nil {
			return req, asError(err)
		}
	}
	if m.opts.Costs != nil && rule.Policy != nil {
		if req.Costs, err = m.opts.Costs(r); err != nil {
			return req, asError(err)
		}
	}
	req.Peek = limiters.AsksNothing(req)
	return req, nil
}

// isHolder reports whether l keeps holds.
func isHolder(l limitspec.Limiter) bool {
	_, ok := l.(limitspec.Holder)
	return ok
}
