package llm

import "errors"

// ErrClosed is what a Stream's Next returns after Close.
var ErrClosed = errors.New("llm: stream closed")
