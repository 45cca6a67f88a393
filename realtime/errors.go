package realtime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/voxgate/voxgate/internal/aierr"
	"github.com/voxgate/voxgate/internal/apierr"
)

// retryBackoff is the wait before a retry the provider gave no wait for.
const retryBackoff = 500 * time.Millisecond

// do runs call under the client's timeout with up to c.retries retries. A
// failure is retried only when the classifier says it may succeed later
// and the provider's wait (or retryBackoff) ends before ctx's deadline,
// the caller's included: a long Retry-After is answered at once, with
// that wait, never slept through. openai-go's own retries are off, so
// this is the only place a call is repeated.
func (c *Client) do(ctx context.Context, doing string, call func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		err := call(ctx)
		if err == nil {
			return nil
		}
		cls := aierr.OpenAI(err, time.Now())
		wait := retryBackoff
		if cls.RetryAfter > 0 {
			wait = time.Duration(cls.RetryAfter) * time.Second
		}
		deadline, _ := ctx.Deadline()
		if !cls.Retryable || attempt >= c.retries || ctx.Err() != nil || time.Now().Add(wait).After(deadline) {
			return normalize(ctx, doing, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return normalize(ctx, doing, err)
		case <-t.C:
		}
	}
}

// normalize turns a provider failure into the one error type through the
// classifier chat uses too (aierr; the table is in docs/voice.md), with
// the cause kept for the log. A caller that went away gets its own
// context error back, untouched.
func normalize(ctx context.Context, doing string, err error) error {
	cause := fmt.Errorf("realtime: %s: %w", doing, err)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) && ctx.Err() != nil && context.Cause(ctx) == context.Canceled && !errors.Is(err, context.DeadlineExceeded) {
		return err // the caller left; nothing to tell it
	}
	if offerRefused(apiErr) {
		// The app's offer, not the gateway's config: the app's to fix, and
		// nothing an operator must hear about.
		return apierr.Wrap(apierr.Validation, "The call could not be placed with this offer.", cause)
	}
	return aierr.OpenAI(err, time.Now()).APIError(cause)
}

// offerRefused is the provider refusing a call's SDP offer: a 400 naming
// the offer (param sdp) or code invalid_offer.
func offerRefused(e *openai.Error) bool {
	return e != nil && e.StatusCode == http.StatusBadRequest && (e.Param == "sdp" || e.Code == "invalid_offer")
}

func parseError(doing string, err error) error {
	return apierr.Wrap(apierr.AIParseError, "", fmt.Errorf("realtime: %s: %w", doing, err))
}
