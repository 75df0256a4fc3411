package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/httplimit"
)

// trusted are the proxies of the tests below.
var trusted = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}

type proxyCase struct {
	name   string
	remote string
	lines  []string // the header's lines
	want   string
}

func runProxyCases(t *testing.T, header string, f httplimit.KeyFunc, cases []proxyCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = c.remote
			for _, l := range c.lines {
				r.Header.Add(header, l)
			}
			got, err := f(r)
			if err != nil || got != c.want {
				t.Errorf("%s %q from %s: %q, %v; want %q", header, c.lines, c.remote, got, err, c.want)
			}
		})
	}
}

func TestXForwardedFor(t *testing.T) {
	runProxyCases(t, "X-Forwarded-For", httplimit.XForwardedFor(trusted...), []proxyCase{
		{"spoofed from an untrusted peer", "203.0.113.5:1234", []string{"1.2.3.4"}, "203.0.113.5"},
		{"spoofed IPv6 from an untrusted peer", "[2001:db8::9]:1", []string{"1.2.3.4"}, "2001:db8::9"},
		{"no header", "10.0.0.1:80", nil, "10.0.0.1"},
		{"one proxy", "10.0.0.1:80", []string{"198.51.100.7"}, "198.51.100.7"},
		{"chain with a spoofed head", "10.0.0.1:80", []string{"1.2.3.4, 198.51.100.7, 10.0.0.2"}, "198.51.100.7"},
		{"several lines", "10.0.0.1:80", []string{"1.2.3.4", "198.51.100.7,10.0.0.2"}, "198.51.100.7"},
		{"all trusted", "10.0.0.1:80", []string{"10.0.0.3, 10.0.0.2"}, "10.0.0.3"},
		{"malformed entry", "10.0.0.1:80", []string{"198.51.100.7, garbage, 10.0.0.2"}, "10.0.0.2"},
		{"malformed last entry", "10.0.0.1:80", []string{"198.51.100.7, garbage"}, "10.0.0.1"},
		{"empty entry", "10.0.0.1:80", []string{"198.51.100.7,,10.0.0.2"}, "10.0.0.2"},
		{"empty header", "10.0.0.1:80", []string{""}, "10.0.0.1"},
		{"with a port", "10.0.0.1:80", []string{"198.51.100.7:5555"}, "198.51.100.7"},
		{"IPv6 proxy and client", "[2001:db8:ffff::1]:443", []string{"2001:db8::7"}, "2001:db8::7"},
		{"IPv6 in brackets with a port", "10.0.0.1:80", []string{"[2001:db8::7]:5555"}, "2001:db8::7"},
		{"IPv6 in brackets", "10.0.0.1:80", []string{" [2001:db8::7] "}, "2001:db8::7"},
		{"IPv4-mapped peer and client", "[::ffff:10.0.0.1]:80", []string{"::ffff:198.51.100.7"}, "198.51.100.7"},
		{"zone dropped", "10.0.0.1:80", []string{"fe80::1%eth0"}, "fe80::1"},
	})
	// A trusted prefix given IPv4-mapped counts as the IPv4 one, as
	// ParsePrefixes reads it.
	mapped := netip.MustParsePrefix("::ffff:10.0.0.0/104")
	runProxyCases(t, "X-Forwarded-For", httplimit.XForwardedFor(mapped), []proxyCase{
		{"IPv4-mapped trusted prefix", "10.0.0.1:80", []string{"198.51.100.7"}, "198.51.100.7"},
	})
}

func TestForwarded(t *testing.T) {
	runProxyCases(t, "Forwarded", httplimit.Forwarded(trusted...), []proxyCase{
		{"spoofed from an untrusted peer", "203.0.113.5:1234", []string{"for=1.2.3.4"}, "203.0.113.5"},
		{"one proxy", "10.0.0.1:80", []string{"for=198.51.100.7;proto=https;by=10.0.0.1"}, "198.51.100.7"},
		{"chain with a spoofed head", "10.0.0.1:80", []string{"for=6.6.6.6, for=198.51.100.7, for=10.0.0.2"}, "198.51.100.7"},
		{"several lines", "10.0.0.1:80", []string{"for=6.6.6.6", "for=198.51.100.7, for=10.0.0.2"}, "198.51.100.7"},
		{"quoted IPv6 with a port", "10.0.0.1:80", []string{`For="[2001:db8:cafe::17]:4711"`}, "2001:db8:cafe::17"},
		{"quoted IPv6", "10.0.0.1:80", []string{`for="[2001:db8:cafe::17]"`}, "2001:db8:cafe::17"},
		{"quoted pair", "10.0.0.1:80", []string{`for="198.51.100.\7"`}, "198.51.100.7"},
		{"quoted comma and semicolon elsewhere", "10.0.0.1:80", []string{`host="a,b;c";for=198.51.100.7`}, "198.51.100.7"},
		{"unknown", "10.0.0.1:80", []string{"for=198.51.100.7, for=unknown, for=10.0.0.2"}, "10.0.0.2"},
		{"obfuscated", "10.0.0.1:80", []string{`for="_hidden"`}, "10.0.0.1"},
		{"no for", "10.0.0.1:80", []string{"proto=https"}, "10.0.0.1"},
		{"empty element", "10.0.0.1:80", []string{"for=198.51.100.7, , for=10.0.0.2"}, "10.0.0.2"},
		{"unterminated quote", "10.0.0.1:80", []string{`for="198.51.100.7`}, "10.0.0.1"},
		{"text after the quote", "10.0.0.1:80", []string{`for="198.51.100.7"x`}, "10.0.0.1"},
		{"pair without =", "10.0.0.1:80", []string{"for=198.51.100.7;secret"}, "10.0.0.1"},
		{"for twice", "10.0.0.1:80", []string{"for=198.51.100.7;for=198.51.100.8"}, "10.0.0.1"},
		{"all trusted", "[2001:db8:ffff::1]:443", []string{`for="[2001:db8:ffff::2]"`}, "2001:db8:ffff::2"},
	})
}

