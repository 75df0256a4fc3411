package httplimit

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// KeyFunc gives one value of a request for its limitspec.Request: its Key
// (Options.Key) or one of a policy's identities (Options.IDs). An error
// refuses the request; return an *Error to choose the response's status
// and detail (any other error is answered 500, as the server's own
// failure to identify its client).
type KeyFunc func(r *http.Request) (string, error)

// Error is the refusal a KeyFunc or a Cost function returns to choose the
// response: Status (400 when 0) and Detail, sent in the problem+json
// body. Err, the cause, is not sent; Unwrap gives it.
type Error struct {
	// Status is the response's status code, a client's or the server's
	// error (4xx, 5xx); 0 means 400, and any other status 500: a
	// refusal is never a success, and a code outside 100–999 would make
	// net/http panic.
	Status int
	// Detail is the problem's detail, sent to the client.
	Detail string
	// Err is the cause, for OnDecision and logs; never sent.
	Err error
}

// Error is Detail, followed by the cause when there is one.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Detail + ": " + e.Err.Error()
	}
	return e.Detail
}

// Unwrap is the cause.
func (e *Error) Unwrap() error { return e.Err }

// status is e's response status: 400 for 0, 500 for any status that is
// not an error's.
func (e *Error) status() int {
	switch {
	case e.Status == 0:
		return http.StatusBadRequest
	case e.Status < 400 || e.Status > 599:
		return http.StatusInternalServerError
	}
	return e.Status
}

// broken is the KeyFunc of a helper given what cannot work: it refuses
// every request with err, the server's mistake (500, err the cause that
// OnDecision sees). The helpers return no error, and so cannot refuse
// their arguments sooner.
func broken(err error) KeyFunc {
	return func(*http.Request) (string, error) { return "", err }
}

// RemoteIP is the KeyFunc of the client's IP address as the connection
// shows it (Request.RemoteAddr, without its port): the right key when no
// proxy stands between the clients and this server. An IPv4-mapped IPv6
// address reads as IPv4, and an IPv6 zone is dropped.
func RemoteIP(r *http.Request) (string, error) {
	a, err := remoteAddr(r)
	if err != nil {
		return "", err
	}
	return a.String(), nil
}

// remoteAddr parses RemoteAddr ("ip:port", or a bare IP).
func remoteAddr(r *http.Request) (netip.Addr, error) {
	a, ok := parseIP(r.RemoteAddr)
	if !ok {
		return netip.Addr{}, &Error{Status: http.StatusInternalServerError,
			Detail: "the client's address could not be read",
			Err:    fmt.Errorf("RemoteAddr %q is not an IP address", r.RemoteAddr)}
	}
	return a, nil
}

// parseIP parses an address with or without a port, IPv6 with or without
// brackets, and returns it unmapped and without zone.
func parseIP(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, err2 := netip.ParseAddrPort(s)
		if err2 != nil {
			if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
				return netip.Addr{}, false
			}
			if a, err = netip.ParseAddr(s[1 : len(s)-1]); err != nil || !a.Is6() {
				return netip.Addr{}, false
			}
		} else {
			a = ap.Addr()
		}
	}
	return a.Unmap().WithZone(""), true
}

// XForwardedFor is the KeyFunc of the client's IP address behind trusted
// proxies that append to X-Forwarded-For. When the connection's address
// (RemoteAddr) is not in trusted, the header is ignored and the key is
// that address: a client that reaches this server directly cannot choose
// its key. Otherwise the chain, the header's addresses (every
// X-Forwarded-For line, in order) then RemoteAddr, is walked from the
// right, skipping trusted addresses; the key is the first address that
// is not trusted. An entry that is not an IP address (with or without a
// port; IPv6 with or without brackets) ends the walk: the key is then
// the last address reached, the trusted hop that reported it, and so it
// is when every address of the chain is trusted.
//
// List every proxy that appends to the header, and only those; and use
// XForwardedFor only when they do append to it (a proxy that passes a
// client's header on untouched lets the client choose its key). An
// IPv4-mapped IPv6 prefix (::ffff:10.0.0.0/104) counts as the IPv4 one.
// A prefix that cannot work, invalid (the zero netip.Prefix) or of
// length 0 (0.0.0.0/0, ::/0: every address a proxy, so that any client
// would choose its key), makes the KeyFunc refuse every request as the
// server's mistake (500).
func XForwardedFor(trusted ...netip.Prefix) KeyFunc {
	return proxied("XForwardedFor", trusted, func(r *http.Request) []string {
		var out []string
		for _, line := range r.Header.Values("X-Forwarded-For") {
			out = append(out, strings.Split(line, ",")...)
		}
		return out
	})
}

// Forwarded is XForwardedFor for the standard Forwarded header (RFC
// 7239): the chain is the for= parameter of each element (every
// Forwarded line, in order), a token or a quoted string, IPv6 in
// brackets, with or without a port: for=192.0.2.60,
// for="[2001:db8:cafe::17]:4711". An element without for=, or whose for=
// is "unknown", an obfuscated identifier ("_hidden") or malformed, ends
// the walk as a malformed entry does. Its trusted prefixes are read, and
// refused, as XForwardedFor's.
func Forwarded(trusted ...netip.Prefix) KeyFunc {
	return proxied("Forwarded", trusted, func(r *http.Request) []string {
		var out []string
		for _, line := range r.Header.Values("Forwarded") {
			out = append(out, forwardedFor(line)...)
		}
		return out
	})
}

