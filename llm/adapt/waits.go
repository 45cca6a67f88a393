// Package adapt is what the provider adapters (llm/openai, llm/anthropic,
// llm/gemini) share beneath the llm seam: their waits, the encoding of a
// request on a goroutine of its own, and Core, the Stream each returns
// around its own Decoder. The router never sees it.
package adapt

import (
	"fmt"
	"time"

	"github.com/voxgate/voxgate/internal/modelname"
	"github.com/voxgate/voxgate/llm"
)

// Waits are an adapter's timeouts: timeout for each chunk, firstChunk
// replacing it for the first chunk of the models it names (a family covers
// its dated snapshots).
type Waits struct {
	timeout    time.Duration
	firstChunk map[string]time.Duration
	answer     time.Duration // added to the first chunk's wait (Whole)
}

// NewWaits checks a provider's configured timeouts; a zero timeout is
// llm.DefaultTimeout.
func NewWaits(provider string, timeout time.Duration, firstChunk map[string]time.Duration) (Waits, error) {
	if timeout < 0 {
		return Waits{}, fmt.Errorf("llm: %s: timeout must not be negative, got %s", provider, timeout)
	}
	for m, d := range firstChunk {
		if m == "" || d <= 0 {
			return Waits{}, fmt.Errorf("llm: %s: first-chunk timeout of %q must be positive, got %s", provider, m, d)
		}
	}
	if timeout == 0 {
		timeout = llm.DefaultTimeout
	}
	return Waits{timeout: timeout, firstChunk: firstChunk}, nil
}

// FirstChunkTimeout is how long a call to model waits for its first chunk.
func (w Waits) FirstChunkTimeout(model string) time.Duration {
	if d, ok := modelname.Lookup(w.firstChunk, model); ok {
		return d + w.answer
	}
	return w.timeout + w.answer
}

// Whole is w for a whole call (llm.Request.Whole): its one response is the
// whole answer, so its first chunk is given llm.AnswerTime more, as the
// router's deadline gives it.
func (w Waits) Whole() Waits {
	w.answer = llm.AnswerTime
	return w
}

// EncodeWith runs an SDK's request encoder on a goroutine of its own. The
// encoders recurse through reflection past 16 KiB of stack, and a
// goroutine's stack only halves while less than a quarter of it is in
// use: encoded on the caller's goroutine, which then waits on the model
// for as long as the stream lasts, every open stream would hold a 32 KiB
// stack where 16 KiB do (docs/chat.md, "Idle streams"). It stays, rather
// than the SDKs' plain NewStreaming, because the 64 KB-per-idle-stream
// target fails without it (docs/llm.md).
func EncodeWith(marshal func() ([]byte, error)) (body []byte, err error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("request: encoding panicked: %v", v)
			}
		}()
		body, err = marshal()
	}()
	<-done
	return body, err
}
