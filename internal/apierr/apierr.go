// Package apierr holds voxgate's one error type. Every failure that reaches a
// client is an *Error with a Code from DESIGN §5; the Code decides the HTTP
// status, the Message is safe to show a user, and the wrapped cause is only
// ever logged.
package apierr

import (
	"errors"
	"fmt"
	"net/http"
)

// Code is a stable, client-visible error code.
type Code string

// The codes of DESIGN §5.
const (
	InvalidRequest    Code = "INVALID_REQUEST"
	Unauthorized      Code = "UNAUTHORIZED"
	Forbidden         Code = "FORBIDDEN"
	ToolNotAllowed    Code = "TOOL_NOT_ALLOWED"
	NotFound          Code = "NOT_FOUND"
	MethodNotAllowed  Code = "METHOD_NOT_ALLOWED" // not in DESIGN §5: a route that exists, called with the wrong method
	ToolNotFound      Code = "TOOL_NOT_FOUND"
	SessionEnded      Code = "SESSION_ENDED"
	Conflict          Code = "CONFLICT"
	RequestTimeout    Code = "REQUEST_TIMEOUT"
	PayloadTooLarge   Code = "PAYLOAD_TOO_LARGE"
	ToolValidation    Code = "TOOL_VALIDATION_ERROR"
	Validation        Code = "VALIDATION_ERROR" // not in DESIGN §5: well-formed input with a value the gateway refuses (e.g. an unknown plan)
	AIValidation      Code = "AI_VALIDATION_ERROR"
	AIPIILeak         Code = "AI_PII_LEAK"
	AIContentFiltered Code = "AI_CONTENT_FILTERED"  // the provider refused on safety grounds; never failed over
	KeyMismatch       Code = "IDEMPOTENCY_MISMATCH" // an Idempotency-Key reused with a different request
	RateLimited       Code = "RATE_LIMITED"
	ConcurrentLimit   Code = "CONCURRENT_LIMIT"
	QuotaExceeded     Code = "QUOTA_EXCEEDED"
	AIRateLimited     Code = "AI_RATE_LIMITED"
	AIConfigError     Code = "AI_CONFIG_ERROR"
	AIParseError      Code = "AI_PARSE_ERROR"
	AIUnavailable     Code = "AI_UNAVAILABLE" // not in DESIGN §5: the provider is down or timed out; retryable, unlike AI_CONFIG_ERROR
	Unavailable       Code = "UNAVAILABLE"
	AIFeatureDisabled Code = "AI_FEATURE_DISABLED"
	Internal          Code = "INTERNAL"
)

// info is the one table that maps a code to its status and default message.
var info = map[Code]struct {
	status  int
	message string
}{
	InvalidRequest:    {http.StatusBadRequest, "The request is not valid."},
	Unauthorized:      {http.StatusUnauthorized, "Please sign in again."},
	Forbidden:         {http.StatusForbidden, "You don't have access to this."},
	ToolNotAllowed:    {http.StatusForbidden, "That action isn't available here."},
	NotFound:          {http.StatusNotFound, "We couldn't find that."},
	ToolNotFound:      {http.StatusNotFound, "That action doesn't exist."},
	MethodNotAllowed:  {http.StatusMethodNotAllowed, "This route does not accept that method."},
	SessionEnded:      {http.StatusConflict, "This session has already ended."},
	Conflict:          {http.StatusConflict, "This conflicts with a request already made."},
	RequestTimeout:    {http.StatusRequestTimeout, "The request took too long to arrive. Please try again."},
	PayloadTooLarge:   {http.StatusRequestEntityTooLarge, "The request is too large."},
	ToolValidation:    {http.StatusUnprocessableEntity, "The action's details are not valid."},
	Validation:        {http.StatusUnprocessableEntity, "A value in the request is not acceptable."},
	AIValidation:      {http.StatusUnprocessableEntity, "The assistant's answer could not be checked. Please try again."},
	AIPIILeak:         {http.StatusUnprocessableEntity, "The assistant's answer was withheld. Please try again."},
	AIContentFiltered: {http.StatusUnprocessableEntity, "The assistant can't help with that request."},
	KeyMismatch:       {http.StatusUnprocessableEntity, "This Idempotency-Key was already used for a different request."},
	RateLimited:       {http.StatusTooManyRequests, "You've been busy! Give me a moment to catch up."},
	ConcurrentLimit:   {http.StatusTooManyRequests, "You've been busy! Give me a moment to catch up."},
	QuotaExceeded:     {http.StatusTooManyRequests, "You've reached your limit for now."},
	AIRateLimited:     {http.StatusTooManyRequests, "The assistant is busy. Please try again in a moment."},
	AIConfigError:     {http.StatusBadGateway, "The assistant is not available right now."},
	AIParseError:      {http.StatusBadGateway, "The assistant's answer could not be read. Please try again."},
	AIUnavailable:     {http.StatusServiceUnavailable, "The assistant is not available right now. Please try again shortly."},
	Unavailable:       {http.StatusServiceUnavailable, "The service is busy. Please try again shortly."},
	AIFeatureDisabled: {http.StatusServiceUnavailable, "The assistant is switched off right now."},
	Internal:          {http.StatusInternalServerError, "Something went wrong on our side."},
}

