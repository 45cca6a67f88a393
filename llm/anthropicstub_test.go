package llm_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/anthropic"
)

// anthStub serves one canned answer: status, headers and body.
func anthStub(t *testing.T, status int, h http.Header, body string) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range h {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func anthErrorBody(typ, message string) string {
	return `{"type":"error","error":{"type":"` + typ + `","message":"` + message + `"},"request_id":"req_1"}`
}

const anthStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"stub\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"

// The refusals and in-stream error types the simulator does not produce,
// each mapped to its code.
func TestAnthropicErrorTypes(t *testing.T) {
	jsonType := http.Header{"Content-Type": {"application/json"}}
	for _, tc := range []struct {
		name      string
		status    int
		body      string
		code      llm.Code
		retryable bool
	}{
		{"403 permission", 403, anthErrorBody("permission_error", "no access"), llm.ProviderAuth, false},
		{"402 billing", 402, anthErrorBody("billing_error", "pay up"), llm.ProviderAuth, false},
		{"400 contract spend limit", 400, anthErrorBody("contract_spend_limit_reached", "Your organization has reached its contract spend limit."), llm.ProviderAuth, false},
		{"404 model", 404, anthErrorBody("not_found_error", "model: nope"), llm.UnknownProviderError, false},
		{"413 too large", 413, anthErrorBody("request_too_large", "Request exceeds the maximum allowed number of bytes."), llm.ProviderContextLength, false},
		{"400 context", 400, anthErrorBody("invalid_request_error", "input length and `max_tokens` exceed context limit: 190000 + 20000 > 200000"), llm.ProviderContextLength, false},
		{"400 other", 400, anthErrorBody("invalid_request_error", "messages.0.content: Field required"), llm.UnknownProviderError, false},
		{"504 timeout", 504, anthErrorBody("timeout_error", "Request timeout"), llm.ProviderTimeout, true},
		{"502 no body", 502, "<html>bad gateway</html>", llm.ProviderUnavailable, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAnthropic(t, anthStub(t, tc.status, jsonType, tc.body), anthropic.Params{}, nil)
			_, err := a.Stream(t.Context(), userRequest("stub", "hi"))
			e := anthErr(t, err)
			if e.Code != tc.code || e.Retryable != tc.retryable || e.Status != tc.status {
				t.Fatalf("got %s retryable=%v status=%d, want %s %v %d", e.Code, e.Retryable, e.Status, tc.code, tc.retryable, tc.status)
			}
		})
	}
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	for _, tc := range []struct {
		typ, message string
		code         llm.Code
		retryable    bool
	}{
		{"overloaded_error", "Overloaded", llm.ProviderUnavailable, true},
		{"api_error", "Internal server error", llm.ProviderUnavailable, true},
		{"rate_limit_error", "slow down", llm.ProviderRateLimit, true},
		{"authentication_error", "bad key", llm.ProviderAuth, false},
		{"invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", llm.ProviderContextLength, false},
		{"something_new", "?", llm.UnknownProviderError, false},
	} {
		t.Run("in-stream "+tc.typ, func(t *testing.T) {
			body := anthStart + "event: error\ndata: " + anthErrorBody(tc.typ, tc.message) + "\n\n"
			a := newAnthropic(t, anthStub(t, 200, sse, body), anthropic.Params{}, nil)
			r := drain(t, mustStream(t, a, userRequest("stub", "hi")))
			e := anthErr(t, r.err)
			if e.Code != tc.code || e.Retryable != tc.retryable || e.Status != 0 || e.RetryAfter != 0 {
				t.Fatalf("got %+v, want %s retryable=%v status 0", e, tc.code, tc.retryable)
			}
		})
	}
}

// x-should-retry overrides the status either way, and retry-after-ms is
// read, through the one classifier.
func TestAnthropicRetryHeaders(t *testing.T) {
	for _, tc := range []struct {
		h         http.Header
		status    int
		retryable bool
		after     int
	}{
		{http.Header{"Retry-After-Ms": {"1500"}}, 429, true, 2},
		{http.Header{"X-Should-Retry": {"false"}, "Retry-After": {"5"}}, 529, false, 0},
	} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			tc.h.Set("Content-Type", "application/json")
			typ := "rate_limit_error"
			if tc.status == 529 {
				typ = "overloaded_error"
			}
			a := newAnthropic(t, anthStub(t, tc.status, tc.h, anthErrorBody(typ, "x")), anthropic.Params{}, nil)
			_, err := a.Stream(t.Context(), userRequest("stub", "hi"))
			if e := anthErr(t, err); e.Retryable != tc.retryable || e.RetryAfter != tc.after {
				t.Fatalf("got %+v", e)
			}
		})
	}
}
