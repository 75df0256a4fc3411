package httplimit

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/sfv"
)

// The problem types of draft-ietf-httpapi-ratelimit-headers, section 5.
const (
	quotaExceeded   = "https://iana.org/assignments/http-problem-types#quota-exceeded"
	reducedCapacity = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"
)

// problem is an RFC 9457 problem details object.
type problem struct {
	Type     string   `json:"type"`
	Title    string   `json:"title"`
	Status   int      `json:"status"`
	Detail   string   `json:"detail,omitempty"`
	Violated []string `json:"violated-policies,omitempty"`
}

// write sends p as application/problem+json with its status.
func (p problem) write(w http.ResponseWriter) {
	body, _ := json.Marshal(p) // strings and ints: cannot fail
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Content-Length", strconv.Itoa(len(body)+1))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	_, _ = w.Write(append(body, '\n'))
}

// plain is a problem of type about:blank: its title is the status's.
func plain(status int, detail string) problem {
	return problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail}
}

// deny answers a denied request: 429 quota-exceeded with Retry-After
// (whole seconds, rounded up; none for a cost that can never be
// admitted), or, for a fallback's fail-closed denial, 503
// temporary-reduced-capacity.
func (m *Middleware) deny(w http.ResponseWriter, res limitspec.Result) {
	p := problem{Type: quotaExceeded, Title: "Request cannot be satisfied as assigned quota has been exceeded",
		Status: http.StatusTooManyRequests}
	if res.Side == limitspec.FailClosed {
		p = problem{Type: reducedCapacity, Title: "Request cannot be satisfied due to temporary server capacity constraints",
			Status: http.StatusServiceUnavailable}
	}
	for _, q := range res.Limits {
		if !q.Allowed {
			p.Violated = append(p.Violated, m.quotaName(q.Name))
		}
	}
	switch d := m.retryAfter(res); {
	case d == limitspec.Never:
		p.Detail = "The request's cost exceeds the limit: it can never be admitted."
	case p.Status == http.StatusTooManyRequests || d > 0:
		s := strconv.FormatInt(sfv.Seconds(d), 10)
		w.Header().Set("Retry-After", s)
		p.Detail = "Retry after " + s + " s."
	}
	p.write(w)
}

// retryAfter is the wait a denial res sends: res.RetryAfter, but that
// the wait of each limit in flight that denies is capped at
// Options.InFlightRetryAfter (the longest of the denying limits' waits,
// so capped, is sent; Never when any is never).
func (m *Middleware) retryAfter(res limitspec.Result) time.Duration {
	capped, inFlight := time.Duration(0), false
	for _, q := range res.Limits {
		switch {
		case q.Allowed:
		case q.RetryAfter == limitspec.Never:
			return limitspec.Never
		case limitspec.InFlight(q.Limit):
			inFlight = true
			capped = max(capped, min(q.RetryAfter, m.inFlightRetry))
		default:
			capped = max(capped, q.RetryAfter)
		}
	}
	if !inFlight {
		return res.RetryAfter
	}
	return capped
}

// fail answers a request refused by an error: a KeyFunc's, Cost's or
// Select's *Error with its status, ErrBadInput with 400, ErrMisconfigured
// with 500, any other limiter error with 503.
func fail(w http.ResponseWriter, err error) {
	var e *Error
	switch {
	case errors.As(err, &e):
		plain(e.status(), e.Detail).write(w)
	case errors.Is(err, limitspec.ErrBadInput):
		plain(http.StatusBadRequest, "The rate limiter refused the request: "+err.Error()).write(w)
	case errors.Is(err, limitspec.ErrMisconfigured):
		plain(http.StatusInternalServerError, "The rate limiter is misconfigured.").write(w)
	default:
		plain(http.StatusServiceUnavailable, "The rate limiter is unavailable.").write(w)
	}
}
