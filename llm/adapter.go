package llm

import (
	"fmt"
	"net/http"
	"time"

	"github.com/voxgate/voxgate/internal/modelname"
)

// What the three adapters share on the way out: their waits, their
// transport and the way they encode a request. Their streams share
// streamCore.

// DefaultTimeout bounds the wait for a provider's first event, and for
// each event after it (DESIGN §11: 10 s per provider).
const DefaultTimeout = 10 * time.Second

// DefaultReasoningFirstChunk bounds the wait for a reasoning model's first
// chunk: such a model is silent while it reasons, for 30 s or more at high
// effort, and DefaultTimeout would cut healthy turns.
const DefaultReasoningFirstChunk = 60 * time.Second

// waits are an adapter's timeouts: timeout for each chunk, firstChunk
// replacing it for the first chunk of the models it names (a family covers
// its dated snapshots).
type waits struct {
	timeout    time.Duration
	firstChunk map[string]time.Duration
}

// newWaits checks a provider's configured timeouts; a zero timeout is
// DefaultTimeout.
func newWaits(provider string, timeout time.Duration, firstChunk map[string]time.Duration) (waits, error) {
	if timeout < 0 {
		return waits{}, fmt.Errorf("llm: %s: timeout must not be negative, got %s", provider, timeout)
	}
	for m, d := range firstChunk {
		if m == "" || d <= 0 {
			return waits{}, fmt.Errorf("llm: %s: first-chunk timeout of %q must be positive, got %s", provider, m, d)
		}
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	return waits{timeout: timeout, firstChunk: firstChunk}, nil
}

// FirstChunkTimeout is how long a call to model waits for its first chunk.
func (w waits) FirstChunkTimeout(model string) time.Duration {
	if d, ok := modelname.Lookup(w.firstChunk, model); ok {
		return d
	}
	return w.timeout
}

// NewTransport is the provider calls' own transport: the default one with
// room for many streams at once. Over HTTP/1.1 every stream in flight holds
// a connection, so a pool of the default two idle connections would close
// and redial most of them under load; and a held stream's connection keeps
// its read and write buffers for as long as the model takes, so they are
// sized for server-sent events (small chunks) rather than bulk transfer.
// Over HTTP/2 (the real API, through TLS) streams share connections and
// the buffers are the HTTP/2 framer's. A caller that brings its own
// HTTPClient (a proxy, a private CA) may start from it.
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0 // no limit across hosts; per host below
	t.MaxIdleConnsPerHost = 256
	t.ReadBufferSize = 1 << 10
	t.WriteBufferSize = 1 << 10
	return t
}

// encodeWith runs an SDK's request encoder on a goroutine of its own. The
// encoders recurse through reflection past 16 KiB of stack, and a
// goroutine's stack only halves while less than a quarter of it is in
// use: encoded on the caller's goroutine, which then waits on the model
// for as long as the stream lasts, every open stream would hold a 32 KiB
// stack where 16 KiB do (docs/chat.md, "Idle streams"). It stays, rather
// than the SDKs' plain NewStreaming, because the 64 KB-per-idle-stream
// target fails without it (docs/llm.md).
func encodeWith(marshal func() ([]byte, error)) (body []byte, err error) {
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
