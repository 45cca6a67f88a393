package unit

import (
	"errors"
	"fmt"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/llm"
)

// The one rule both endpoints map a routed call's failure by: the same
// table, except that a request refused for what is in it is blamed on
// whoever wrote it (docs/chat.md, "One rule for a request refused").
func TestRouteErrorOneRule(t *testing.T) {
	t.Parallel()
	refused := func(e *llm.Error) error {
		return &llm.RouteError{Route: "r", Outcome: llm.RouteRefused, Err: e}
	}
	tooLong := &llm.Error{Provider: "p", Code: llm.ProviderContextLength, Status: 400}
	type want struct {
		status int
		code   apierr.Code
		param  any
	}
	for _, tc := range []struct {
		name            string
		err             error
		gateway, client want
	}{
		{"a context too long for every target", refused(tooLong),
			want{502, apierr.AIConfigError, nil}, want{400, apierr.InvalidRequest, "messages"}},
		{"a context too long, from a bare provider", fmt.Errorf("call: %w", tooLong),
			want{502, apierr.AIConfigError, nil}, want{400, apierr.InvalidRequest, "messages"}},
		{"a route that does not exist", &llm.RouteError{Route: "r", Outcome: llm.RouteRefused, Err: llm.ErrUnknownRoute},
			want{502, apierr.AIConfigError, nil}, want{404, apierr.NotFound, "model"}},
		{"another 400", refused(&llm.Error{Code: llm.UnknownProviderError, Status: 400}),
			want{502, apierr.AIConfigError, nil}, want{400, apierr.InvalidRequest, nil}},
		{"a 404 (the target's model)", refused(&llm.Error{Code: llm.UnknownProviderError, Status: 404}),
			want{502, apierr.AIConfigError, nil}, want{502, apierr.AIConfigError, nil}},
		{"an exhausted account's 400", refused(&llm.Error{Code: llm.ProviderAuth, Status: 400}),
			want{502, apierr.AIConfigError, nil}, want{502, apierr.AIConfigError, nil}},
		{"every attempt an auth error", &llm.RouteError{Outcome: llm.RouteAuth, Err: &llm.Error{Code: llm.ProviderAuth}},
			want{502, apierr.AIConfigError, nil}, want{502, apierr.AIConfigError, nil}},
		{"every attempt rate-limited", &llm.RouteError{Outcome: llm.RouteRateLimited, Err: &llm.Error{Code: llm.ProviderRateLimit, RetryAfter: 7}},
			want{429, apierr.AIRateLimited, nil}, want{429, apierr.AIRateLimited, nil}},
		{"a content filter", &llm.RouteError{Outcome: llm.RouteContentFiltered, Err: &llm.Error{Code: llm.ProviderContentFilter}},
			want{422, apierr.AIContentFiltered, nil}, want{422, apierr.AIContentFiltered, nil}},
		{"a chunk unreadable after commit", &llm.RouteError{Outcome: llm.RouteCut, Committed: true, Err: &llm.Error{Code: llm.ProviderInvalidResponse}},
			want{502, apierr.AIParseError, nil}, want{502, apierr.AIParseError, nil}},
		{"every target failed", &llm.RouteError{Outcome: llm.RouteDegraded, Err: llm.ErrNoTarget},
			want{503, apierr.AIUnavailable, nil}, want{503, apierr.AIUnavailable, nil}},
	} {
		for by, w := range map[Author]want{ByGateway: tc.gateway, ByClient: tc.client} {
			e, ok := RouteError(tc.err, by)
			if !ok || e.Status() != w.status || e.Code != w.code || e.Fields["param"] != w.param {
				t.Errorf("%s, author %d: got %v %+v, want %d %s param %v", tc.name, by, ok, e, w.status, w.code, w.param)
			}
		}
	}
	if e, ok := RouteError(errors.New("the event could not be sent"), ByGateway); ok {
		t.Errorf("the turn's own failure: got %+v, want it left to the caller", e)
	}
}
