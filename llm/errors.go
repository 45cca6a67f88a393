package llm

import (
	"errors"

	"github.com/voxgate/voxgate/internal/aierr"
)

// ErrClosed is what a Stream's Next returns after Close.
var ErrClosed = errors.New("llm: stream closed")

// Class is e's classification, whose APIError is what a client sees: the
// one mapping the voice side uses too.
func (e *Error) Class() aierr.Class {
	return aierr.Class{Code: e.Code, Retryable: e.Retryable, RetryAfter: e.RetryAfter}
}
