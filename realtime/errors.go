package realtime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/openai/openai-go/v3"

	"github.com/voxgate/voxgate/internal/apierr"
)

// normalize turns a provider failure into the one error type, with an
// AI_* code the app can act on and the cause kept for the log:
//   - 429 rate limit → AI_RATE_LIMITED, with the provider's Retry-After;
//   - 401, 403, 400, 404, 422, and a 429 insufficient_quota (the account
//     needs an operator, not a retry) → AI_CONFIG_ERROR;
//   - 5xx, a timeout or a network failure → AI_UNAVAILABLE, retryable;
//   - an answer that does not decode → AI_PARSE_ERROR.
//
// A caller that went away gets its own context error back, untouched.
func normalize(ctx context.Context, doing string, err error) error {
	cause := fmt.Errorf("realtime: %s: %w", doing, err)
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return byStatus(apiErr.StatusCode, apiErr.Code, apiErr.Response, cause)
	}
	if ctx.Err() != nil && context.Cause(ctx) == context.Canceled && !errors.Is(err, context.DeadlineExceeded) {
		return err // the caller left; nothing to tell it
	}
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) {
		return apierr.Wrap(apierr.AIUnavailable, "", cause).WithRetry(1)
	}
	return parseError(doing, err)
}

// byStatus maps a provider's HTTP refusal to its AI_* code (see normalize).
func byStatus(status int, code string, res *http.Response, cause error) error {
	switch {
	case status == http.StatusTooManyRequests && code != "insufficient_quota":
		return apierr.Wrap(apierr.AIRateLimited, "", cause).WithRetry(retryAfter(res))
	case status >= 500:
		return apierr.Wrap(apierr.AIUnavailable, "", cause).WithRetry(retryAfter(res))
	default:
		return apierr.Wrap(apierr.AIConfigError, "", cause)
	}
}

func parseError(doing string, err error) error {
	return apierr.Wrap(apierr.AIParseError, "", fmt.Errorf("realtime: %s: %w", doing, err))
}

// retryAfter reads a Retry-After in seconds; 1 when absent or unreadable.
func retryAfter(res *http.Response) int {
	if res == nil {
		return 1
	}
	if n, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && n > 0 {
		return min(n, 3600)
	}
	return 1
}
