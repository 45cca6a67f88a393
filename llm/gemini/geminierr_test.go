package gemini

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"google.golang.org/genai"

	"github.com/voxgate/voxgate/llm"
)

// TestClassifyGeminiStatuses covers the refusals the simulator has no
// fault for (the others go through it in TestGeminiFaults).
func TestClassifyGeminiStatuses(t *testing.T) {
	t.Parallel()
	retry := map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.2s"}
	for _, tc := range []struct {
		name       string
		err        genai.APIError
		wire       int
		code       llm.Code
		retryable  bool
		retryAfter int
		status     int
	}{
		{"unauthenticated", genai.APIError{Code: 401, Status: "UNAUTHENTICATED"}, 401, llm.ProviderAuth, false, 0, 401},
		{"permission denied", genai.APIError{Code: 403, Status: "PERMISSION_DENIED"}, 403, llm.ProviderAuth, false, 0, 403},
		{"deadline", genai.APIError{Code: 504, Status: "DEADLINE_EXCEEDED", Details: []map[string]any{retry}}, 504, llm.ProviderTimeout, true, 2, 504},
		{"not found", genai.APIError{Code: 404, Status: "NOT_FOUND"}, 404, llm.UnknownProviderError, false, 0, 404},
		{"failed precondition", genai.APIError{Code: 400, Status: "FAILED_PRECONDITION", Details: []map[string]any{retry}}, 400, llm.UnknownProviderError, false, 0, 400},
		{"quota in a stream", genai.APIError{Code: 429, Status: "RESOURCE_EXHAUSTED", Details: []map[string]any{retry}}, 200, llm.ProviderRateLimit, true, 2, 0},
		{"rate limit behind a proxy", genai.APIError{Code: 429, Status: "RESOURCE_EXHAUSTED"}, 429, llm.ProviderRateLimit, true, 5, 429},
	} {
		h := http.Header{}
		if tc.name == "rate limit behind a proxy" {
			h.Set("Retry-After", "5")
		}
		e := classifyGemini("g", fmt.Errorf("wrapped: %w", tc.err), &wireSeen{status: tc.wire, header: h})
		if e.Code != tc.code || e.Retryable != tc.retryable || e.RetryAfter != tc.retryAfter || e.Status != tc.status {
			t.Errorf("%s: got %s %v %d status %d, want %s %v %d status %d", tc.name,
				e.Code, e.Retryable, e.RetryAfter, e.Status, tc.code, tc.retryable, tc.retryAfter, tc.status)
		}
		var cause genai.APIError
		if !errors.As(e, &cause) || cause.Code != tc.err.Code || e.Provider != "g" {
			t.Errorf("%s: the cause or provider is lost: %+v", tc.name, e)
		}
	}
}