// Error is the one error type. Message is shown to clients; Err is the
// internal cause, logged once at the HTTP boundary and never sent.
type Error struct {
	Code       Code
	Message    string
	RetryAfter int            // seconds; sent as retry_after_s and Retry-After
	Fields     map[string]any // extra client-safe fields, e.g. the active session_id
	Err        error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Status is the HTTP status for the error's code.
func (e *Error) Status() int { return Status(e.Code) }

// New returns an error with code and a client-safe message. An empty message
// takes the code's default.
func New(code Code, message string) *Error {
	if message == "" {
		message = DefaultMessage(code)
	}
	return &Error{Code: code, Message: message}
}

// Errorf is New with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return New(code, fmt.Sprintf(format, args...))
}

// Wrap returns an error with code and message that keeps cause for the log.
func Wrap(code Code, message string, cause error) *Error {
	e := New(code, message)
	e.Err = cause
	return e
}

// WithRetry sets RetryAfter, at least 1 second, and returns e.
func (e *Error) WithRetry(seconds int) *Error {
	e.RetryAfter = max(seconds, 1)
	return e
}

// MaxClientWait is the longest Retry-After, in seconds, that a client
// should sleep through inside one request. It is a minute window's
// longest wait; openai-go gives up on a Retry-After past two minutes, but
// the Node openai client sleeps whatever it is told (a spent day's 37,757
// seconds, then two more tries).
const MaxClientWait = 60

// WorthWaiting reports whether a client should retry e by itself after
// RetryAfter: a wait no longer than MaxClientWait. A longer one (a daily or
// monthly quota spent) is for an app to schedule, not for an SDK to sleep
// through (docs/quota.md, "Retrying").
func (e *Error) WorthWaiting() bool { return max(e.RetryAfter, 1) <= MaxClientWait }

// With adds a client-safe field and returns e.
func (e *Error) With(key string, value any) *Error {
	if e.Fields == nil {
		e.Fields = map[string]any{}
	}
	e.Fields[key] = value
	return e
}

// From finds the *Error in err's chain. Anything else is INTERNAL with the
// default message, so internals never reach a client.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Wrap(Internal, "", err)
}

// CodeOf is the code of err, or "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	return From(err).Code
}

// Status is the HTTP status for code; unknown codes are 500.
func Status(code Code) int {
	if i, ok := info[code]; ok {
		return i.status
	}
	return http.StatusInternalServerError
}

// DefaultMessage is code's friendly default message.
func DefaultMessage(code Code) string {
	if i, ok := info[code]; ok {
		return i.message
	}
	return info[Internal].message
}

// Codes lists every code, for documentation and tests.
func Codes() []Code {
	out := make([]Code, 0, len(info))
	for c := range info {
		out = append(out, c)
	}
	return out
}
