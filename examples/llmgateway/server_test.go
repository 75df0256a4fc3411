package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/limitspec/limitspec/goimpl"
)

// TestServer: the HTTP gateway's answers, one after the other, in
// process at a fixed time, with a model whose answers take 100 tokens.
// The RateLimit fields are each reserve's, its own hold counted (whole
// until the hold's end, in 120 s): the second request finds the first's
// 100 tokens charged, not its 500, and its request counted, in the
// minute and in the day, whose window ends 6400 s after the fixed time
// (1,700,000,000 s since the epoch is 80,000 s into its day).
func TestServer(t *testing.T) {
	lim, err := goimpl.New(goimpl.Options{Now: func() time.Time { return start }, NoSweeper: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	h, err := newServer(lim, pro, func(context.Context, int64) (int64, error) { return 100, nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, key, maxTokens string
		status               int
		rateLimit            string
	}{
		{"no API key", "", "500", http.StatusBadRequest, ""},
		{"max_tokens not a number", "sk-a", "many", http.StatusBadRequest, ""},
		{"max_tokens past the plan's tokens", "sk-a", "30001", http.StatusBadRequest, ""},
		{"the first", "sk-a", "500", http.StatusOK, `"slots";r=3;t=120, "requests";r=119;t=120, "tokens";r=29500;t=120, "daily";r=9999;t=120`},
		{"the second", "sk-a", "500", http.StatusOK, `"slots";r=3;t=120, "requests";r=118;t=120, "tokens";r=29400;t=120, "daily";r=9998;t=6400`},
		{"another key", "sk-b", "2000", http.StatusOK, `"slots";r=3;t=120, "requests";r=119;t=120, "tokens";r=28000;t=120, "daily";r=9999;t=120`},
	} {
		r := httptest.NewRequest(http.MethodPost, "/v1/completions", nil)
		if tc.key != "" {
			r.Header.Set(apiKeyHeader, tc.key)
		}
		r.Header.Set(maxTokensHeader, tc.maxTokens)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got := w.Header().Get("RateLimit"); w.Code != tc.status || got != tc.rateLimit {
			t.Errorf("%s: %d, RateLimit %q; want %d, %q (body %s)", tc.name, w.Code, got, tc.status, tc.rateLimit, w.Body)
		}
	}
}
