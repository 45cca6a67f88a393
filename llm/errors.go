package llm

import (
	"errors"

	"github.com/voxgate/voxgate/internal/aierr"
)

// ErrClosed is what a Stream's Next returns after Close.
var ErrClosed = errors.New("llm: stream closed")

// ErrUnreadableChunk is a chunk an adapter could not read that may have
// carried part of the answer: the attempt ends there (a
// PROVIDER_INVALID_RESPONSE), and a router continues the answer where a
// target can (docs/llm.md, "Continuation").
var ErrUnreadableChunk = errors.New("llm: an unreadable chunk that may have carried part of the answer")

// ErrClosing is the cause a Stream's Close (the router's or an adapter's)
// gives the context of the call it ends: the one value, so that an adapter
// whose context a router's Close ended reads it as ErrClosed, not as a
// failure of the provider.
var ErrClosing = errors.New("stream closed")

// Class is e's classification, whose APIError is what a client sees: the
// one mapping the voice side uses too.
func (e *Error) Class() aierr.Class {
	return aierr.Class{Code: e.Code, Retryable: e.Retryable, RetryAfter: e.RetryAfter}
}
