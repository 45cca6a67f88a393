package aierr

import (
	"net/http"
	"testing"
	"time"
)

func TestRefusal(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)
	cases := []struct {
		name               string
		status             int
		typ, code, message string
		h                  http.Header
		want               Class
	}{
		{"rate limit", 429, "requests", "rate_limit_exceeded", "Rate limit reached", http.Header{"Retry-After": {"7"}}, Class{RateLimit, true, 7}},
		{"token rate limit without advice", 429, "tokens", "", "", nil, Class{RateLimit, true, 0}},
		{"request too large", 429, "tokens", "rate_limit_exceeded",
			"Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 50000.",
			http.Header{"Retry-After": {"1"}}, Class{ContextLength, false, 0}},
		{"insufficient quota", 429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota.", nil, Class{Auth, false, 0}},
		{"insufficient quota by code only", 429, "", "insufficient_quota", "", nil, Class{Auth, false, 0}},
		{"bad key", 401, "invalid_request_error", "invalid_api_key", "", nil, Class{Auth, false, 0}},
		{"forbidden", 403, "", "", "", nil, Class{Auth, false, 0}},
		{"unknown parameter", 400, "invalid_request_error", "unsupported_parameter", "", nil, Class{Unknown, false, 0}},
		{"context length", 400, "invalid_request_error", "context_length_exceeded", "", nil, Class{ContextLength, false, 0}},
		{"unknown model", 404, "invalid_request_error", "model_not_found", "", nil, Class{Unknown, false, 0}},
		{"unprocessable", 422, "", "", "", nil, Class{Unknown, false, 0}},
		{"provider timeout", 408, "", "", "", nil, Class{Timeout, true, 0}},
		{"conflict", 409, "", "", "", http.Header{"Retry-After": {"2"}}, Class{Unavailable, true, 2}},
		{"server error", 500, "server_error", "", "", nil, Class{Unavailable, true, 0}},
		{"bad gateway", 502, "", "", "", nil, Class{Unavailable, true, 0}},
		{"unavailable with a date", 503, "", "", "", http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}, Class{Unavailable, true, 30}},
		{"x-should-retry true on a 400", 400, "", "", "", http.Header{"X-Should-Retry": {"true"}, "Retry-After-Ms": {"250"}}, Class{Unknown, true, 1}},
		{"x-should-retry false on a 503", 503, "", "", "", http.Header{"X-Should-Retry": {"false"}, "Retry-After": {"9"}}, Class{Unavailable, false, 0}},
		{"x-should-retry false on a 429", 429, "requests", "", "", http.Header{"X-Should-Retry": {"false"}}, Class{RateLimit, false, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := c.h
			if h == nil {
				h = http.Header{}
			}
			if got := Refusal(c.status, c.typ, c.code, c.message, h, now); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestInStream(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, data string
		want       Class
	}{
		{"server error", `{"error":{"type":"server_error","code":null}}`, Class{Code: Unavailable, Retryable: true}},
		{"api error", `{"error":{"type":"api_error"}}`, Class{Code: Unavailable, Retryable: true}},
		{"rate limit", `{"error":{"type":"requests","code":"rate_limit_exceeded"}}` + "\n", Class{Code: RateLimit, Retryable: true}},
		{"tokens", `{"error":{"type":"tokens"}}`, Class{Code: RateLimit, Retryable: true}},
		{"request too large", `{"error":{"type":"tokens","code":"rate_limit_exceeded","message":"Request too large for gpt-4o"}}`, Class{Code: ContextLength}},
		{"insufficient quota", `{"error":{"type":"insufficient_quota","code":"insufficient_quota"}}`, Class{Code: Auth}},
		{"authentication", `{"error":{"type":"authentication_error"}}`, Class{Code: Auth}},
		{"bad key", `{"error":{"type":"invalid_request_error","code":"invalid_api_key"}}`, Class{Code: Auth}},
		{"numeric code", `{"error":{"type":"x","code":429}}`, Class{Code: Unknown}},
		{"invalid request", `{"error":{"type":"invalid_request_error"}}`, Class{Code: Unknown}},
		{"not an object", `{"error":"boom"}`, Class{Code: Unknown}},
		{"not json", `not json`, Class{Code: Unknown}},
	}
	for _, c := range cases {
		if got := inStream([]byte(c.data)); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		h    http.Header
		want int
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7},
		{"fractional seconds round up", http.Header{"Retry-After": {"1.2"}}, 2},
		{"milliseconds win", http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"9"}}, 2},
		{"milliseconds under a second", http.Header{"Retry-After-Ms": {"20"}}, 1},
		{"an HTTP date", http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}, 30},
		{"a date past", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"NaN", http.Header{"Retry-After": {"NaN"}}, 0},
		{"negative", http.Header{"Retry-After": {"-4"}}, 0},
		{"capped", http.Header{"Retry-After": {"86400"}}, MaxRetryAfter},
		{"infinite", http.Header{"Retry-After": {"1e400"}}, MaxRetryAfter},
	}
	for _, c := range cases {
		if got := RetryAfter(c.h, now); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}
