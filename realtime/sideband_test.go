package realtime_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/realtime"
)

// Attach dials through openai-go's Realtime.Connect: its headers and the
// server key go out with call_id, and a refused upgrade is read by the one
// classifier (status, error object and every Retry-After form), a 404 as
// ErrCallNotFound.
func TestAttachThroughTheSDK(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status int
		header http.Header
		body   string
		code   apierr.Code // "" for ErrCallNotFound
		retry  int
	}{
		{"no such call yet", 404, nil, `{"error":{"type":"invalid_request_error","code":"call_id_not_found"}}`, "", 0},
		{"rate limited in milliseconds", 429, http.Header{"Retry-After-Ms": {"2500"}}, `{"error":{"type":"requests","code":"rate_limit_exceeded"}}`, apierr.AIRateLimited, 3},
		{"out of credit", 429, nil, `{"error":{"type":"insufficient_quota","code":"insufficient_quota"}}`, apierr.AIConfigError, 0},
		{"bad key", 401, nil, `{"error":{"type":"invalid_request_error","code":"invalid_api_key"}}`, apierr.AIConfigError, 0},
		{"provider timeout", 408, nil, ``, apierr.AIUnavailable, 1},
		{"overloaded", 503, http.Header{"Retry-After": {"4"}}, `{"error":{"type":"server_error"}}`, apierr.AIUnavailable, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var got *http.Request
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got = r.Clone(r.Context())
				mu.Unlock()
				for k, v := range tc.header {
					w.Header()[k] = v
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(ts.Close)
			c, err := realtime.New(realtime.Params{BaseURL: ts.URL + "/v1", APIKey: "sk-test"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Attach(t.Context(), "rtc_abc123")
			if tc.code == "" {
				if !errors.Is(err, realtime.ErrCallNotFound) {
					t.Fatalf("got %v, want ErrCallNotFound", err)
				}
			} else if e := apierr.From(err); e.Code != tc.code || e.RetryAfter != tc.retry {
				t.Fatalf("got %s retry %d (%v), want %s retry %d", e.Code, e.RetryAfter, err, tc.code, tc.retry)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case got == nil:
				t.Fatal("the provider got no request")
			case got.URL.Path != "/v1/realtime" || got.URL.Query().Get("call_id") != "rtc_abc123":
				t.Errorf("got %s, want /v1/realtime?call_id=rtc_abc123", got.URL)
			case got.Header.Get("Authorization") != "Bearer sk-test":
				t.Errorf("got Authorization %q, want the server key", got.Header.Get("Authorization"))
			case !strings.HasPrefix(got.Header.Get("User-Agent"), "OpenAI/Go") || got.Header.Get("X-Stainless-Lang") != "go":
				t.Errorf("got User-Agent %q, X-Stainless-Lang %q: want openai-go's own headers",
					got.Header.Get("User-Agent"), got.Header.Get("X-Stainless-Lang"))
			}
		})
	}
}
