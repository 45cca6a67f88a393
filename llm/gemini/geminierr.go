package gemini

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/voxgate/voxgate/internal/aierr"
	"github.com/voxgate/voxgate/llm"
)

// classifyGemini maps a genai failure (the table is in docs/llm.md). genai
// reports an HTTP refusal and an error event inside a 200 stream alike, as
// an APIError with the google.rpc.Status's code; the status the transport
// saw tells them apart, so Status is the HTTP status only for a refusal.
// A chunk genai could not decode is an invalid response; transport
// failures (timeouts, refused, reset or cut connections) are read by the
// one classifier every adapter uses for them (aierr.OpenAI).
func classifyGemini(provider string, err error, wire *wireSeen) *llm.Error {
	e := &llm.Error{Provider: provider, Err: err}
	var apiErr genai.APIError
	var apiErrPtr *genai.APIError
	switch {
	case errors.As(err, &apiErr), errors.As(err, &apiErrPtr):
		if apiErrPtr != nil {
			apiErr = *apiErrPtr
		}
		if wire.status != http.StatusOK {
			e.Status = wire.status
		}
		e.Code, e.Retryable = geminiRefusal(apiErr)
		if e.Retryable {
			e.RetryAfter = geminiRetryAfter(apiErr, wire.header)
		}
	case errors.Is(err, errUndecodable), strings.Contains(err.Error(), "iterateResponseStream"):
		// genai's own decoding failures, which never wrap a transport's.
		e.Code = llm.ProviderInvalidResponse
	default:
		c := aierr.OpenAI(err, time.Now())
		e.Code, e.Retryable = c.Code, c.Retryable
	}
	return e
}

// geminiRefusal maps a google.rpc.Status by its code (the HTTP status) and
// status name:
//   - 429 RESOURCE_EXHAUSTED is a rate or quota limit, retryable;
//   - 400 INVALID_ARGUMENT for an invalid key (ErrorInfo reason
//     API_KEY_INVALID) is an auth failure, for a prompt over the model's
//     window a context-length one, anything else a request Gemini will
//     never take;
//   - 401, 403 are auth failures;
//   - 408 and 504 DEADLINE_EXCEEDED are the provider timing out;
//   - 500 INTERNAL, 503 UNAVAILABLE and other 5xx are outages.
func geminiRefusal(e genai.APIError) (llm.Code, bool) {
	switch {
	case e.Code == http.StatusTooManyRequests || e.Status == "RESOURCE_EXHAUSTED":
		return llm.ProviderRateLimit, true
	case e.Code == http.StatusUnauthorized || e.Code == http.StatusForbidden ||
		e.Status == "UNAUTHENTICATED" || e.Status == "PERMISSION_DENIED" || hasReason(e, "API_KEY_INVALID"):
		return llm.ProviderAuth, false
	case e.Code == http.StatusRequestTimeout || e.Code == http.StatusGatewayTimeout || e.Status == "DEADLINE_EXCEEDED":
		return llm.ProviderTimeout, true
	case e.Code >= 500:
		return llm.ProviderUnavailable, true
	case tooManyInputTokens(e.Message):
		return llm.ProviderContextLength, false
	}
	return llm.UnknownProviderError, false
}

func hasReason(e genai.APIError, reason string) bool {
	for _, d := range e.Details {
		if d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo" && d["reason"] == reason {
			return true
		}
	}
	return false
}

// tooManyInputTokens recognizes Gemini's refusal of a prompt over the
// model's window: "The input token count (N) exceeds the maximum number of
// tokens allowed (M)." Gemini gives it no code of its own.
func tooManyInputTokens(message string) bool {
	m := strings.ToLower(message)
	return strings.Contains(m, "input token count") && strings.Contains(m, "exceeds the maximum number of tokens")
}

// geminiRetryAfter is Gemini's advice in whole seconds, rounded up: the
// RetryInfo detail's retryDelay ("2s", "1.5s"), else the headers a proxy
// in front of it may send, read as every provider's are.
func geminiRetryAfter(e genai.APIError, h http.Header) int {
	for _, d := range e.Details {
		if d["@type"] != "type.googleapis.com/google.rpc.RetryInfo" {
			continue
		}
		if s, ok := d["retryDelay"].(string); ok {
			if dur, err := time.ParseDuration(s); err == nil && dur > 0 {
				return aierr.WholeSeconds(dur.Seconds())
			}
		}
	}
	if h == nil {
		return 0
	}
	return aierr.RetryAfter(h, time.Now())
}
