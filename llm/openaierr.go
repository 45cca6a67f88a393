package llm

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/voxgate/voxgate/internal/aierr"
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

// classifyOpenAI maps an openai-go failure through the one classifier the
// voice side uses too (aierr.OpenAI; the table is in docs/llm.md), and
// keeps the HTTP status for the router's trace. A 400 refusal on safety
// grounds is told apart here: the router must propagate it, never fail it
// over, where any other 400 is a request the provider will not take.
func classifyOpenAI(provider string, err error) *Error {
	c := aierr.OpenAI(err, time.Now())
	e := &Error{Provider: provider, Code: c.Code, Retryable: c.Retryable, RetryAfter: c.RetryAfter, Err: err}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		e.Status = apiErr.StatusCode
		if apiErr.StatusCode == http.StatusBadRequest && contentPolicy(apiErr.Code) {
			e.Code, e.Retryable, e.RetryAfter = ProviderContentFilter, false, 0
		}
	}
	return e
}

// contentPolicy recognizes the codes OpenAI and OpenAI-compatible servers
// (Azure's among them) give a prompt refused by a safety system.
func contentPolicy(code string) bool {
	return code == "content_policy_violation" || code == "content_filter"
}
