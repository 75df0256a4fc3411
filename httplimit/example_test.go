package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/limitspec/limitspec"
	"github.com/limitspec/limitspec/goimpl"
	"github.com/limitspec/limitspec/httplimit"
)

// Each client IP may send 2 requests at once, then one a second (GCRA);
// the third request at once is denied.
func ExampleNew() {
	gcra, err := goimpl.NewGCRA(goimpl.GCRAParams{Burst: 2, Rate: 1, PeriodMs: 1000})
	if err != nil {
		panic(err)
	}
	m, err := httplimit.New(limitspec.Local("per-ip", gcra), httplimit.Options{})
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
