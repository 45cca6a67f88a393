package llm

import (
	"context"
	"errors"
	"time"

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
// voice side uses too (aierr.OpenAI; the table is in docs/llm.md).
func classifyOpenAI(provider string, err error) *Error {
	c := aierr.OpenAI(err, time.Now())
	return &Error{Provider: provider, Code: c.Code, Retryable: c.Retryable, RetryAfter: c.RetryAfter, Err: err}
}
