package aierr

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// OpenAI classifies a failure of an openai-go call (the table is in
// docs/llm.md):
//   - an HTTP refusal by its status, body and headers (Refusal);
//   - an error object inside a 200 stream by its type and code;
//   - a transport timeout is Timeout, a refused, reset, dropped or cut
//     connection Network, both retryable: a body cut mid-stream is a
//     network failure, not an answer the provider got wrong;
//   - a body or chunk that does not decode is InvalidResponse;
//   - anything else is Unknown, not retryable.
//
// now reads a Retry-After given as an HTTP date.
func OpenAI(err error, now time.Time) Class {
	var apiErr *openai.Error
	var streamErr *ssestream.StreamError
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	var netErr net.Error
	var opErr *net.OpError
	var urlErr *url.Error
	switch {
	case errors.As(err, &apiErr):
		var h http.Header
		if apiErr.Response != nil {
			h = apiErr.Response.Header
		}
		return Refusal(apiErr.StatusCode, apiErr.Type, apiErr.Code, apiErr.Message, h, now)
	case errors.As(err, &streamErr):
		return inStream(streamErr.Event.Data)
	case errors.As(err, &urlErr) && urlErr.Timeout(), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &netErr) && netErr.Timeout():
		return Class{Code: Timeout, Retryable: true}
	case decodeFailed(err), errors.As(err, &syntaxErr), errors.As(err, &typeErr), errors.Is(err, bufio.ErrTooLong):
		return Class{Code: InvalidResponse}
	case errors.As(err, &urlErr), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.As(err, &opErr), errors.As(err, &netErr):
		return Class{Code: Network, Retryable: true}
	}
	return Class{Code: Unknown}
}

// decodeFailed is openai-go failing to decode a body it read whole: its
// JSON decoder reports a truncated document as io.ErrUnexpectedEOF, the
// same error a connection cut mid-body gives, and only the SDK's wrapper
// ("error parsing response json", internal/requestconfig) tells the two
// apart.
func decodeFailed(err error) bool {
	return strings.Contains(err.Error(), "error parsing response json")
}

// Refusal classifies an HTTP answer that is not a success, from its status,
// the error object's type, code and message, and its headers:
// x-should-retry overrides the status's retry advice either way, as
// openai-go's own retry does; Retry-After comes from retry-after-ms, else
// Retry-After as seconds (fractions too) or an HTTP date.
func Refusal(status int, typ, code, message string, h http.Header, now time.Time) Class {
	c := byStatus(status, typ, code, message)
	switch h.Get("X-Should-Retry") {
	case "true":
		c.Retryable = true
	case "false":
		c.Retryable = false
	}
	if c.Retryable {
		c.RetryAfter = RetryAfter(h, now)
	}
	return c
}

// byStatus maps an HTTP refusal.
//   - 429 insufficient_quota is an account out of credit, and a 429 "Request
//     too large" a request over the organization's whole per-minute limit:
//     neither is helped by waiting;
//   - 408 is the provider timing out, 409 a conflict it says to retry (as
//     openai-go does);
//   - 400 context_length_exceeded is a request too long for the model;
//   - any other 4xx is a request the provider will never take.
func byStatus(status int, typ, code, message string) Class {
	switch {
	case isQuota(typ, code):
		return Class{Code: Auth}
	case status == http.StatusTooManyRequests && tooLarge(message):
		return Class{Code: ContextLength}
	case status == http.StatusTooManyRequests:
		return Class{Code: RateLimit, Retryable: true}
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return Class{Code: Auth}
	case status == http.StatusRequestTimeout:
		return Class{Code: Timeout, Retryable: true}
	case status == http.StatusConflict || status >= 500:
		return Class{Code: Unavailable, Retryable: true}
	case code == "context_length_exceeded":
		return Class{Code: ContextLength}
	}
	return Class{Code: Unknown}
}

// inStream maps the error object of a stream that had already answered
// 200: {"error":{"type","code","message"}}.
func inStream(data []byte) Class {
	typ, code, message := errorObject(data)
	switch {
	case isQuota(typ, code):
		return Class{Code: Auth}
	case tooLarge(message):
		return Class{Code: ContextLength}
	case code == "rate_limit_exceeded" || typ == "rate_limit_exceeded" || typ == "requests" || typ == "tokens":
		return Class{Code: RateLimit, Retryable: true}
	case typ == "server_error" || typ == "api_error" || code == "server_error":
		return Class{Code: Unavailable, Retryable: true}
	case typ == "authentication_error" || typ == "permission_error" || code == "invalid_api_key":
		return Class{Code: Auth}
	case code == "context_length_exceeded":
		return Class{Code: ContextLength}
	}
	return Class{Code: Unknown}
}

func isQuota(typ, code string) bool {
	return typ == "insufficient_quota" || code == "insufficient_quota"
}

// tooLarge recognizes a 429 that no wait can cure: the API sends it as an
// ordinary rate_limit_exceeded, told apart only by its message ("Request
// too large for <model> in organization … on tokens per min").
func tooLarge(message string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(message)), "request too large")
}

// errorObject reads an error object's type, code and message; code may be
// null or, from some compatible servers, a number.
func errorObject(data []byte) (typ, code, message string) {
	var body struct {
		Error struct {
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
			Message string          `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &body) != nil {
		return "", "", ""
	}
	if json.Unmarshal(body.Error.Code, &code) != nil {
		code = string(body.Error.Code)
	}
	return body.Error.Type, code, body.Error.Message
}

// RetryAfter reads a provider's wait in whole seconds, rounded up:
// retry-after-ms, else Retry-After as seconds or an HTTP date. 0 when there
// is none or it has passed. It is the one reading of these headers, for
// every provider's adapter.
func RetryAfter(h http.Header, now time.Time) int {
	secs := 0.0
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		secs = ms / 1000
	} else if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if n, err := strconv.ParseFloat(v, 64); err == nil || errors.Is(err, strconv.ErrRange) {
			secs = n // a number too large to hold is +Inf, capped below
		} else if t, err := http.ParseTime(v); err == nil {
			secs = t.Sub(now).Seconds()
		}
	}
	return WholeSeconds(secs)
}

// WholeSeconds is a wait of secs in whole seconds, rounded up and capped
// at MaxRetryAfter; 0 for none, a past one or NaN.
func WholeSeconds(secs float64) int {
	if !(secs > 0) { // also NaN
		return 0
	}
	return int(math.Min(math.Ceil(secs), MaxRetryAfter))
}
