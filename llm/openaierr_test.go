package llm

import (
	"net/http"
	"testing"
	"time"
)

func TestByStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status    int
		typ, code string
		want      Code
		retryable bool
	}{
		{429, "requests", "rate_limit_exceeded", ProviderRateLimit, true},
		{429, "tokens", "", ProviderRateLimit, true},
		{429, "insufficient_quota", "insufficient_quota", ProviderAuth, false},
		{429, "", "insufficient_quota", ProviderAuth, false},
		{401, "invalid_request_error", "invalid_api_key", ProviderAuth, false},
		{403, "", "", ProviderAuth, false},
		{400, "invalid_request_error", "unsupported_parameter", UnknownProviderError, false},
		{404, "invalid_request_error", "model_not_found", UnknownProviderError, false},
		{422, "", "", UnknownProviderError, false},
		{408, "", "", ProviderTimeout, true},
		{500, "server_error", "", ProviderUnavailable, true},
		{502, "", "", ProviderUnavailable, true},
		{503, "server_error", "", ProviderUnavailable, true},
	}
	for _, c := range cases {
		code, retry := byStatus(c.status, c.typ, c.code)
		if code != c.want || retry != c.retryable {
			t.Errorf("byStatus(%d, %q, %q): got %s %v, want %s %v", c.status, c.typ, c.code, code, retry, c.want, c.retryable)
		}
	}
}

func TestByType(t *testing.T) {
	t.Parallel()
	cases := []struct {
		typ, code string
		want      Code
		retryable bool
	}{
		{"server_error", "", ProviderUnavailable, true},
		{"api_error", "", ProviderUnavailable, true},
		{"requests", "rate_limit_exceeded", ProviderRateLimit, true},
		{"tokens", "", ProviderRateLimit, true},
		{"insufficient_quota", "insufficient_quota", ProviderAuth, false},
		{"authentication_error", "", ProviderAuth, false},
		{"invalid_request_error", "invalid_api_key", ProviderAuth, false},
		{"invalid_request_error", "", UnknownProviderError, false},
		{"", "", UnknownProviderError, false},
	}
	for _, c := range cases {
		code, retry := byType(c.typ, c.code)
		if code != c.want || retry != c.retryable {
			t.Errorf("byType(%q, %q): got %s %v, want %s %v", c.typ, c.code, code, retry, c.want, c.retryable)
		}
	}
}

func TestStreamErrorType(t *testing.T) {
	t.Parallel()
	cases := []struct{ data, typ, code string }{
		{`{"error":{"type":"server_error","code":null}}`, "server_error", ""},
		{`{"error":{"type":"requests","code":"rate_limit_exceeded"}}` + "\n", "requests", "rate_limit_exceeded"},
		{`{"error":{"type":"x","code":429}}`, "x", "429"},
		{`{"error":"boom"}`, "", ""},
		{`not json`, "", ""},
	}
	for _, c := range cases {
		typ, code := streamErrorType([]byte(c.data))
		if typ != c.typ || code != c.code {
			t.Errorf("streamErrorType(%s): got %q %q, want %q %q", c.data, typ, code, c.typ, c.code)
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
		{"an HTTP date", http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}, 30},
		{"a date past", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"negative", http.Header{"Retry-After": {"-4"}}, 0},
		{"capped", http.Header{"Retry-After": {"86400"}}, maxRetryAfter},
	}
	for _, c := range cases {
		if got := retryAfter(c.h, now); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}