// proxied walks chain(r) then RemoteAddr from the right, as XForwardedFor
// describes; it is broken, named helper, when a trusted prefix is.
func proxied(helper string, trusted []netip.Prefix, chain func(*http.Request) []string) KeyFunc {
	trusted = append([]netip.Prefix(nil), trusted...)
	for i, p := range trusted {
		var err error
		if trusted[i], err = trustable(p); err != nil {
			return broken(fmt.Errorf("httplimit: %s: trusted proxy %d: %w", helper, i, err))
		}
	}
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return func(r *http.Request) (string, error) {
		last, err := remoteAddr(r)
		if err != nil {
			return "", err
		}
		if !isTrusted(last) {
			return last.String(), nil
		}
		hops := chain(r)
		for i := len(hops) - 1; i >= 0; i-- {
			a, ok := parseIP(hops[i])
			if !ok {
				break
			}
			last = a
			if !isTrusted(a) {
				break
			}
		}
		return last.String(), nil
	}
}

// ParsePrefixes parses trusted proxies for XForwardedFor and Forwarded:
// CIDR prefixes ("10.0.0.0/8", "fd00::/8") or single addresses
// ("192.0.2.7", a /32 or /128), IPv4-mapped IPv6 read as IPv4. It
// refuses a prefix of length 0 ("0.0.0.0/0"), which would trust every
// address and so let any client choose its key.
func ParsePrefixes(s ...string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(s))
	for _, v := range s {
		v = strings.TrimSpace(v)
		p, err := netip.ParsePrefix(v)
		if err != nil {
			a, err := netip.ParseAddr(v)
			if err != nil || a.Zone() != "" {
				return nil, fmt.Errorf("httplimit: %q is neither a CIDR prefix nor an IP address", v)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p, err = trustable(p); err != nil {
			return nil, fmt.Errorf("httplimit: %q: %w", v, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// trustable is p as a trusted proxy's prefix: an IPv4-mapped IPv6 one as
// IPv4 (the addresses it is compared with are), its host bits masked.
// It refuses an invalid p, which contains no address, and one of length
// 0, which contains every address.
func trustable(p netip.Prefix) (netip.Prefix, error) {
	if !p.IsValid() {
		return p, errors.New("not a valid prefix (such as the zero netip.Prefix)")
	}
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	if p.Bits() == 0 {
		return p, fmt.Errorf("%s would trust every address, and let any client choose its key", p.Masked())
	}
	return p.Masked(), nil
}

// Header is the KeyFunc of a request header's value (an API key, say:
// Header("X-API-Key")), its first line, trimmed of spaces. A request
// without it, or with it empty, is refused with 400 and the detail
// "missing header NAME". The value becomes a limiter key as it is: where
// it is a secret (an API key kept in Redis), wrap Header in a KeyFunc
// that hashes it. A name that is not an HTTP field name (empty, or with
// a space), which no request could carry, makes the KeyFunc refuse every
// request as the server's mistake (500), not the client's.
func Header(name string) KeyFunc {
	if !fieldName.MatchString(name) {
		return broken(fmt.Errorf("httplimit: Header(%q): not an HTTP field name", name))
	}
	name = http.CanonicalHeaderKey(name)
	return func(r *http.Request) (string, error) {
		v := strings.TrimSpace(r.Header.Get(name))
		if v == "" {
			return "", &Error{Status: http.StatusBadRequest, Detail: "missing header " + name}
		}
		return v, nil
	}
}

// Route is the KeyFunc of the request's route: the pattern of the
// http.ServeMux route that matched it (Request.Pattern, such as
// "GET /items/{id}"), else the method and the path ("GET /items/7"). A
// middleware around a whole ServeMux runs before the mux routes, so it
// sees a pattern only when Options.Mux is that mux; else wrap each
// handler inside the mux (mux.Handle("GET /items/{id}", m.Handler(h))):
// keying by raw path gives every distinct path its own limit.
func Route(r *http.Request) (string, error) {
	if r.Pattern != "" {
		return r.Pattern, nil
	}
	return r.Method + " " + r.URL.Path, nil
}

// Join is the KeyFunc of several values joined by "|", in order:
// Join(RemoteIP, Route) limits each client on each route. The first error
// refuses the request. Join of no KeyFunc, whose key would be empty, or
// of a nil one refuses every request as the server's mistake (500).
func Join(funcs ...KeyFunc) KeyFunc {
	funcs = append([]KeyFunc(nil), funcs...)
	if len(funcs) == 0 {
		return broken(errors.New("httplimit: Join of no KeyFunc: every key would be empty"))
	}
	if i := slices.IndexFunc(funcs, func(f KeyFunc) bool { return f == nil }); i >= 0 {
		return broken(fmt.Errorf("httplimit: Join: KeyFunc %d is nil", i))
	}
	return func(r *http.Request) (string, error) {
		parts := make([]string, len(funcs))
		for i, f := range funcs {
			v, err := f(r)
			if err != nil {
				return "", err
			}
			parts[i] = v
		}
		return strings.Join(parts, "|"), nil
	}
}

// asError makes err an *Error: a KeyFunc or Cost error that is not one
// is the server's failure (500).
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Status: http.StatusInternalServerError,
		Detail: "the request's rate-limit key or cost could not be computed", Err: err}
}
