package llm

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
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// classify turns a failure of the call into what Stream and Next return:
// the caller's own context error when the caller ended it, ErrClosed after
// Close, and otherwise an *Error (see classifyOpenAI).
func (s *openaiStream) classify(caller context.Context, err error) error {
	if caller.Err() != nil {
		return caller.Err()
	}
	switch cause := context.Cause(s.upstream); {
	case errors.Is(cause, errTimedOut):
		return &Error{Provider: s.provider, Code: ProviderTimeout, Retryable: true, Err: cause}
	case errors.Is(cause, errClosing):
		return ErrClosed
	case errors.Is(cause, context.Canceled), errors.Is(cause, context.DeadlineExceeded):
		return cause // a context given to Next ended
	}
	return classifyOpenAI(s.provider, err)
}

// classifyOpenAI maps an openai-go failure to its code (the table is in
// docs/llm.md):
//   - an HTTP refusal by its status (byStatus);
//   - an error object inside a 200 stream by its type (byType);
//   - a body or chunk that does not decode, or a stream cut off, is
//     PROVIDER_INVALID_RESPONSE;
//   - a transport timeout is PROVIDER_TIMEOUT, a refused, reset or
//     otherwise failed connection PROVIDER_NETWORK, both retryable;
//   - anything else is UNKNOWN_PROVIDER_ERROR, not retryable.
func classifyOpenAI(provider string, err error) *Error {
	e := &Error{Provider: provider, Code: UnknownProviderError, Err: err}
	var apiErr *openai.Error
	var streamErr *ssestream.StreamError
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	var netErr net.Error
	var opErr *net.OpError
	var urlErr *url.Error
	switch {
	case errors.As(err, &apiErr):
		e.Code, e.Retryable = byStatus(apiErr.StatusCode, apiErr.Type, apiErr.Code)
		if e.Retryable && apiErr.Response != nil {
			e.RetryAfter = retryAfter(apiErr.Response.Header, time.Now())
		}
	case errors.As(err, &streamErr):
		typ, code := streamErrorType(streamErr.Event.Data)
		e.Code, e.Retryable = byType(typ, code)
	case errors.As(err, &urlErr):
		// The request failed before any response: even an EOF here is a
		// connection the provider dropped, not an answer cut short.
		e.Code, e.Retryable = ProviderNetwork, true
		if urlErr.Timeout() {
			e.Code = ProviderTimeout
		}
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, bufio.ErrTooLong):
		e.Code = ProviderInvalidResponse
	case errors.As(err, &netErr) && netErr.Timeout():
		e.Code, e.Retryable = ProviderTimeout, true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE), errors.As(err, &opErr), errors.As(err, &netErr):
		e.Code, e.Retryable = ProviderNetwork, true
	}
	return e
}

// byStatus maps an HTTP refusal. An account out of credit (429
// insufficient_quota) needs an operator, as a bad key does, so it is not
// retryable. A 4xx other than those is a request the provider will never
// take: not retryable, and not an unreadable answer either.
func byStatus(status int, typ, code string) (Code, bool) {
	switch {
	case status == http.StatusTooManyRequests && (code == "insufficient_quota" || typ == "insufficient_quota"):
		return ProviderAuth, false
	case status == http.StatusTooManyRequests:
		return ProviderRateLimit, true
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ProviderAuth, false
	case status == http.StatusRequestTimeout:
		return ProviderTimeout, true
	case status >= 500:
		return ProviderUnavailable, true
	}
	return UnknownProviderError, false
}

// byType maps the error object of a stream that had already answered 200.
func byType(typ, code string) (Code, bool) {
	switch {
	case typ == "insufficient_quota" || code == "insufficient_quota":
		return ProviderAuth, false
	case code == "rate_limit_exceeded" || typ == "rate_limit_exceeded" || typ == "requests" || typ == "tokens":
		return ProviderRateLimit, true
	case typ == "server_error" || typ == "api_error" || code == "server_error":
		return ProviderUnavailable, true
	case typ == "authentication_error" || typ == "permission_error" || code == "invalid_api_key":
		return ProviderAuth, false
	}
	return UnknownProviderError, false
}

// streamErrorType reads {"error":{"type","code"}}; code may be null or, from
// some compatible servers, a number.
func streamErrorType(data []byte) (typ, code string) {
	var body struct {
		Error struct {
			Type string          `json:"type"`
			Code json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &body) != nil {
		return "", ""
	}
	if json.Unmarshal(body.Error.Code, &code) != nil {
		code = string(body.Error.Code)
	}
	return body.Error.Type, code
}

// maxRetryAfter caps a provider's advice: beyond an hour it is no longer
// something a caller should wait out.
const maxRetryAfter = 3600

// retryAfter reads the provider's advice in whole seconds, rounded up:
// retry-after-ms, else Retry-After as seconds or an HTTP date. 0 when there
// is none.
func retryAfter(h http.Header, now time.Time) int {
	secs := 0.0
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		secs = ms / 1000
	} else if v := h.Get("Retry-After"); v != "" {
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			secs = n
		} else if t, err := http.ParseTime(v); err == nil {
			secs = t.Sub(now).Seconds()
		}
	}
	if secs <= 0 || math.IsNaN(secs) {
		return 0
	}
	return int(math.Min(math.Ceil(secs), maxRetryAfter))
}
