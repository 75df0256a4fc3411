package httplimit

import (
	"errors"
	"net/http"
	"sort"

	"github.com/limitspec/limitspec"
)

// Options configure a Middleware. The zero value limits each client IP
// address as the connection shows it (RemoteIP) at a cost of 1 per
// request, answers a limiter error with 503 and sends the RateLimit and
// RateLimit-Policy fields only.
type Options struct {
	// Key gives Request.Key, what an algorithm's limiter counts. nil
	// means RemoteIP, unless IDs is set (a policy's limiter ignores the
	// key).
	Key KeyFunc
	// IDs give Request.IDs, a policy's identity values by name (ip_user
	// takes "ip" and "user").
	IDs map[string]KeyFunc
	// Cost gives Request.Cost; nil means 1. An error refuses the request
	// as a KeyFunc's does.
	Cost func(r *http.Request) (int64, error)
	// QuotaName gives the name a quota is sent under in the header
	// fields and the problem's violated-policies (for a single algorithm,
	// "gcra" might become "per-ip"); nil keeps Quota.Name.
	QuotaName func(name string) string
	// LegacyHeaders adds X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset, of the binding limit (Result itself); the reset
	// is in seconds from now (a delta, rounded up), not an epoch time.
	LegacyHeaders bool
	// DryRun (shadow mode) decides and sends the header fields, but
	// never answers on its own: the handler runs for denied requests,
	// refused keys and limiter errors alike. OnDecision tells what would
	// have been denied.
	DryRun bool
	// FailOpen serves the request, without RateLimit fields, when the
	// limiter fails with an error other than ErrBadInput (Redis
	// unavailable, say) instead of answering 503. Package fallback,
	// which decides locally while Redis is away, is usually the better
	// answer.
	FailOpen bool
	// OnDecision, if set, is called once for every request, before the
	// handler runs or the refusal is written, with the limiter's result
	// and error, or the zero Result and the *Error of a KeyFunc or Cost
	// function: for logs, metrics and dry runs (res.Allowed false with a
	// nil err is a denial). It runs on the request's goroutine.
	OnDecision func(r *http.Request, res limitspec.Result, err error)
}

// Middleware limits the requests of the handlers it wraps by one
// limitspec.Limiter; make one with New. It is safe for concurrent use.
type Middleware struct {
	l    limitspec.Limiter
	opts Options
	key  KeyFunc
	ids  []namedKey
}

// namedKey is one identity's KeyFunc.
type namedKey struct {
	name string
	f    KeyFunc
}

// New returns a Middleware deciding by l with opts; it refuses a nil
// limiter.
func New(l limitspec.Limiter, opts Options) (*Middleware, error) {
	if l == nil {
		return nil, errors.New("httplimit: nil Limiter")
	}
	m := &Middleware{l: l, opts: opts, key: opts.Key}
	for name, f := range opts.IDs {
		if f == nil {
			return nil, errors.New("httplimit: nil KeyFunc for identity " + name)
		}
		m.ids = append(m.ids, namedKey{name, f})
	}
	sort.Slice(m.ids, func(i, j int) bool { return m.ids[i].name < m.ids[j].name })
	if m.key == nil && len(m.ids) == 0 {
		m.key = RemoteIP
	}
	return m, nil
}

// Handler wraps next: each request is decided by the limiter, with the
// request's context, then served by next with the RateLimit fields set,
// or answered with a problem (429 when denied; see the package
// documentation).
func (m *Middleware) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := m.decide(r)
		if m.opts.OnDecision != nil {
			m.opts.OnDecision(r, res, err)
		}
		switch {
		case err == nil:
			m.setHeaders(w.Header(), res)
			if !res.Allowed && !m.opts.DryRun {
				m.deny(w, res)
				return
			}
		case m.opts.DryRun || m.failOpen(err):
		default:
			fail(w, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// failOpen reports whether err lets the request through under FailOpen:
// a limiter's error other than ErrBadInput.
func (m *Middleware) failOpen(err error) bool {
	var e *Error
	return m.opts.FailOpen && !errors.As(err, &e) && !errors.Is(err, limitspec.ErrBadInput)
}

// decide builds the limitspec.Request of r and decides it.
func (m *Middleware) decide(r *http.Request) (limitspec.Result, error) {
	req := limitspec.Request{Cost: 1}
	var err error
	if m.key != nil {
		if req.Key, err = m.key(r); err != nil {
			return limitspec.Result{}, asError(err)
		}
	}
	if len(m.ids) > 0 {
		req.IDs = make(map[string]string, len(m.ids))
		for _, id := range m.ids {
			if req.IDs[id.name], err = id.f(r); err != nil {
				return limitspec.Result{}, asError(err)
			}
		}
	}
	if m.opts.Cost != nil {
		if req.Cost, err = m.opts.Cost(r); err != nil {
			return limitspec.Result{}, asError(err)
		}
	}
	return m.l.Limit(r.Context(), req)
}
