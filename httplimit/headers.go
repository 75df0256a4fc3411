package httplimit

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/internal/sfv"
)

// Fields names the RateLimit header fields and their parameters, as a
// version of draft-ietf-httpapi-ratelimit-headers writes them:
//
//	<Policy>: "name";<Quota>=10;<Window>=1, ...
//	<Limit>: "name";<Remaining>=9;<Reset>=1, ...
//
// The working group may still rename them; a middleware then needs new
// Fields, not a new release. New refuses a name missing or malformed, and
// a field the middleware sets itself (Retry-After, Content-Type,
// Content-Length, Cache-Control, X-RateLimit-*).
type Fields struct {
	// Policy and Limit are the fields' names.
	Policy, Limit string
	// Quota and Window are the Policy field's parameters; Remaining and
	// Reset the Limit field's.
	Quota, Window, Remaining, Reset string
}

// Draft11 are the fields of draft-ietf-httpapi-ratelimit-headers-11:
// RateLimit-Policy with q and w, RateLimit with r and t.
var Draft11 = Fields{Policy: "RateLimit-Policy", Limit: "RateLimit", Quota: "q", Window: "w", Remaining: "r", Reset: "t"}

// fieldName is an HTTP field name (a token, RFC 9110, section 5.1);
// paramKey a Structured Field parameter key (RFC 9651, section 3.1.2).
var (
	fieldName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	paramKey  = regexp.MustCompile(`^[a-z*][a-z0-9_.*-]*$`)
)

// ownFields are the fields the middleware sets itself, on refusals or
// with LegacyHeaders, which Fields may not name: the RateLimit fields
// would overwrite them, or they the RateLimit fields.
var ownFields = []string{"Cache-Control", "Content-Length", "Content-Type", "Retry-After",
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}

// check refuses Fields with a name missing or malformed, or of a field
// the middleware sets itself, or two parameters of one field named
// alike.
func (f Fields) check() error {
	const field, param = "an HTTP field name", "a Structured Field parameter key (a-z, 0-9, _, -, ., *; starting with a-z or *)"
	for _, n := range []struct{ what, name, kind string }{
		{"Policy", f.Policy, field}, {"Limit", f.Limit, field},
		{"Quota", f.Quota, param}, {"Window", f.Window, param},
		{"Remaining", f.Remaining, param}, {"Reset", f.Reset, param},
	} {
		re := paramKey
		if n.kind == field {
			re = fieldName
		}
		switch {
		case n.name == "":
			return fmt.Errorf("Options.Fields.%s is empty: give every name (or none, for Draft11)", n.what)
		case !re.MatchString(n.name):
			return fmt.Errorf("Options.Fields.%s %q is not %s", n.what, n.name, n.kind)
		}
	}
	for _, name := range []string{f.Policy, f.Limit} {
		if i := slices.IndexFunc(ownFields, func(own string) bool { return strings.EqualFold(own, name) }); i >= 0 {
			return fmt.Errorf("Options.Fields: %s is a field the middleware sets itself", ownFields[i])
		}
	}
	switch {
	case strings.EqualFold(f.Policy, f.Limit):
		return fmt.Errorf("Options.Fields.Policy and Fields.Limit name one field, %s", f.Limit)
	case f.Quota == f.Window || f.Remaining == f.Reset:
		return errors.New("Options.Fields: two parameters of one field have one name")
	}
	return nil
}

// quotaUnit is the qu parameter of q's RateLimit-Policy item: the IETF
// draft's unit for an in-flight limit ("concurrent-requests") and for
// bytes ("content-bytes"), none for requests (the draft's default), and
// for any other unit (tokens) its own name, which the draft does not
// define: a client that knows it not reads the item as it would without.
func quotaUnit(q limitspec.LimitResult) string {
	switch {
	case limitspec.InFlight(q.Limit):
		return "concurrent-requests"
	case q.Unit == "bytes":
		return "content-bytes"
	case q.Unit == "" || q.Unit == "requests":
		return ""
	}
	return q.Unit
}

// setHeaders adds the Policy and Limit fields of res's limits, in order,
// after the items another middleware on the same route may have set (a
// global limit around a route's), and with Options.LegacyHeaders the
// X-RateLimit-* fields of the binding limit, unless another middleware's
// leave less remaining; a result without limits sets none.
func (m *Middleware) setHeaders(h http.Header, res limitspec.Result) {
	if len(res.Limits) == 0 {
		return
	}
	f := m.fields
	policies := make([]string, len(res.Limits))
	limits := make([]string, len(res.Limits))
	for i, q := range res.Limits {
		name := sfv.String(m.quotaName(q.Name))
		policies[i] = name + ";" + f.Quota + "=" + sfv.Int(q.Quota)
		if w := sfv.Seconds(q.Window()); w > 0 {
			policies[i] += ";" + f.Window + "=" + sfv.Int(w)
		}
		if u := quotaUnit(q); u != "" {
			policies[i] += ";qu=" + sfv.String(u)
		}
		limits[i] = name + ";" + f.Remaining + "=" + sfv.Int(q.Remaining) + ";" + f.Reset + "=" + sfv.Int(sfv.Seconds(q.ResetAfter))
	}
	appendField(h, f.Policy, policies)
	appendField(h, f.Limit, limits)
	if m.opts.LegacyHeaders {
		b := res.Limits[0]
		if res.Binding > 0 && res.Binding < len(res.Limits) {
			b = res.Limits[res.Binding]
		}
		if have, err := strconv.ParseInt(h.Get("X-RateLimit-Remaining"), 10, 64); err == nil && have <= b.Remaining {
			return // an outer middleware's binding limit leaves less
		}
		h.Set("X-RateLimit-Limit", sfv.Int(b.Quota))
		h.Set("X-RateLimit-Remaining", sfv.Int(b.Remaining))
		h.Set("X-RateLimit-Reset", sfv.Int(sfv.Seconds(b.ResetAfter)))
	}
}

// appendField sets a list field to its items, after the items it holds
// (on every line).
func appendField(h http.Header, name string, items []string) {
	have := slices.DeleteFunc(slices.Clone(h.Values(name)), func(v string) bool { return strings.TrimSpace(v) == "" })
	h.Set(name, strings.Join(append(have, items...), ", "))
}

// quotaName is a quota's name in the header fields.
func (m *Middleware) quotaName(name string) string {
	if m.opts.QuotaName != nil {
		return m.opts.QuotaName(name)
	}
	return name
}
