package unit

import (
	"context"
	"errors"
	"net/http"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/llm"
)

// Author is who wrote the request a routed call carried: who is to blame
// when a provider refuses it for what is in it.
type Author int

const (
	// ByGateway: /v1/chat builds the conversation itself (instructions,
	// profile, the last 10 messages, a message of at most 2,000
	// characters; DESIGN §7) and names chat.route, so only an operator
	// can fix a conversation no target can take.
	ByGateway Author = iota
	// ByClient: /v1/chat/completions passes the client's own messages and
	// its model (a route name), so the client can.
	ByClient
)

// RouteError is what a client is told of a routed call's failure, on both
// endpoints (docs/chat.md, "One rule for a request refused"): DESIGN §11's
// outcome table, and a request refused for what is in it — a context too
// long for every target that could take it, a route that does not exist —
// is the fault of whoever wrote it: the client's a 400 (404 for the
// route, as OpenAI's clients show a model they may not use), the
// gateway's 502 AI_CONFIG_ERROR. ok is false for a failure that is
// neither the route's nor a provider's (the turn's own), left to the
// caller. Every target failing is 503 AI_UNAVAILABLE here; /v1/chat
// answers it in degraded mode before asking.
func RouteError(err error, by Author) (e *apierr.Error, ok bool) {
	var le *llm.Error
	hasLE := errors.As(err, &le)
	var re *llm.RouteError
	if errors.As(err, &re) {
		switch re.Outcome {
		case llm.RouteAuth:
			return apierr.Wrap(apierr.AIConfigError, "", err), true
		case llm.RouteRateLimited:
			retry := 1
			if hasLE {
				retry = max(le.RetryAfter, 1)
			}
			return apierr.Wrap(apierr.AIRateLimited, "", err).WithRetry(retry), true
		case llm.RouteContentFiltered:
			return apierr.Wrap(apierr.AIContentFiltered, "", err), true
		case llm.RouteDegraded:
			return apierr.Wrap(apierr.AIUnavailable, "", err).WithRetry(5), true
		}
		if errors.Is(err, llm.ErrUnknownRoute) {
			if by == ByClient {
				return apierr.From(ErrNoSuchModel()), true
			}
			return apierr.Wrap(apierr.AIConfigError, "", err), true
		}
	}
	switch {
	case hasLE && le.Code == llm.ProviderContextLength && by == ByClient:
		return apierr.Wrap(apierr.InvalidRequest, "The conversation is longer than the model can take.", err).
			With("param", "messages").With("type", "invalid_request_error"), true
	case hasLE && by == ByClient && le.Status == http.StatusBadRequest && le.Code == llm.UnknownProviderError:
		// A provider refusing what the client wrote (its messages, tools,
		// parameters) once the gateway's own checks passed: the client's
		// to fix, and no retry helps (a 502 is retried by OpenAI's SDKs,
		// each time calling the provider). The provider's param is not
		// carried across the seam, so it is null.
		return apierr.Wrap(apierr.InvalidRequest, "The model's provider refused this request; check its messages, tools and parameters.", err).
			With("param", nil).With("type", "invalid_request_error"), true
	case hasLE:
		// RouteRefused, RouteCut and a bare provider's failure: its class
		// says what (AI_PARSE_ERROR for an unreadable chunk, a context too
		// long the gateway's AI_CONFIG_ERROR).
		return le.Class().APIError(err), true
	case re != nil:
		return apierr.Wrap(apierr.AIUnavailable, "", err).WithRetry(5), true
	}
	return nil, false
}

// CtxError explains a unit whose context ended: the client left, the turn
// ran past its bound, or the server is shutting down.
func CtxError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return apierr.Wrap(apierr.AIUnavailable, "The answer took too long. Please try again.", err).WithRetry(5)
	}
	return apierr.Wrap(apierr.Unavailable, "", context.Cause(ctx)).WithRetry(5)
}

// ErrNoSuchModel is a model that names no route the caller may use: one
// answer for both, so a plan's routes are not probed. Its param and type
// are what OpenAI's clients show for a model they may not use.
func ErrNoSuchModel() error {
	return apierr.New(apierr.NotFound, "That model does not exist or your plan does not include it; GET /v1/models lists the ones you can use.").
		With("param", "model").With("type", "invalid_request_error")
}

// ClientError is what the client of an endpoint that keeps no
// conversation (a completion, a response) gets for a failure: the route's
// through RouteError, blamed on the client for what is in its request;
// the gateway's own verdict (the output filter's AI_PII_LEAK) as it is;
// anything else from the stream is the upstream's, 503 AI_UNAVAILABLE.
func ClientError(ctx context.Context, err error) *apierr.Error {
	if ctx.Err() != nil {
		return apierr.From(CtxError(ctx, err))
	}
	if e, ok := RouteError(err, ByClient); ok {
		return e
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae
	}
	return apierr.Wrap(apierr.AIUnavailable, "", err).WithRetry(5)
}
