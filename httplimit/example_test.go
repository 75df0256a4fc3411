package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/httplimit"
)

// Each client IP may send 2 requests at once, then one a second (a GCRA,
// decided in process); the third request at once is denied.
func ExampleNew() {
	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		panic(err)
	}
	defer lim.Close()
	m, err := httplimit.New(lim, httplimit.Options{
		Limit: limitspec.GCRA{Burst: 2, Rate: 1, Period: time.Second},
		Name:  "per-ip",
	})
	if err != nil {
		panic(err)
	}
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, `{"hello":"world"}`)
	}))

	var w *httptest.ResponseRecorder
	for range 3 {
		w = httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		fmt.Printf("%d RateLimit: %s Retry-After: %q\n", w.Code, w.Header().Get("RateLimit"), w.Header().Get("Retry-After"))
	}
	fmt.Println("RateLimit-Policy:", w.Header().Get("RateLimit-Policy"))
	fmt.Print(w.Body)
	// Output:
	// 200 RateLimit: "per-ip";r=1;t=1 Retry-After: ""
	// 200 RateLimit: "per-ip";r=0;t=2 Retry-After: ""
	// 429 RateLimit: "per-ip";r=0;t=2 Retry-After: "1"
	// RateLimit-Policy: "per-ip";q=2;w=2
	// {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,"detail":"Retry after 1 s.","violated-policies":["per-ip"]}
}

// get sends GET path to h, with the header pairs header, and prints the
// status, the RateLimit field and Retry-After (when there are).
func get(h http.Handler, path string, header ...string) {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Printf("%s %d", path, w.Code)
	if rl := w.Header().Get("RateLimit"); rl != "" {
		fmt.Printf(" RateLimit: %s", rl)
	}
	if ra := w.Header().Get("Retry-After"); ra != "" {
		fmt.Printf(" Retry-After: %s", ra)
	}
	fmt.Println()
}

// A limit per route, around the whole ServeMux: GET /search admits one
// request a second per client IP, every other route 100 at once, then 10
// a second. Mux tells the middleware which route a request is for. (The
// two limits differ in their rates, so they do not share a client's
// state: see the package documentation.)
func ExampleOptions_routes() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {})

	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		panic(err)
	}
	defer lim.Close()
	m, err := httplimit.New(lim, httplimit.Options{
		Limit: limitspec.GCRA{Burst: 100, Rate: 10, Period: time.Second},
		Name:  "site",
		Routes: map[string]httplimit.Rule{
			"GET /search": {Limit: limitspec.GCRA{Burst: 1, Rate: 1, Period: time.Second}, Name: "search"},
		},
		Mux: mux,
	})
	if err != nil {
		panic(err)
	}
	h := m.Handler(mux)
	get(h, "/search")
	get(h, "/search")
	get(h, "/items/7")
	// Output:
	// /search 200 RateLimit: "search";r=0;t=1
	// /search 429 RateLimit: "search";r=0;t=1 Retry-After: 1
	// /items/7 200 RateLimit: "site";r=99;t=1
}

// A limit per plan, per API key: Select reads the client's plan (here
// from a header; in a service, looked up by its API key) and gives the
// plan's limit. A zero Rule leaves the request to the default (none
// here: it is served without a limit), and an error refuses it.
func ExampleOptions_select() {
	plans := map[string]httplimit.Rule{
		"pro":  {Limit: limitspec.GCRA{Burst: 20, Rate: 10, Period: time.Second}, Name: "pro"},
		"free": {Limit: limitspec.GCRA{Burst: 2, Rate: 1, Period: time.Minute}, Name: "free"},
	}
	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		panic(err)
	}
	defer lim.Close()
	m, err := httplimit.New(lim, httplimit.Options{
		Select: func(r *http.Request) (httplimit.Rule, error) {
			if r.Header.Get("X-Plan") == "" {
				return httplimit.Rule{}, &httplimit.Error{Status: http.StatusUnauthorized, Detail: "no plan"}
			}
			return plans[r.Header.Get("X-Plan")], nil
		},
		Key: httplimit.Header("X-Api-Key"),
	})
	if err != nil {
		panic(err)
	}
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	get(h, "/", "X-Api-Key", "k1", "X-Plan", "pro")
	get(h, "/", "X-Api-Key", "k2", "X-Plan", "free")
	get(h, "/", "X-Api-Key", "k3", "X-Plan", "unknown")
	get(h, "/", "X-Api-Key", "k4")
	// Output:
	// / 200 RateLimit: "pro";r=19;t=1
	// / 200 RateLimit: "free";r=1;t=60
	// / 200
	// / 401
}

