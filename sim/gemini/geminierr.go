package gemini

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// geminiError is an error in the Gemini API's wire shape, Google's
// google.rpc.Status as JSON: {"error":{"code","message","status","details"}}
// with the HTTP status in code. genai decodes it into genai.APIError.
type geminiError struct {
	Code    int
	Message string
	Status  string
	// RetryDelay, in seconds, is sent as a google.rpc.RetryInfo detail
	// (retryDelay "Ns"), which is how the Gemini API advises a wait: it
	// sends no Retry-After header.
	RetryDelay int
	// Reason, when set, is sent as a google.rpc.ErrorInfo detail.
	Reason string
	// Quota, when set, adds a google.rpc.QuotaFailure detail naming it.
	Quota string
}

func (e *geminiError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Code, e.Status, e.Message)
}

type geminiErrorBody struct {
	Error geminiStatus `json:"error"`
}

type geminiStatus struct {
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Status  string           `json:"status"`
	Details []map[string]any `json:"details,omitempty"`
}

func (e *geminiError) body() geminiErrorBody {
	st := geminiStatus{Code: e.Code, Message: e.Message, Status: e.Status}
	if e.Reason != "" {
		st.Details = append(st.Details, map[string]any{
			"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": e.Reason, "domain": "googleapis.com",
			"metadata": map[string]string{"service": "generativelanguage.googleapis.com"},
		})
	}
	if e.Quota != "" {
		st.Details = append(st.Details, map[string]any{
			"@type": "type.googleapis.com/google.rpc.QuotaFailure",
			"violations": []map[string]any{{
				"quotaMetric": "generativelanguage.googleapis.com/" + e.Quota,
				"quotaId":     "GenerateRequestsPerMinutePerProjectPerModel",
			}},
		})
	}
	if e.RetryDelay > 0 {
		st.Details = append(st.Details, map[string]any{
			"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.Itoa(e.RetryDelay) + "s",
		})
	}
	return geminiErrorBody{Error: st}
}

func (e *geminiError) marshal() []byte {
	b, _ := json.Marshal(e.body()) // strings, ints and maps of them: cannot fail
	return b
}

func writeGeminiError(w http.ResponseWriter, e *geminiError) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.Code)
	_, _ = w.Write(e.marshal())
}

// The constructors below copy the Gemini API's messages and statuses (the
// sources are listed in docs/sim.md, "Gemini generateContent").

func gemInvalid(msg string) *geminiError {
	return &geminiError{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Message: msg}
}

func gemNoKey() *geminiError {
	return &geminiError{Code: http.StatusForbidden, Status: "PERMISSION_DENIED",
		Message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."}
}

func gemBadKey() *geminiError {
	return &geminiError{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Reason: "API_KEY_INVALID",
		Message: "API key not valid. Please pass a valid API key."}
}

func gemModelNotFound(model, method string) *geminiError {
	return &geminiError{Code: http.StatusNotFound, Status: "NOT_FOUND",
		Message: fmt.Sprintf("models/%s is not found for API version v1beta, or is not supported for %s. Call ListModels to see the list of available models and their supported methods.", model, method)}
}

func gemMethodNotFound(path string) *geminiError {
	return &geminiError{Code: http.StatusNotFound, Status: "NOT_FOUND",
		Message: fmt.Sprintf("The requested URL %s was not found on this server.", path)}
}

func gemRateLimited(retryDelay int) *geminiError {
	return &geminiError{Code: http.StatusTooManyRequests, Status: "RESOURCE_EXHAUSTED", RetryDelay: retryDelay,
		Quota:   "generate_content_requests",
		Message: "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."}
}

func gemInternal() *geminiError {
	return &geminiError{Code: http.StatusInternalServerError, Status: "INTERNAL",
		Message: "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"}
}

func gemUnavailable(retryDelay int) *geminiError {
	return &geminiError{Code: http.StatusServiceUnavailable, Status: "UNAVAILABLE", RetryDelay: retryDelay,
		Message: "The model is overloaded. Please try again later."}
}

// geminiContextWindow is the input limit the context_length fault reports:
// the 1,048,576 tokens of the current Gemini models.
const geminiContextWindow = 1 << 20

func gemContextLength(promptTokens int) *geminiError {
	return gemInvalid(fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).",
		geminiContextWindow+promptTokens, geminiContextWindow))
}

func gemTooLarge(limit int64) *geminiError {
	return gemInvalid(fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", limit))
}

func gemMissingSignature(name string, position int) *geminiError {
	return gemInvalid(fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", name, position))
}

func gemBadSignature() *geminiError { return gemInvalid("Corrupted thought signature.") }
