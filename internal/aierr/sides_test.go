package aierr_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/aierr"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/realtime"
)

// TestSidesAgree sends every refusal the API gives to a chat call (llm,
// then the client mapping sse uses) and to a voice call (realtime's mint),
// both through openai-go, and wants the same client code, status and
// retry advice from each.
func TestSidesAgree(t *testing.T) {
	t.Parallel()
	const tooLarge = `{"error":{"message":"Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 50000.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`
	cases := []struct {
		name   string
		status int
		header http.Header
		body   string
		code   apierr.Code
		retry  int // Retry-After the client is told; 0 when none
	}{
		{"rate limit", 429, http.Header{"Retry-After": {"7"}}, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, apierr.AIRateLimited, 7},
		{"rate limit in milliseconds", 429, http.Header{"Retry-After-Ms": {"2500"}}, `{"error":{"type":"tokens","code":"rate_limit_exceeded"}}`, apierr.AIRateLimited, 3},
		{"rate limit in fractional seconds", 429, http.Header{"Retry-After": {"0.4"}}, `{"error":{"type":"requests"}}`, apierr.AIRateLimited, 1},
		// A date far enough ahead that a slow machine cannot shift the
		// rounded wait: the cap. The exact seconds are TestRetryAfter's.
		{"rate limit until a date", 429, http.Header{"Retry-After": {time.Now().Add(2 * time.Hour).UTC().Format(http.TimeFormat)}}, `{"error":{"type":"requests"}}`, apierr.AIRateLimited, aierr.MaxRetryAfter},
		{"rate limit without advice", 429, nil, `{"error":{"type":"requests"}}`, apierr.AIRateLimited, 1},
		{"request too large", 429, http.Header{"Retry-After": {"1"}}, tooLarge, apierr.AIConfigError, 0},
		{"insufficient quota", 429, nil, `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, apierr.AIConfigError, 0},
		{"bad key", 401, nil, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, apierr.AIConfigError, 0},
		{"forbidden", 403, nil, `{"error":{"type":"invalid_request_error","code":"unsupported_country_region_territory"}}`, apierr.AIConfigError, 0},
		{"unknown parameter", 400, nil, `{"error":{"type":"invalid_request_error","param":"x","code":"unknown_parameter"}}`, apierr.AIConfigError, 0},
		{"context length", 400, nil, `{"error":{"type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, apierr.AIConfigError, 0},
		{"unknown model", 404, nil, `{"error":{"type":"invalid_request_error","param":"model","code":"model_not_found"}}`, apierr.AIConfigError, 0},
		{"provider timeout", 408, nil, `{"error":{"type":"timeout"}}`, apierr.AIUnavailable, 1},
		{"conflict", 409, http.Header{"Retry-After": {"2"}}, `{"error":{"type":"conflict"}}`, apierr.AIUnavailable, 2},
		{"server error", 500, nil, `{"error":{"type":"server_error","code":null}}`, apierr.AIUnavailable, 1},
		{"overloaded", 503, http.Header{"Retry-After": {"5"}}, `{"error":{"type":"server_error"}}`, apierr.AIUnavailable, 5},
		{"told not to retry a 503", 503, http.Header{"X-Should-Retry": {"false"}, "Retry-After": {"5"}}, `{"error":{"type":"server_error"}}`, apierr.AIUnavailable, 1},
		{"gateway timeout without a body", 504, nil, ``, apierr.AIUnavailable, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range c.header {
					w.Header()[k] = v
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			}))
			t.Cleanup(ts.Close)
			chat, voice := chatError(t, ts.URL+"/v1"), voiceError(t, ts.URL+"/v1")
			for side, e := range map[string]*apierr.Error{"chat": chat, "voice": voice} {
				if e.Code != c.code || e.Status() != apierr.Status(c.code) || e.RetryAfter != c.retry {
					t.Errorf("%s: got %s %d retry %d, want %s %d retry %d (%v)",
						side, e.Code, e.Status(), e.RetryAfter, c.code, apierr.Status(c.code), c.retry, e.Err)
				}
			}
		})
	}
}

func chatError(t *testing.T, url string) *apierr.Error {
	t.Helper()
	o, err := openai.New(openai.Params{BaseURL: url, APIKey: "sk-test", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st, err := o.Stream(t.Context(), llm.Request{Model: "gpt-4o-mini", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err == nil {
		st.Close()
		t.Fatal("chat: got a stream, want a refusal")
	}
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("chat: got %v, want an *llm.Error", err)
	}
	return le.Class().APIError(err)
}

func voiceError(t *testing.T, url string) *apierr.Error {
	t.Helper()
	noRetry := 0
	c, err := realtime.New(realtime.Params{BaseURL: url, APIKey: "sk-test", MaxRetries: &noRetry})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Mint(t.Context(), realtime.Session{Model: "gpt-realtime"}, time.Minute)
	var e *apierr.Error
	if !errors.As(err, &e) {
		t.Fatalf("voice: got %v, want an *apierr.Error", err)
	}
	return e
}
