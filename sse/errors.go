package sse

import (
	"context"
	"errors"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/llm"
)

// loopError maps the loop's failure: a route's by its outcome (DESIGN §11's
// table; degraded mode is no error and never reaches here), a provider's
// through DESIGN §11's classes, the turn's own (an event that could not be
// sent, the executor) as it is.
func loopError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctxError(ctx, err)
	}
	var re *llm.RouteError
	if errors.As(err, &re) {
		switch re.Outcome {
		case llm.RouteAuth:
			return apierr.Wrap(apierr.AIConfigError, "", err)
		case llm.RouteRateLimited:
			var le *llm.Error
			retry := 0
			if errors.As(err, &le) {
				retry = le.RetryAfter
			}
			return apierr.Wrap(apierr.AIRateLimited, "", err).WithRetry(max(retry, 1))
		case llm.RouteContentFiltered:
			return apierr.Wrap(apierr.AIContentFiltered, "", err)
		}
		if errors.Is(err, llm.ErrUnknownRoute) {
			return apierr.Wrap(apierr.AIConfigError, "", err)
		}
		// RouteRefused and RouteCut: the provider's failure says what.
	}
	var le *llm.Error
	if errors.As(err, &le) {
		return le.Class().APIError(err)
	}
	return err
}

// ctxError explains a turn whose context ended: the client left, the turn
// ran past its bound, or the server is shutting down.
func ctxError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return apierr.Wrap(apierr.AIUnavailable, "The answer took too long. Please try again.", err).WithRetry(5)
	}
	return apierr.Wrap(apierr.Unavailable, "", context.Cause(ctx)).WithRetry(5)
}

func errWorkflowNotInPlan() error {
	return apierr.New(apierr.ToolNotAllowed, "That action isn't included in your plan.")
}

func errConfirmationGone() error {
	return apierr.New(apierr.NotFound, "That confirmation is not available any more.")
}