// A policy decides several limits at once, all or nothing: ip_user allows
// 10 a second, 120 a minute and 240 an hour per IP and per user, as fixed
// windows. IDs give its identities, "ip" and "user". Ten requests from one
// IP, by ten users, spend the IP's second; the eleventh is denied, and
// consumes nothing of anyone's minute or hour. (The limiter's clock is
// held at 12:00:42.5, so that the windows' ends are exact: the second's
// in 0.5 s, the minute's in 17.5 s; a service leaves goimpl.New its
// default clock.)
func ExampleOptions_policy() {
	ipUser, err := limitspec.IPUserPolicy()
	if err != nil {
		panic(err)
	}
	held := time.Date(2026, 1, 1, 12, 0, 42, 500_000_000, time.UTC)
	lim, err := goimpl.New(goimpl.Options{Now: func() time.Time { return held }})
	if err != nil {
		panic(err)
	}
	defer lim.Close()
	m, err := httplimit.New(lim, httplimit.Options{
		Policy: ipUser,
		IDs: map[string]httplimit.KeyFunc{
			"ip":   httplimit.RemoteIP,
			"user": httplimit.Header("X-User"),
		},
	})
	if err != nil {
		panic(err)
	}
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	var w *httptest.ResponseRecorder
	for i := 1; i <= 11; i++ {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-User", fmt.Sprint("user", i))
		w = httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if i == 1 || i == 11 {
			fmt.Println(w.Code, "RateLimit:", w.Header().Get("RateLimit"))
		}
	}
	fmt.Println("Retry-After:", w.Header().Get("Retry-After"))
	fmt.Println("RateLimit-Policy:", w.Header().Get("RateLimit-Policy"))
	// Output:
	// 200 RateLimit: "ip_second";r=9;t=1, "ip_minute";r=119;t=18, "ip_hour";r=239;t=3558, "user_second";r=9;t=1, "user_minute";r=119;t=18, "user_hour";r=239;t=3558
	// 429 RateLimit: "ip_second";r=0;t=1, "ip_minute";r=110;t=18, "ip_hour";r=230;t=3558, "user_second";r=10;t=0, "user_minute";r=120;t=0, "user_hour";r=240;t=0
	// Retry-After: 1
	// RateLimit-Policy: "ip_second";q=10;w=1, "ip_minute";q=120;w=60, "ip_hour";q=240;w=3600, "user_second";q=10;w=1, "user_minute";q=120;w=60, "user_hour";q=240;w=3600
}

// Two middlewares on one route: a global limit around the mux (3 a
// minute per client IP, a GCRA), and the route's own inside it. The
// inner one adds its items to the outer one's fields.
func Example_stacked() {
	lim, err := goimpl.New(goimpl.Options{})
	if err != nil {
		panic(err)
	}
	defer lim.Close()
	global, err := httplimit.New(lim, httplimit.Options{Limit: limitspec.GCRA{Burst: 3, Rate: 3, Period: time.Minute}, Name: "global"})
	if err != nil {
		panic(err)
	}
	search, err := httplimit.New(lim, httplimit.Options{Limit: limitspec.GCRA{Burst: 1, Rate: 1, Period: time.Second}, Name: "search"})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /search", search.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {})
	h := global.Handler(mux)

	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/search", nil))
	fmt.Println("RateLimit-Policy:", w.Header().Get("RateLimit-Policy"))
	fmt.Println("RateLimit:", w.Header().Get("RateLimit"))
	get(h, "/")
	// Output:
	// RateLimit-Policy: "global";q=3;w=60, "search";q=1;w=1
	// RateLimit: "global";r=2;t=20, "search";r=0;t=1
	// / 200 RateLimit: "global";r=1;t=40
}

// OPTIONS and HEAD requests are served without a decision and without
// RateLimit fields: a CORS preflight is the browser's request, a HEAD
// usually a monitor's. Where a HEAD costs what its GET does (a ServeMux
// runs the GET handler for it), DecideHead decides it as any other.
func ExampleOptions_decideHead() {
	for _, decideHead := range []bool{false, true} {
		lim, err := goimpl.New(goimpl.Options{})
		if err != nil {
			panic(err)
		}
		defer lim.Close()
		m, err := httplimit.New(lim, httplimit.Options{
			Limit:      limitspec.GCRA{Burst: 10, Rate: 1, Period: time.Second},
			Name:       "per-ip",
			DecideHead: decideHead,
		})
		if err != nil {
			panic(err)
		}
		h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		fmt.Println("DecideHead:", decideHead)
		for _, method := range []string{http.MethodOptions, http.MethodHead, http.MethodGet} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(method, "/", nil))
			fmt.Print(method, " ", w.Code)
			if rl := w.Header().Get("RateLimit"); rl != "" {
				fmt.Print(" RateLimit: ", rl)
			}
			fmt.Println()
		}
	}
	// Output:
	// DecideHead: false
	// OPTIONS 200
	// HEAD 200
	// GET 200 RateLimit: "per-ip";r=9;t=1
	// DecideHead: true
	// OPTIONS 200
	// HEAD 200 RateLimit: "per-ip";r=9;t=1
	// GET 200 RateLimit: "per-ip";r=8;t=2
}
