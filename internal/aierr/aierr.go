// Package aierr classifies an AI provider's failure once, for the text side
// (llm) and the voice side (realtime) alike: the provider-neutral codes of
// DESIGN §11, whether trying again can help, the provider's own wait, and
// the one client code of DESIGN §5 each becomes. Both sides import it, so
// an OpenAI refusal reads the same to a chat app and to a voice app.
package aierr

import (
	"github.com/voxgate/voxgate/internal/apierr"
)

// Code is a provider-neutral failure (DESIGN §11).
type Code string

// The codes of DESIGN §11.
const (
	Timeout         Code = "PROVIDER_TIMEOUT"
	RateLimit       Code = "PROVIDER_RATE_LIMIT"
	Auth            Code = "PROVIDER_AUTH"
	Unavailable     Code = "PROVIDER_UNAVAILABLE"
	InvalidResponse Code = "PROVIDER_INVALID_RESPONSE"
	ContentFilter   Code = "PROVIDER_CONTENT_FILTER"
	ContextLength   Code = "PROVIDER_CONTEXT_LENGTH"
	Network         Code = "PROVIDER_NETWORK"
	Unknown         Code = "UNKNOWN_PROVIDER_ERROR"
)

// MaxRetryAfter caps a provider's advice, in seconds: beyond an hour it is
// no longer something a caller should wait out.
const MaxRetryAfter = 3600

// Class is what a failure means to the gateway.
type Class struct {
	Code Code
	// Retryable says the same request may succeed later.
	Retryable bool
	// RetryAfter is the provider's wait in whole seconds (rounded up,
	// capped at MaxRetryAfter); 0 when it gave none.
	RetryAfter int
}

// APIError is the client's view of c (docs/llm.md and docs/voice.md hold
// the table), wrapping cause for the log:
//   - a rate limit is AI_RATE_LIMITED with the provider's wait;
//   - a refused key or account, a request the provider will never take
//     (too large, an unknown model or parameter) and an unexplained
//     failure are AI_CONFIG_ERROR: retrying cannot help, an operator must
//     act;
//   - an answer that does not decode is AI_PARSE_ERROR;
//   - a refusal on the provider's safety policy is AI_CONTENT_FILTERED:
//     a wellness app does not route around it, and trying again will not
//     change it (DESIGN §11);
//   - an outage, a timeout or a cut connection is AI_UNAVAILABLE with the
//     provider's wait, at least a second.
func (c Class) APIError(cause error) *apierr.Error {
	switch c.Code {
	case RateLimit:
		return apierr.Wrap(apierr.AIRateLimited, "", cause).WithRetry(max(c.RetryAfter, 1))
	case Auth, ContextLength, Unknown:
		return apierr.Wrap(apierr.AIConfigError, "", cause)
	case InvalidResponse:
		return apierr.Wrap(apierr.AIParseError, "", cause)
	case ContentFilter:
		return apierr.Wrap(apierr.AIContentFiltered, "", cause)
	}
	return apierr.Wrap(apierr.AIUnavailable, "", cause).WithRetry(max(c.RetryAfter, 1))
}
