package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/voxgate/voxgate/internal/aierr"
	"github.com/voxgate/voxgate/llm"
)

// classifyAnthropic maps an anthropic-sdk-go failure (the table is in
// docs/llm.md):
//   - an HTTP refusal by its status and headers through the one classifier
//     (aierr.Refusal: Retry-After, x-should-retry), then by the error
//     object's type and message, which say more than the status;
//   - an error event inside a 200 stream by its type alone, with status 0;
//   - anything else (transport, timeouts, undecodable events) as
//     aierr.OpenAI reads transport failures.
func classifyAnthropic(provider string, err error, now time.Time) *llm.Error {
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		c := aierr.OpenAI(err, now)
		return &llm.Error{Provider: provider, Code: c.Code, Retryable: c.Retryable, RetryAfter: c.RetryAfter, Err: err}
	}
	typ, message := apiErr.Type(), errorMessage(apiErr.RawJSON())
	if apiErr.StatusCode == http.StatusOK || apiErr.StatusCode == 0 {
		c := anthropicType(typ, message, aierr.Class{Code: aierr.Unknown})
		return &llm.Error{Provider: provider, Code: c.Code, Retryable: c.Retryable, Err: err}
	}
	var h http.Header
	if apiErr.Response != nil {
		h = apiErr.Response.Header
	}
	c := anthropicType(typ, message, aierr.Refusal(apiErr.StatusCode, "", "", "", h, now))
	// x-should-retry has the last word either way, as the SDK's own retry
	// gives it; the wait is read by the one Retry-After parser, asked as
	// for a status that is retried.
	switch h.Get("X-Should-Retry") {
	case "true":
		c.Retryable = true
	case "false":
		c.Retryable = false
	}
	c.RetryAfter = 0
	if c.Retryable {
		c.RetryAfter = aierr.Refusal(http.StatusTooManyRequests, "", "", "", h, now).RetryAfter
	}
	return &llm.Error{Provider: provider, Code: c.Code, Retryable: c.Retryable, RetryAfter: c.RetryAfter,
		Status: apiErr.StatusCode, Err: err}
}

// anthropicType refines c by the error object's type and message:
//   - rate_limit_error waits; overloaded_error (529) and api_error are
//     outages; timeout_error is the provider timing out: all retryable;
//   - authentication, permission and billing errors, an organization's
//     contract spend limit reached (contract_spend_limit_reached, new with
//     SDK v2.15; models.md), and a credit balance too low (a 400
//     invalid_request_error), need an operator;
//   - a prompt too long for the window, or a body over the size limit, is
//     a context-length failure;
//   - any other invalid_request_error or not_found_error (an unknown
//     model) is a request the provider will never take.
//
// An unknown type leaves c as the status made it.
func anthropicType(typ anthropic.ErrorType, message string, c aierr.Class) aierr.Class {
	msg := strings.ToLower(message)
	switch {
	case typ == anthropic.ErrorTypeRateLimitError:
		return aierr.Class{Code: aierr.RateLimit, Retryable: true, RetryAfter: c.RetryAfter}
	case typ == anthropic.ErrorTypeOverloadedError || typ == anthropic.ErrorTypeAPIError:
		return aierr.Class{Code: aierr.Unavailable, Retryable: true, RetryAfter: c.RetryAfter}
	case typ == anthropic.ErrorTypeTimeoutError:
		return aierr.Class{Code: aierr.Timeout, Retryable: true, RetryAfter: c.RetryAfter}
	case typ == anthropic.ErrorTypeAuthenticationError || typ == anthropic.ErrorTypePermissionError ||
		typ == anthropic.ErrorTypeBillingError || typ == "contract_spend_limit_reached" ||
		strings.Contains(msg, "credit balance is too low"):
		return aierr.Class{Code: aierr.Auth}
	case typ == "request_too_large" || strings.HasPrefix(msg, "prompt is too long") ||
		strings.Contains(msg, "exceed context limit"):
		return aierr.Class{Code: aierr.ContextLength}
	case typ == anthropic.ErrorTypeInvalidRequestError || typ == anthropic.ErrorTypeNotFoundError:
		return aierr.Class{Code: aierr.Unknown}
	}
	return c
}

// errorMessage is the error object's message, "" when there is none.
func errorMessage(raw string) string {
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &body) != nil {
		return ""
	}
	return body.Error.Message
}
