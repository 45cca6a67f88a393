package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// APIError is an error in OpenAI's wire shape:
// {"error":{"message","type","param","code"}} with its HTTP status.
type APIError struct {
	Status  int
	Message string
	Type    string
	Param   string // empty is sent as null
	Code    string // empty is sent as null
	// RetryAfter, in seconds, is sent as the retry-after header when positive.
	RetryAfter int
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message)
}

// errorBody is the JSON an APIError is written as; it must validate against
// the spec's ErrorResponse schema, which requires param and code (nullable).
type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// MarshalJSON renders the error body as the API sends it.
func (e *APIError) MarshalJSON() ([]byte, error) {
	var b errorBody
	b.Error.Message = e.Message
	b.Error.Type = e.Type
	if e.Param != "" {
		b.Error.Param = &e.Param
	}
	if e.Code != "" {
		b.Error.Code = &e.Code
	}
	return json.Marshal(b)
}

func WriteAPIError(w http.ResponseWriter, e *APIError) {
	body, _ := e.MarshalJSON() // cannot fail: strings and pointers only
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

// ErrClientGone and ErrServerClosed end a handler early. They are not
// written to the client: it is gone, or the simulator is shutting down.
var (
	ErrClientGone   = errors.New("sim: client went away")
	ErrServerClosed = errors.New("sim: server closed")
)

// The constructors below copy the real API's messages, types and codes so
// that clients classify them as they would in production.

func ErrInvalidJSON() *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error",
		Message: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)"}
}

func ErrMissingParam(param string) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param,
		Code: "missing_required_parameter", Message: fmt.Sprintf("Missing required parameter: '%s'.", param)}
}

func ErrInvalidType(param, want, got string) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Code: "invalid_type",
		Message: fmt.Sprintf("Invalid type for '%s': expected %s, but got %s instead.", param, want, got)}
}

func ErrInvalidValue(param, msg string) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param,
		Code: "invalid_value", Message: msg}
}

func ErrInvalidRequest(param, msg string) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Message: msg}
}

func ErrTooLarge(limit int64) *APIError {
	return &APIError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "request_too_large",
		Message: fmt.Sprintf("Request body too large: the limit is %d bytes.", limit)}
}

func ErrNoKey() *APIError {
	return &APIError{Status: http.StatusUnauthorized, Type: "invalid_request_error",
		Message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."}
}

func ErrBadKey() *APIError {
	return &APIError{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key",
		Message: "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."}
}

func ErrModelNotFound(model string) *APIError {
	return &APIError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
		Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model)}
}

func ErrInvalidURL(method, path string) *APIError {
	return &APIError{Status: http.StatusNotFound, Type: "invalid_request_error",
		Message: fmt.Sprintf("Invalid URL (%s %s)", method, path)}
}

func ErrRateLimited(retryAfter int) *APIError {
	return &APIError{Status: http.StatusTooManyRequests, Type: "requests", Code: "rate_limit_exceeded", RetryAfter: retryAfter,
		Message: "Rate limit reached for requests (simulated). Please try again later."}
}

func ErrQuotaExceeded() *APIError {
	return &APIError{Status: http.StatusTooManyRequests, Type: "insufficient_quota", Code: "insufficient_quota",
		Message: "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."}
}

func ErrUnknownParams(names []string) *APIError {
	msg := "Unrecognized request argument supplied: " + names[0]
	if len(names) > 1 {
		msg = "Unrecognized request arguments supplied: " + strings.Join(names, ", ")
	}
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: names[0],
		Code: "unknown_parameter", Message: msg}
}

func ErrUnsupportedParam(param, msg string) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param,
		Code: "unsupported_parameter", Message: msg}
}

func ErrServer() *APIError {
	return &APIError{Status: http.StatusInternalServerError, Type: "server_error",
		Message: "The server had an error while processing your request. Sorry about that!"}
}

func ErrUnavailable(retryAfter int) *APIError {
	return &APIError{Status: http.StatusServiceUnavailable, Type: "server_error", RetryAfter: retryAfter,
		Message: "The engine is currently overloaded, please try again later."}
}

// ErrContextLength is the real API's refusal of a prompt longer than the
// model's context window.
func ErrContextLength(model string) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "messages",
		Code:    "context_length_exceeded",
		Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in more tokens. Please reduce the length of the messages.", contextWindowOf(model))}
}

// ErrContentPolicy is the real API's refusal of a prompt its safety system
// flagged, before any answer.
func ErrContentPolicy() *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "content_policy_violation",
		Message: "Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system."}
}

// contextWindowOf is the window named in a context-length refusal; the
// simulator has no per-model table, so every model says the same.
func contextWindowOf(string) int { return 128000 }