func TestParsePrefixes(t *testing.T) {
	got, err := httplimit.ParsePrefixes("10.0.0.0/8", " 192.0.2.7 ", "2001:db8::/32", "::ffff:10.1.0.0/112", "10.1.2.3/16")
	if x := "[10.0.0.0/8 192.0.2.7/32 2001:db8::/32 10.1.0.0/16 10.1.0.0/16]"; err != nil || fmt.Sprint(got) != x {
		t.Errorf("got %v, %v; want %s", got, err, x)
	}
	for _, bad := range []string{"", "10.0.0.0/33", "host.example", "fe80::1%eth0", "0.0.0.0/0", "::/0", "::ffff:0.0.0.0/96"} {
		if _, err := httplimit.ParsePrefixes(bad); err == nil {
			t.Errorf("ParsePrefixes(%q) accepted it", bad)
		}
	}
}

func TestHeaderAndRemoteIP(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "[2001:db8::1%eth0]:443"
	if got, err := httplimit.RemoteIP(r); err != nil || got != "2001:db8::1" {
		t.Errorf("RemoteIP: %q, %v", got, err)
	}
	r.Header.Set("X-Api-Key", "  ")
	if _, err := httplimit.Header("x-api-key")(r); err == nil || err.Error() != "missing header X-Api-Key" {
		t.Errorf("Header of a blank value: %v", err)
	}
	r.Header.Set("X-Api-Key", " k1 ")
	if got, err := httplimit.Header("x-api-key")(r); err != nil || got != "k1" {
		t.Errorf("Header: %q, %v", got, err)
	}
}

// TestBrokenKeyFuncs: a helper given what cannot work returns a KeyFunc
// that refuses every request with an error naming the mistake, answered
// 500 as the server's, rather than one that panics, trusts every
// address, or blames the client.
func TestBrokenKeyFuncs(t *testing.T) {
	everyone := netip.MustParsePrefix("0.0.0.0/0")
	for _, c := range []struct {
		name string
		f    httplimit.KeyFunc
		err  string
	}{
		{"Header of no name", httplimit.Header(""), `httplimit: Header(""): not an HTTP field name`},
		{"Header of a name with a space", httplimit.Header("X Api Key"), `httplimit: Header("X Api Key"): not an HTTP field name`},
		{"Join of nothing", httplimit.Join(), "httplimit: Join of no KeyFunc: every key would be empty"},
		{"Join of a nil KeyFunc", httplimit.Join(httplimit.RemoteIP, nil), "httplimit: Join: KeyFunc 1 is nil"},
		{"XForwardedFor of the zero Prefix", httplimit.XForwardedFor(trusted[0], netip.Prefix{}),
			"httplimit: XForwardedFor: trusted proxy 1: not a valid prefix (such as the zero netip.Prefix)"},
		{"XForwardedFor of every address", httplimit.XForwardedFor(everyone),
			"httplimit: XForwardedFor: trusted proxy 0: 0.0.0.0/0 would trust every address, and let any client choose its key"},
		{"Forwarded of every IPv6 address", httplimit.Forwarded(netip.MustParsePrefix("::/0")),
			"httplimit: Forwarded: trusted proxy 0: ::/0 would trust every address, and let any client choose its key"},
		{"Forwarded of every IPv4-mapped address", httplimit.Forwarded(netip.MustParsePrefix("::ffff:1.2.3.4/96")),
			"httplimit: Forwarded: trusted proxy 0: 0.0.0.0/0 would trust every address, and let any client choose its key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = "10.0.0.1:80"
			r.Header.Set("X-Forwarded-For", "198.51.100.7")
			r.Header.Set("Forwarded", "for=198.51.100.7")
			if got, err := c.f(r); err == nil || err.Error() != c.err {
				t.Errorf("%q, %v; want the error %q", got, err, c.err)
			}
			var seen error
			h := handler(t, &fake{}, httplimit.Options{Limit: fakeLimit, Key: c.f,
				OnDecision: func(_ *http.Request, _ limitspec.Result, err error) { seen = err }})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			checkRefusal(t, w, 500, "the request's rate-limit key or cost could not be computed")
			if seen == nil || !strings.HasSuffix(seen.Error(), c.err) {
				t.Errorf("OnDecision saw %v, want an error ending %q", seen, c.err)
			}
		})
	}
}
