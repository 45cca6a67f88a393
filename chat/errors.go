package chat

import (
	"context"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/unit"
)

// loopError maps the chat loop's failure: the route's or a provider's
// through routeError, the turn's own (an event that could not be sent,
// the executor) as it is.
func loopError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return unit.CtxError(ctx, err)
	}
	if e, ok := unit.RouteError(err, unit.ByGateway); ok {
		return e
	}
	return err
}

func errWorkflowNotInPlan() error {
	return apierr.New(apierr.ToolNotAllowed, "That action isn't included in your plan.")
}

func errConfirmationGone() error {
	return apierr.New(apierr.NotFound, "That confirmation is not available any more.")
}
